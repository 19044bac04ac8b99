"""Reports of a crawl that is not running, rebuilt from its run directory.

The statistics reports come from crawl.log (:meth:`crawler.stats.CrawlStats.replay_crawl_log`),
so they agree with it line for line. The processors, frontier and threads reports cannot be
rebuilt from logs: a finished crawl's own files are kept; otherwise (the crawl died, or never
wrote them) they are written from the last ``status.json`` the crawl published. Nothing here
opens the crawl's state (LevelDB).
"""

from __future__ import annotations

import calendar
import contextlib
import time
from pathlib import Path
from typing import Any

from crawler.logs.crawl_logs import LOG_NAMES
from crawler.logs.growing_file import complete_lines
from crawler.reports import CrawlSummary, render_reports
from crawler.reports.runtime import (
    basic_frontier_report,
    processors_report,
    threads_summary_report,
)
from crawler.reports.status import read_status
from crawler.seeds.seed_list import ADDED_SEEDS_FILE, SeedList, read_added_seeds
from crawler.stats import CrawlStats

_MACHINERY = ("processors-report.txt", "frontier-summary-report.txt", "threads-report.txt")


def run_seeds(run_dir: Path) -> tuple[str, ...]:
    """The seeds of a run: its order's seed list, ``action/done/*.seeds`` and the seeds that
    joined the running crawl (``seeds-added.txt``: seeds' redirects); () if unknown."""
    from crawler.order.errors import OrderError
    from crawler.order.loader import load_order
    from crawler.seeds.seed_list import load_seeds

    seeds = SeedList()
    with contextlib.suppress(OrderError, OSError):
        seeds = load_seeds(load_order(run_dir / "order.effective.yaml"))
    done = run_dir / "action" / "done"
    for path in sorted(done.glob("*.seeds")) if done.is_dir() else []:
        try:
            seeds.extend(path.read_text(encoding="utf-8", errors="replace").splitlines(), path.name)
        except OSError:
            continue
    seeds.extend(read_added_seeds(run_dir).uris, ADDED_SEEDS_FILE)
    return tuple(seeds.uris)


def log_span_ms(crawl_log: Path) -> float:
    """Milliseconds between the first and last complete crawl.log lines (0 if fewer than two)."""
    first = last = ""
    try:
        for line in complete_lines(crawl_log):
            first = first or line[:23]
            last = line[:23] or last
        start = calendar.timegm(time.strptime(first[:19], "%Y-%m-%dT%H:%M:%S"))
        end = calendar.timegm(time.strptime(last[:19], "%Y-%m-%dT%H:%M:%S"))
        return (end - start) * 1000 + int(last[20:23]) - int(first[20:23])
    except (OSError, ValueError):
        return 0.0


def status_text(doc: dict[str, Any] | None) -> str:
    if doc is None:
        return "Unknown - no status.json"
    state = str(doc.get("state", "?"))
    if state == "FINISHED":
        return str(doc.get("exit_status") or "Finished")
    if doc.get("died"):
        return "Finished - Abnormal exit from crawling"
    return f"{state} - Active"


def reports_from_run_dir(run_dir: Path, now_s: float | None = None) -> dict[str, str]:
    """Every report of the crawl in ``run_dir``, built without the crawl's process."""
    now_s = time.time() if now_s is None else now_s
    crawl_log = run_dir / "logs" / LOG_NAMES[0]
    stats = CrawlStats()
    stats.replay_crawl_log(crawl_log)
    totals = stats.totals()
    doc = read_status(run_dir)
    elapsed_ms = round(float(doc["elapsed_s"]) * 1000) if doc else log_span_ms(crawl_log)
    name = str(doc["job"]) if doc else run_dir.name
    summary = CrawlSummary(name, status_text(doc), elapsed_ms, run_seeds(run_dir))
    frontier: dict[str, Any] = dict(doc.get("frontier", {})) if doc else {}
    if doc:
        frontier.setdefault("discovered", doc.get("discovered", 0))
        frontier.setdefault("queued", doc.get("queued", 0))
    state = str(doc.get("state", "UNKNOWN")) if doc else "UNKNOWN"
    texts = render_reports(
        totals,
        summary,
        processors=processors_report(list(doc.get("processors", [])) if doc else [], now_s),
        frontier=basic_frontier_report(name, frontier, now_s),
        threads=threads_summary_report(dict(doc.get("threads", {})) if doc else {}, now_s, state),
    )
    if state == "FINISHED":
        for report in _MACHINERY:
            path = run_dir / "reports" / report
            if path.is_file():
                texts[report] = path.read_text(encoding="utf-8", errors="replace")
    return texts
