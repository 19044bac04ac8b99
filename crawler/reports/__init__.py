"""The end-of-crawl reports of ``RUN_DIR/reports/``, named and laid out as Heritrix's.

:func:`render_reports` formats all nine from the crawl statistics plus three texts about the
crawl's machinery (processors, frontier, threads); :func:`write_reports` writes them atomically.
The controller renders them from its live objects at the end of every crawl and on request;
:func:`crawler.reports.offline.reports_from_run_dir` rebuilds them from a run directory
(crawl.log and ``status.json``) when the crawl is not running.

What a running crawl publishes for its readers is here too: ``status.json``
(:mod:`crawler.reports.status`), and :mod:`crawler.reports.plot` draws progress-statistics.log
as a picture (``crawler report --plot``).
"""

from __future__ import annotations

import os
from pathlib import Path

from crawler.reports.statistics import (
    CrawlSummary,
    crawl_report,
    hosts_report,
    mimetype_report,
    responsecode_report,
    seeds_report,
    source_report,
)
from crawler.stats import StatsTotals

REPORT_NAMES = (
    "crawl-report.txt",
    "seeds-report.txt",
    "hosts-report.txt",
    "mimetype-report.txt",
    "responsecode-report.txt",
    "processors-report.txt",
    "frontier-summary-report.txt",
    "threads-report.txt",
    "source-report.txt",
)

__all__ = ["REPORT_NAMES", "CrawlSummary", "render_reports", "write_reports"]


def render_reports(
    totals: StatsTotals,
    summary: CrawlSummary,
    *,
    processors: str,
    frontier: str,
    threads: str,
) -> dict[str, str]:
    """Every report's file name and text."""
    return {
        "crawl-report.txt": crawl_report(totals, summary),
        "seeds-report.txt": seeds_report(totals, summary.seeds),
        "hosts-report.txt": hosts_report(totals),
        "mimetype-report.txt": mimetype_report(totals),
        "responsecode-report.txt": responsecode_report(totals),
        "processors-report.txt": processors,
        "frontier-summary-report.txt": frontier,
        "threads-report.txt": threads,
        "source-report.txt": source_report(totals),
    }


def write_reports(reports_dir: Path, texts: dict[str, str]) -> list[Path]:
    """Write each report atomically (temp file + rename); returns the paths written."""
    reports_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in texts.items():
        path = reports_dir / name
        tmp = reports_dir / f".{name}.tmp"
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
        written.append(path)
    return written
