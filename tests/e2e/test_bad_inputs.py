"""Bad input through the ``crawler`` command: each case runs ``.venv/bin/crawler`` and expects
no traceback, its exit code (2 for bad usage or an invalid order), a line on stderr naming the
file, key or URL at fault, and nothing of an earlier run lost or added to.

Every case fails before a crawl starts, so they run at once (a few processes at a time) in one
module fixture; the parametrised tests then check each one. Each order that ``crawler run``
refuses is also given to ``crawler validate``, which must refuse it the same way (both in this
process: ``crawler.cli.main``, so that walk takes seconds).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import socket
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from crawler.cli import main
from crawler.demo import SampleSite

ROOT = Path(__file__).resolve().parents[2]
CRAWLER = str(ROOT / ".venv" / "bin" / "crawler")
CONTACT = "https://example.org/about-our-crawler"

# The first test also runs the module fixture: a crawl and about 80 CLI processes, each bounded
# by its own timeout; with other test processes on the same cores that takes minutes.
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]


@dataclass(frozen=True)
class Case:
    """``crawler ARGS`` (``{w}`` is the work directory, ``{busy}`` a port in use) must exit
    ``code`` and print ``names`` on one stderr line; ``out_lacks`` must not be on stdout."""

    id: str
    args: tuple[str, ...]
    names: str
    code: int = 2
    out_lacks: str | None = None


# Orders `crawler run` refuses: (id, order file, --set overrides, what the error names).
ORDER_CASES: list[tuple[str, str, tuple[str, ...], str]] = [
    ("missing-file", "{w}/nowhere.yaml", (), "nowhere.yaml"),
    ("order-is-a-directory", "{w}/job", (), "{w}/job"),
    ("yaml-syntax", "{w}/syntax.yaml", (), "syntax.yaml:3"),
    ("not-a-mapping", "{w}/list.yaml", (), "must be a mapping"),
    ("not-utf8", "{w}/binary.yaml", (), "binary.yaml: cannot read: not UTF-8"),
    ("duplicate-key", "{w}/dup.yaml", (), "duplicate key 'name'"),
    ("extends-missing", "{w}/extends.yaml", (), "extends"),
    ("extends-cycle", "{w}/cycle.yaml", (), "extends cycle"),
    ("unknown-key", "{w}/job/order.yaml", ("toe_thread=3",), "toe_thread"),
    ("bad-value", "{w}/job/order.yaml", ("toe_threads=0",), "toe_threads"),
    ("set-without-value", "{w}/job/order.yaml", ("toe_threads",), "--set toe_threads"),
    ("set-bad-yaml", "{w}/job/order.yaml", ("toe_threads=[",), "--set toe_threads=["),
    ("set-bad-list-item", "{w}/job/order.yaml", ("chains.fetch.nope.enabled=false",), "nope"),
    ("robots-policy", "{w}/job/order.yaml", ("robots.policy=maybe",), "robots.policy"),
    ("no-contact", "{w}/job/order.yaml", ("operator.contact_url=null",), "operator.contact_url"),
    (
        "contact-not-a-url",
        "{w}/job/order.yaml",
        ("operator.contact_url=not a url",),
        "operator.contact_url",
    ),
    (
        "min-delay-over-max",
        "{w}/job/order.yaml",
        ("frontier.politeness.min_delay_ms=5000", "frontier.politeness.max_delay_ms=10"),
        "frontier.politeness.min_delay_ms",
    ),
    ("seeds-file-missing", "{w}/job/order.yaml", ("seeds.file=nope.txt",), "nope.txt"),
    ("seeds-file-is-a-directory", "{w}/job/order.yaml", ("seeds.file={w}/fresh",), "{w}/fresh"),
    ("no-seeds", "{w}/job/order.yaml", ("seeds.file=null",), "no seeds"),
    ("no-usable-seed-file", "{w}/job/order.yaml", ("seeds.file={w}/bad-seeds.txt",), "line 2"),
    (
        "no-usable-seed-url",
        "{w}/job/order.yaml",
        ("seeds.file=null", "seeds.urls=['ht!tp://x']"),
        "ht!tp",
    ),
    (
        "processor-class",
        "{w}/job/order.yaml",
        ("chains.extract.extractor_css.class=processors.extract.ExtractorCSSS",),
        "ExtractorCSSS",
    ),
    (
        "processor-param",
        "{w}/job/order.yaml",
        ("chains.fetch.fetch_http.params.timeout_s=-1",),
        "timeout_s",
    ),
    (
        "scope-rule",
        "{w}/job/order.yaml",
        ("scope.0.class=crawler.decide.NoSuchRule",),
        "NoSuchRule",
    ),
    (
        "frontier-store",
        "{w}/job/order.yaml",
        ("frontier.store.class=crawler.frontier.NoStore",),
        "frontier.store",
    ),
    ("history-import", "{w}/job/order.yaml", ("history.import_from=nowhere",), "nowhere"),
    (
        "dedup-collection",
        "{w}/job/order.yaml",
        ("dedup.collections=[{cdxj: nowhere.cdxj}]",),
        "dedup.collections[0].cdxj",
    ),
    ("chain-place", "{w}/place.yaml", (), "no_such_extractor"),
    ("chain-place-mixed", "{w}/mixed.yaml", (), "after: or before:"),
    (
        "sheet",
        "{w}/job/order.yaml",
        ("sheets=[{name: s, hosts: [x.org], settings: {nope: 1}}]",),
        "nope",
    ),
]


# The orders also given to `crawler run` as a process (all of them are given in-process to
# `run` and `validate` below: a process per order would take a minute).
THROUGH_A_PROCESS = {
    "missing-file",
    "yaml-syntax",
    "duplicate-key",
    "unknown-key",
    "set-bad-yaml",
    "not-utf8",
    "contact-not-a-url",
    "min-delay-over-max",
    "seeds-file-missing",
    "no-usable-seed-file",
    "processor-class",
    "chain-place",
    "history-import",
}


def _order_cases() -> list[Case]:
    cases = []
    for name, order, sets, names in ORDER_CASES:
        if name in THROUGH_A_PROCESS:
            flags = tuple(f for s in sets for f in ("--set", s))
            cases.append(Case(f"run-{name}", ("run", order, "--no-display", *flags), names))
    return cases


CASES: list[Case] = [
    *_order_cases(),
    Case("run-url-as-order", ("run", "http://example.com/"), "crawler crawl http://example.com"),
    Case(
        "run-dir-under-a-file",
        ("run", "{w}/job/order.yaml", "--run-dir", "{w}/file/run"),
        "{w}/file/run",
    ),
    Case(
        "run-dir-of-an-earlier-crawl",
        ("run", "{w}/job/order.yaml", "--run-dir", "{w}/job/latest"),
        "already holds a crawl",
    ),
    Case(
        "run-dir-with-a-file-in-the-way",
        ("run", "{w}/job/order.yaml", "--no-display", "--run-dir", "{w}/odd"),
        "cannot use the run directory {w}/odd",
        code=1,
    ),
    Case(
        "resume-run-dir-with-a-file-in-the-way",
        ("resume", "{w}/odd-run", "--no-display"),
        "cannot use the run directory {w}/odd-run",
        code=1,
    ),
    Case("run-job-dir-not-writable", ("run", "{w}/blocked/order.yaml"), "{w}/blocked/runs"),
    Case(
        "run-workers-not-a-number", ("run", "{w}/job/order.yaml", "--workers", "many"), "--workers"
    ),
    Case(
        "crawl-bad-url",
        ("crawl", "ht!tp://x", "--contact", CONTACT, "--jobs-dir", "{w}/jobs"),
        "ht!tp://x",
    ),
    Case(
        "crawl-ftp",
        ("crawl", "ftp://example.com/", "--contact", CONTACT, "--jobs-dir", "{w}/jobs"),
        "ftp://example.com/",
    ),
    Case(
        "crawl-no-host",
        ("crawl", "http://", "--contact", CONTACT, "--jobs-dir", "{w}/jobs"),
        "'http://'",
    ),
    Case(
        "crawl-bad-port",
        ("crawl", "http://example.com:99999/", "--contact", CONTACT, "--jobs-dir", "{w}/jobs"),
        "example.com:99999",
    ),
    Case(
        "crawl-space",
        ("crawl", "http://exa mple.com/", "--contact", CONTACT, "--jobs-dir", "{w}/jobs"),
        "exa mple.com",
    ),
    Case(
        "crawl-no-contact", ("crawl", "http://example.com/", "--jobs-dir", "{w}/jobs"), "--contact"
    ),
    Case(
        "crawl-contact-not-a-url",
        ("crawl", "http://example.com/", "--contact", "me@example.org", "--jobs-dir", "{w}/jobs"),
        "me@example.org",
    ),
    Case(
        "crawl-jobs-dir-under-a-file",
        ("crawl", "http://example.com/", "--contact", CONTACT, "--jobs-dir", "{w}/file/jobs"),
        "{w}/file/jobs",
    ),
    Case(
        "crawl-bad-set",
        (
            "crawl",
            "http://example.com/",
            "--contact",
            CONTACT,
            "--jobs-dir",
            "{w}/jobs",
            "--set",
            "toe_threads=0",
        ),
        "toe_threads",
    ),
    Case("resume-nowhere", ("resume", "{w}/nowhere"), "{w}/nowhere"),
    Case("resume-job-without-runs", ("resume", "{w}/fresh"), "{w}/fresh"),
    Case("resume-bad-set", ("resume", "{w}/job", "--set", "toe_threads=0"), "toe_threads"),
    Case("demo-pages", ("demo", "--pages", "-5"), "--pages -5"),
    Case("demo-port-range", ("demo", "--port", "70000"), "--port 70000"),
    Case("demo-port-busy", ("demo", "--port", "{busy}"), "--port {busy}"),
    Case(
        "demo-bad-set",
        ("demo", "--port", "0", "--pages", "20", "--set", "toe_threads=0"),
        "toe_threads",
    ),
    Case(
        "replay-port-busy",
        ("replay", "{w}/job", "--bind", "127.0.0.1:{busy}"),
        "127.0.0.1:{busy}",
        out_lacks="replay prefix",
    ),
    Case("replay-bad-bind", ("replay", "{w}/job", "--bind", "nonsense"), "nonsense"),
    Case("replay-nowhere", ("replay", "{w}/nowhere"), "{w}/nowhere"),
    Case("status-nowhere", ("status", "{w}/nowhere"), "{w}/nowhere"),
    Case("pause-nowhere", ("pause", "{w}/nowhere"), "{w}/nowhere"),
    Case("terminate-not-a-run", ("terminate", "{w}/fresh"), "{w}/fresh"),
    Case("block-bad-regex", ("block", "{w}/job", "(unclosed"), "(unclosed"),
    Case("block-nowhere", ("block", "{w}/nowhere", "x"), "{w}/nowhere"),
    Case("sheets-not-utf8", ("sheets", "{w}/job", "{w}/binary-sheets.yaml"), "not UTF-8"),
    Case("sheets-missing-file", ("sheets", "{w}/job", "{w}/nowhere.yaml"), "nowhere.yaml"),
    Case("report-nowhere", ("report", "{w}/nowhere"), "{w}/nowhere"),
    Case("index-nowhere", ("index", "{w}/nowhere"), "{w}/nowhere"),
    Case("show-processor-missing", ("show-processor", "processors.extract.NoSuch"), "NoSuch"),
    Case("show-processor-not-dotted", ("show-processor", "Nothing"), "Nothing"),
    Case("console-bad-bind", ("console", "--bind", "nonsense"), "nonsense"),
    Case("unknown-command", ("crawl-everything",), "crawl-everything"),
]


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str


def _tree(path: Path) -> dict[str, str]:
    """Every file and link under ``path``: its digest or target."""
    tree = {}
    for item in sorted(path.rglob("*")):
        key = str(item.relative_to(path))
        if item.is_symlink():
            tree[key] = "-> " + os.readlink(item)
        elif item.is_file():
            tree[key] = hashlib.sha1(item.read_bytes()).hexdigest()
    return tree


def _fill(text: str, work: Path, busy: int) -> str:
    return text.replace("{w}", str(work)).replace("{busy}", str(busy))


def _write_orders(w: Path) -> None:
    (w / "syntax.yaml").write_text("name: x\nseeds: [unclosed\n")
    (w / "list.yaml").write_text("- name\n- x\n")
    (w / "binary.yaml").write_bytes(b"name: \xff\xfe\n")
    (w / "binary-sheets.yaml").write_bytes(b"\xff\xfe")
    (w / "dup.yaml").write_text("name: a\nname: b\n")
    (w / "extends.yaml").write_text("extends: nowhere.yaml\nname: x\n")
    (w / "cycle.yaml").write_text("extends: cycle2.yaml\n")
    (w / "cycle2.yaml").write_text("extends: cycle.yaml\n")
    job = f"extends: {w / 'job' / 'order.yaml'}\n"
    (w / "place.yaml").write_text(
        job + "chains:\n  extract:\n    - {after: no_such_extractor, name: t, "
        "class: processors.extract.ExtractorCSS}\n"
    )
    (w / "mixed.yaml").write_text(
        job + "chains:\n  extract:\n    - {after: extractor_html, name: t, "
        "class: processors.extract.ExtractorCSS}\n"
        "    - {name: u, class: processors.extract.ExtractorXML}\n"
    )
    (w / "bad-seeds.txt").write_text("# no usable seed\nht!tp://x\nhttp://[::1\n")
    (w / "file").write_text("a regular file\n")
    blocked = w / "blocked"  # a job whose runs/ cannot be made: a file is in the way
    blocked.mkdir()
    shutil.copy(w / "job" / "order.yaml", blocked / "order.yaml")
    shutil.copy(w / "job" / "seeds.txt", blocked / "seeds.txt")
    (blocked / "runs").write_text("not a directory\n")
    fresh = w / "fresh"
    fresh.mkdir()
    shutil.copy(w / "job" / "order.yaml", fresh / "order.yaml")


@dataclass(frozen=True)
class Outcomes:
    """The work directory, the busy port and each case's outcome."""

    work: Path
    busy: int
    of: dict[str, Outcome]
    job_before: dict[str, str]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Outcomes:
    w = tmp_path_factory.mktemp("bad-inputs")
    shutil.copytree(ROOT / "jobs" / "example", w / "job")
    env = {k: v for k, v in os.environ.items() if k not in ("CRAWLER_CONTACT_URL", "PYTHONPATH")}
    cwd = w / "cwd"
    cwd.mkdir()
    with SampleSite(pages_per_host=20) as site:  # an earlier run, which nothing may spoil
        seeds = f"seeds.urls={site.base_urls[:1]!r}"
        earlier = subprocess.run(
            [
                CRAWLER,
                "run",
                str(w / "job" / "order.yaml"),
                "--no-display",
                "--set",
                seeds,
                "--set",
                "seeds.file=null",
                "--set",
                "logging.console=false",
            ],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert earlier.returncode == 0, earlier.stderr
    _write_orders(w)
    shutil.copytree((w / "job" / "latest").resolve(), w / "odd-run")
    for run_dir in (w / "odd", w / "odd-run"):  # logs/ cannot be made: a file is in the way
        shutil.rmtree(run_dir / "logs", ignore_errors=True)
        run_dir.mkdir(exist_ok=True)
        (run_dir / "logs").write_text("not a directory\n")
    before = _tree(w / "job")
    with socket.socket() as busy_socket:
        busy_socket.bind(("127.0.0.1", 0))
        busy_socket.listen()
        busy = busy_socket.getsockname()[1]

        def run(case: Case) -> Outcome:
            args = [_fill(a, w, busy) for a in case.args]
            proc = subprocess.run(
                [CRAWLER, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=90
            )
            return Outcome(proc.returncode, proc.stdout, proc.stderr)

        with ThreadPoolExecutor(max_workers=4) as pool:
            results = dict(zip([c.id for c in CASES], pool.map(run, CASES), strict=True))
    return Outcomes(w, busy, results, before)


def test_there_are_at_least_40_bad_inputs() -> None:
    assert len(CASES) >= 40
    assert len({case.id for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_input_is_one_clear_line(case: Case, outcomes: Outcomes) -> None:
    result = outcomes.of[case.id]
    assert "Traceback" not in result.err and "Traceback" not in result.out, result.err
    assert result.code == case.code, result.err
    names = _fill(case.names, outcomes.work, outcomes.busy)
    assert any(names in line for line in result.err.splitlines()), result.err
    if case.out_lacks is not None:
        assert case.out_lacks not in result.out


def test_nothing_of_an_earlier_run_is_lost_and_no_run_is_left(outcomes: Outcomes) -> None:
    w = outcomes.work
    assert _tree(w / "job") == outcomes.job_before  # files, digests, the latest link
    assert not (w / "runs").exists()  # the orders beside the job made no run
    assert not (w / "jobs").exists() or not any((w / "jobs").iterdir())  # crawl left no job
    assert not (w / "cwd" / "jobs").exists()  # demo made no run
    assert not (w / "fresh" / "runs").exists() and (w / "blocked" / "runs").is_file()


def _main(args: list[str]) -> Outcome:
    """``crawler ARGS`` in this process (``crawler.cli.main``), its output captured."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return Outcome(code, out.getvalue(), err.getvalue())


@pytest.mark.parametrize("order_case", ORDER_CASES, ids=[c[0] for c in ORDER_CASES])
def test_validate_refuses_every_order_run_refuses(
    order_case: tuple[str, str, tuple[str, ...], str], outcomes: Outcomes
) -> None:
    _, order, sets, names = order_case
    w = outcomes.work
    flags = [f for s in sets for f in ("--set", _fill(s, w, 0))]
    run = _main(["run", _fill(order, w, 0), "--no-display", *flags])
    validate = _main(["validate", _fill(order, w, 0), *flags])
    for outcome in (run, validate):
        assert outcome.code == 2, outcome.err
        assert any(_fill(names, w, 0) in line for line in outcome.err.splitlines()), outcome.err
    assert validate.out == ""  # no effective order printed for a refused one
    assert run.out == ""  # refused before a run directory was made (it would be printed)
    assert _tree(w / "job") == outcomes.job_before
    assert not (w / "runs").exists()
