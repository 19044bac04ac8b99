"""What a ``crawler`` command imports: start-up time a user notices on every command.

Each test runs the command in a fresh interpreter and then lists ``sys.modules``. No timings,
so the tests are deterministic on any machine: a module that is not imported costs nothing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from crawler.cli.verb_table import VERBS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
WEB_STACK = frozenset({"fastapi", "starlette", "uvicorn", "crawler.console.app"})
"""The web console's modules: the console runs in a process of its own, never in the crawl's."""
CRAWL_STACK = frozenset(
    {"pydantic", "yaml", "structlog", "rich", "crawler.order", "crawler.processor"}
)
"""What a crawl needs and ``crawler --help`` does not."""
VERB_MODULES = frozenset(verb.module for verb in VERBS.values())
"""Every verb's module (:mod:`crawler.cli.verb_table`): a command imports its own only."""

_LIST_MODULES = """
import sys
from crawler.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print("modules:", *sorted(sys.modules))
sys.exit(code)
"""

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


def modules_after(*argv: str) -> set[str]:
    """The modules loaded once ``crawler ARGV`` has returned (it must succeed)."""
    proc = subprocess.run(
        [sys.executable, "-c", _LIST_MODULES, *argv],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    last = proc.stdout.splitlines()[-1].split()
    assert last[0] == "modules:", proc.stdout
    return set(last[1:])


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, set[str]]:
    """A plain ``crawler run`` (one seed on a closed port, not retried, so it ends at once;
    an order without seeds is refused): its run directory and modules."""
    run_dir = tmp_path_factory.mktemp("startup") / "run"
    loaded = modules_after(
        "run",
        str(EXAMPLE),
        "--no-display",
        "--run-dir",
        str(run_dir),
        "--set",
        "seeds.file=null",
        "--set",
        "seeds.urls=['http://127.0.0.1:9/']",
        "--set",
        "robots.policy=ignore",
        "--set",
        "frontier.retries.max_retries=0",
        "--set",
        "logging.console=false",
    )
    return run_dir, loaded


def test_a_crawl_without_console_leaves_the_web_stack_unimported(
    crawl: tuple[Path, set[str]],
) -> None:
    run_dir, loaded = crawl
    assert "crawler.control.controller" in loaded
    assert (run_dir / "logs" / "crawl.log").exists()
    assert not WEB_STACK & loaded
    assert VERB_MODULES & loaded == {"crawler.cli.commands.run"}


def test_status_of_a_single_process_run_leaves_the_crawl_and_redis_unimported(
    crawl: tuple[Path, set[str]],
) -> None:
    run_dir, _ = crawl
    loaded = modules_after("status", str(run_dir))
    assert not {"crawler.distributed", "crawler.control.controller", "redis"} & loaded
    assert VERB_MODULES & loaded == {"crawler.cli.commands.status"}


def test_help_imports_nothing_of_the_crawl_nor_any_verb() -> None:
    loaded = modules_after("--help")
    assert not CRAWL_STACK & loaded
    assert not VERB_MODULES & loaded
    assert "crawler.cli.verb_table" in loaded


def test_a_verbs_help_imports_that_verb_only() -> None:
    loaded = modules_after("wacz", "--help")
    assert VERB_MODULES & loaded == {"crawler.cli.commands.wacz"}
    assert not CRAWL_STACK & loaded
