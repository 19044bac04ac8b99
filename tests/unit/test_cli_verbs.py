"""The ``crawler`` command's verbs: the table in :mod:`crawler.cli.verb_table`, one module per
verb in ``crawler/cli/commands/``, each verb's ``--help``, and the exit codes that
docs/commands.md states.

Everything runs in this process through :func:`crawler.cli.main` (argparse only: no crawl).
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from crawler.cli import main
from crawler.cli.verb_table import VERBS
from crawler.exit_code import ExitCode

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ROOT / "crawler" / "cli" / "commands"

pytestmark = pytest.mark.timeout(60)

PINNED_OPTIONS: dict[str, tuple[str, ...]] = {
    "init": ("job_dir", "--seed URL", "--contact URL"),
    "run": (
        "order",
        "--set KEY=VALUE",
        "--run-dir",
        "--no-display",
        "--metrics-port PORT",
        "--console-bind",
        "--workers N",
    ),
    "worker": (
        "order",
        "--redis URL",
        "--set",
        "--run-dir",
        "--worker-id",
        "--crawl-id N",
        "--metrics-port PORT",
    ),
    "resume": ("run_dir", "--set", "--no-display"),
    "validate": ("order", "--set"),
    "show-processor": ("CLASS",),
    "demo": ("--port", "--pages", "--run-dir", "--set", "--no-display"),
    "console": ("--bind HOST:PORT", "--jobs-dir DIR", "--run RUN_DIR", "--no-schedule"),
    "status": ("run_dir", "--json"),
    "pause": ("run_dir", "--wait-s"),
    "unpause": ("run_dir", "--wait-s"),
    "terminate": ("run_dir", "--wait-s"),
    "block": ("run_dir", "regex", "--wait-s"),
    "sheets": ("run_dir", "file", "--wait-s"),
    "report": ("run_dir", "--plot", "--wait-s", "--include DIR"),
    "index": ("run_dir", "--force"),
    "wacz": ("run_dir", "-o FILE.wacz, --output FILE.wacz", "--runs {latest,all}"),
    "replay": ("source", "--bind HOST:PORT", "--include RUN_DIR"),
    "crawl": (
        "URL",
        "--contact URL",
        "--set",
        "--wacz FILE",
        "--jobs-dir DIR",
        "--no-display",
        "--metrics-port PORT",
    ),
    "schedule": ("JOBS_DIR",),
    "profile": ("ACTION",),
}
"""Each verb's arguments as its ``--help`` shows them: a verb losing one fails here."""


def _help(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as exited:
        main(list(argv))
    assert exited.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("verb", sorted(PINNED_OPTIONS))
def test_each_verbs_help_runs_and_lists_its_arguments(
    verb: str, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _help(capsys, verb, "--help")
    assert text.startswith(f"usage: crawler {verb} ")
    missing = [opt for opt in PINNED_OPTIONS[verb] if opt not in text]
    assert missing == []


def test_the_help_lists_every_verb_of_the_table_in_its_order(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert set(PINNED_OPTIONS) == set(VERBS)
    text = " ".join(_help(capsys, "--help").split())  # help lines are wrapped
    where = [text.index(f" {name} {verb.help.split()[0]}") for name, verb in VERBS.items()]
    assert where == sorted(where)


def test_the_table_names_every_verb_module_once_and_each_has_add_arguments_and_run() -> None:
    on_disk = {f"crawler.cli.commands.{p.stem}" for p in COMMANDS.glob("*.py")} - {
        "crawler.cli.commands.__init__"
    }
    named = [verb.module for verb in VERBS.values()]
    assert sorted(named) == sorted(on_disk)
    for module_name in named:
        module = importlib.import_module(module_name)
        assert callable(getattr(module, "add_arguments", None)), module_name
        assert callable(getattr(module, "run", None)), module_name


def _imported(path: Path) -> set[str]:
    """The modules ``path`` imports (``from a import b`` counts as ``a`` and ``a.b``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_no_import_between_the_dispatcher_and_a_verb_nor_between_verbs() -> None:
    verbs = {verb.module for verb in VERBS.values()}
    assert not {m for m in _imported(ROOT / "crawler" / "cli" / "cli.py") if "commands" in m}
    for path in sorted(COMMANDS.glob("*.py")):
        own = f"crawler.cli.commands.{path.stem}"
        wrong = _imported(path) & (verbs - {own} | {"crawler.cli.cli", "crawler.cli.main"})
        assert wrong == set(), path.name


def test_an_unknown_verb_is_a_usage_error_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["crawlz", "x"])
    assert exited.value.code == ExitCode.USAGE
    assert "invalid choice: 'crawlz'" in capsys.readouterr().err


def test_a_verb_returns_its_exit_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", str(tmp_path)]) == ExitCode.USAGE
    assert f"{tmp_path} is not a crawl's run directory" in capsys.readouterr().err


def test_the_docs_state_the_exit_codes_of_the_enum() -> None:
    page = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    start = page.index("Exit codes (`ExitCode`")
    paragraph = page[start:].split("\n\n", 1)[0]
    stated = re.findall(r"(\d)\s+`([A-Z]+)`", paragraph)
    assert stated == [(str(code.value), code.name) for code in ExitCode]


def test_init_on_a_path_that_cannot_be_a_job_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = tmp_path / "a-file"
    taken.write_text("not a directory")
    assert main(["init", str(taken)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"{taken}: cannot make a job there") and "\n" not in err
    assert taken.read_text() == "not a directory"  # nothing lost


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    from crawler import __version__

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"crawler {__version__}\n"
