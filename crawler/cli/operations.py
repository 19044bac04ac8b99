"""The operator's commands on a run directory: ``crawler status``, ``pause``, ``unpause``,
``terminate``, ``block`` and ``report``.

They never open the crawl's state (LevelDB is single-process): they read what the crawl publishes
(``status.json``, logs, reports) and steer it by dropping files into ``action/``
(:mod:`crawler.control.steering`), then wait (up to ``wait_s``) until the crawl has taken them in
and says so in ``status.json``. Each returns the command's :class:`~crawler.exit_code.ExitCode`:
OK done, FAILED the crawl is not running or did not answer, USAGE bad usage (a directory that is
no crawl's run directory, say). The verbs' arguments are in :mod:`crawler.cli.commands`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, TextIO

from crawler.cli.display import format_status
from crawler.cli.run_dirs import resolve_run_dir
from crawler.control.steering import action_taken, drop_action, valid_regex
from crawler.exit_code import ExitCode
from crawler.reports import write_reports
from crawler.reports.offline import reports_from_run_dir
from crawler.reports.status import is_running, read_status
from crawler.schedule.schedule_state import JobScheduleState, job_dir_of
from crawler.stats import CrawlStats

_EXPECTED = {
    "pause": ("PAUSED",),
    "unpause": ("RUNNING", "STOPPING", "FINISHED"),
    "terminate": ("FINISHED",),
}
_POLL_S = 0.1


def _wait_for(run_dir: Path, name: str, states: tuple[str, ...], wait_s: float) -> str | None:
    """Wait until action ``name`` was taken in and the state is one of ``states``; the last
    state seen (None if the action was not taken in)."""
    deadline = time.monotonic() + wait_s
    taken = False
    state: str | None = None
    while True:
        taken = taken or action_taken(run_dir, name)
        doc = read_status(run_dir)
        state = str(doc.get("state")) if doc else None
        if taken and (state in states or not is_running(doc)):
            return state
        if time.monotonic() >= deadline:
            return state if taken else None
        time.sleep(_POLL_S)


def _not_running(run_dir: Path, doc: dict[str, Any] | None, err: TextIO) -> ExitCode:
    """Say why the crawl in ``run_dir`` cannot be steered: USAGE when ``run_dir`` is no crawl's
    run directory, else FAILED."""
    if doc is None and not (run_dir / "logs").is_dir():
        print(f"{run_dir} is not a crawl's run directory (no status.json, no logs/)", file=err)
        return ExitCode.USAGE
    if doc is None:
        print(f"{run_dir}: no status.json — the crawl never started", file=err)
    elif doc.get("died"):
        print(f"{run_dir}: the crawl died (process {doc.get('pid')} is gone)", file=err)
    else:
        print(f"{run_dir}: the crawl is not running (state {doc.get('state')})", file=err)
    return ExitCode.FAILED


def cmd_control(kind: str, run_dir: Path, wait_s: float, out: TextIO, err: TextIO) -> int:
    """``crawler pause|unpause|terminate RUN_DIR``."""
    run_dir = resolve_run_dir(run_dir)
    doc = read_status(run_dir)
    if not is_running(doc):
        return _not_running(run_dir, doc, err)
    name = drop_action(run_dir, kind)
    state = _wait_for(run_dir, name, _EXPECTED[kind], wait_s)
    if state is None:
        print(f"the crawl did not take in action/{name} within {wait_s:g}s", file=err)
        return ExitCode.FAILED
    print(f"{kind}: crawl is {state}", file=out)
    if state not in _EXPECTED[kind]:
        print(
            f"  (not yet {' or '.join(_EXPECTED[kind])}: URIs in process are finishing)", file=out
        )
    return ExitCode.OK


def cmd_block(run_dir: Path, pattern: str, wait_s: float, out: TextIO, err: TextIO) -> int:
    """``crawler block RUN_DIR REGEX``: queued matching URIs end -5001, new ones are refused."""
    problem = valid_regex(pattern)
    if problem is not None:
        print(problem, file=err)
        return ExitCode.USAGE
    run_dir = resolve_run_dir(run_dir)
    if not (run_dir / "action").is_dir():
        print(f"{run_dir} is not a crawl's run directory (no action/)", file=err)
        return ExitCode.USAGE
    doc = read_status(run_dir)
    name = drop_action(run_dir, "block", pattern + "\n")
    if not is_running(doc):
        print(f"the crawl is not running: the rule applies when it is resumed ({name})", file=out)
        return ExitCode.OK
    if _wait_for(run_dir, name, ("RUNNING", "PAUSING", "PAUSED", "STOPPING"), wait_s) is None:
        print(f"the crawl did not take in action/{name} within {wait_s:g}s", file=err)
        return ExitCode.FAILED
    print(f"block rule active: {pattern}", file=out)
    return ExitCode.OK


def cmd_report(run_dir: Path, plot: bool, wait_s: float, out: TextIO, err: TextIO) -> int:
    """``crawler report RUN_DIR [--plot]``: write every report, print the crawl report."""
    run_dir = resolve_run_dir(run_dir)
    if not (run_dir / "logs").is_dir():
        print(f"{run_dir} is not a crawl's run directory (no logs/)", file=err)
        return ExitCode.USAGE
    doc = read_status(run_dir)
    written_by_crawl = False
    if doc is not None and is_running(doc):
        name = drop_action(run_dir, "report")
        states = (str(doc.get("state")),)
        written_by_crawl = _wait_for(run_dir, name, states, wait_s) is not None
        if not written_by_crawl:
            print("the crawl did not answer; reports rebuilt from its logs", file=err)
    if not written_by_crawl:
        write_reports(run_dir / "reports", reports_from_run_dir(run_dir))
    out.write((run_dir / "reports" / "crawl-report.txt").read_text(encoding="utf-8"))
    if plot:
        from crawler.reports.plot import plot_progress

        try:
            png = plot_progress(
                run_dir / "logs" / "progress-statistics.log", run_dir / "reports" / "progress.png"
            )
        except (OSError, ValueError) as exc:
            print(f"no plot: {exc}", file=err)
            return ExitCode.FAILED
        print(f"plot: {png}", file=out)
    return ExitCode.OK


def cmd_status(run_dir: Path, as_json: bool, out: TextIO, err: TextIO) -> int:
    """``crawler status RUN_DIR [--json]``; a scheduled job's next run too."""
    schedule = _schedule_of(run_dir)
    run_dir = resolve_run_dir(run_dir)
    doc = read_status(run_dir)
    if doc is None:
        crawl_log = run_dir / "logs" / "crawl.log"
        if not crawl_log.exists() and schedule is not None:  # scheduled, not run yet
            text = json.dumps({"schedule": schedule.summary()}, indent=2)
            out.write(text + "\n" if as_json else "\n".join(schedule.lines()) + "\n")
            return ExitCode.OK
        if not crawl_log.exists():
            print(
                f"{run_dir} is not a crawl's run directory (no status.json, no crawl.log)", file=err
            )
            return ExitCode.USAGE
        stats = CrawlStats()
        stats.replay_crawl_log(crawl_log)
        c = stats.counts()
        doc = {
            "run_dir": str(run_dir),
            "state": "UNKNOWN",
            "downloaded": c.succeeded,
            "failed": c.failed,
            "disregarded": c.disregarded,
            "finished": c.finished,
            "bytes": c.bytes,
        }
    if as_json:
        if schedule is not None:
            doc["schedule"] = schedule.summary()
        out.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(format_status(doc))
        if schedule is not None:
            out.write("\n".join(schedule.lines()) + "\n")
    return ExitCode.OK


def _schedule_of(path: Path) -> JobScheduleState | None:
    """The schedule state of the job ``path`` is (or whose run it is), if it is scheduled."""
    job_dir = job_dir_of(path)
    return JobScheduleState.load(job_dir) if job_dir is not None else None
