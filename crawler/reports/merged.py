"""Crawl-wide reports of a distributed crawl, merged from every worker's run directory.

Each worker of ``crawler run ORDER --workers N`` (and each ``crawler worker`` joining from
another machine) writes its own crawl.log, status.json and reports. :func:`merged_reports`
replays all the workers' crawl.logs into one :class:`~crawler.stats.CrawlStats`, so the
statistics reports (crawl, seeds, hosts, mimetype, responsecode, source) count every URI any
worker logged, exactly once per line; the machinery reports are merged from the workers'
``status.json``: processors' counts summed line by line, threads summed, the frontier summary
taken from the most recent worker (its counts are already crawl-wide, read from Redis). A tenth
file, ``workers-report.txt``, lists each worker's share and the totals.

Workers that ran elsewhere are included by naming their run directories (copied or mounted
here): ``crawler report RUN_DIR --include DIR...``; a directory is either one worker's run
directory (it has ``logs/``) or another distributed run directory (its ``workers/*``).
Heritrix counterpart: none (a multi-crawler Heritrix setup reports per crawler).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from crawler.logs.crawl_logs import LOG_NAMES
from crawler.reports import CrawlSummary, render_reports
from crawler.reports.offline import log_span_ms, run_seeds, status_text
from crawler.reports.runtime import basic_frontier_report, processors_report, threads_summary_report
from crawler.reports.status import read_status
from crawler.seeds.seed_list import read_added_seeds
from crawler.stats import CrawlStats, StatsCounts

WORKERS_REPORT = "workers-report.txt"
_COUNTED = re.compile(r"^(\s*)(\d+)(\D.*)?$")


def worker_dirs(run_dir: Path, include: Sequence[Path] = ()) -> list[Path]:
    """The worker run directories of ``run_dir`` (``workers/*`` with ``logs/``), then those of
    each ``include`` (a worker's run directory or another distributed run directory)."""
    found: list[Path] = []
    for base in (run_dir, *include):
        if (base / "logs").is_dir() and base != run_dir:
            candidates = [base]
        else:
            candidates = sorted(p for p in (base / "workers").glob("*") if p.is_dir())
        for path in candidates:
            if (path / "logs").is_dir() and path.resolve() not in {f.resolve() for f in found}:
                found.append(path)
    return found


def merged_reports(
    run_dir: Path,
    include: Sequence[Path] = (),
    *,
    name: str | None = None,
    now_s: float | None = None,
) -> dict[str, str]:
    """Every report of the crawl whose workers' run directories are :func:`worker_dirs`
    (``run_dir`` and ``include``), plus :data:`WORKERS_REPORT`."""
    now_s = time.time() if now_s is None else now_s
    dirs = worker_dirs(run_dir, include)
    stats = CrawlStats()
    shares: list[tuple[Path, int, StatsCounts]] = []
    docs: list[dict[str, Any]] = []
    for wdir in dirs:
        log = wdir / "logs" / LOG_NAMES[0]
        own = CrawlStats()
        added = set(read_added_seeds(wdir).uris)
        lines = own.replay_crawl_log(log, added, also=stats)
        shares.append((wdir, lines, own.counts()))
        doc = read_status(wdir)
        if doc is not None:
            docs.append(doc)
    totals = stats.totals()
    latest = max(docs, key=lambda d: float(d.get("updated_s", 0)), default=None)
    crawl_name = name or (str(latest["job"]) if latest else run_dir.name)
    elapsed_ms = max(
        [round(float(d.get("elapsed_s", 0)) * 1000) for d in docs]
        + [log_span_ms(w / "logs" / LOG_NAMES[0]) for w in dirs if not read_status(w)],
        default=0,
    )
    seeds = dict.fromkeys(run_seeds(dirs[0]) if dirs else ())
    for wdir in dirs[1:]:
        seeds.update(dict.fromkeys(read_added_seeds(wdir).uris))
    summary = CrawlSummary(crawl_name, _crawl_status(docs, len(dirs)), elapsed_ms, tuple(seeds))
    frontier: dict[str, Any] = dict(latest.get("frontier", {})) if latest else {}
    if latest:
        frontier.setdefault("discovered", latest.get("discovered", 0))
        frontier.setdefault("queued", latest.get("queued", 0))
    states = {str(d.get("state", "UNKNOWN")) for d in docs}
    state = states.pop() if len(states) == 1 else "RUNNING"
    texts = render_reports(
        totals,
        summary,
        processors=processors_report(_merge_processors(docs), now_s),
        frontier=basic_frontier_report(crawl_name, frontier, now_s),
        threads=threads_summary_report(_merge_threads(docs), now_s, state),
    )
    texts[WORKERS_REPORT] = _workers_report(shares, run_dir)
    return texts


def _crawl_status(docs: list[dict[str, Any]], workers: int) -> str:
    """The crawl's status: a running or dead worker's if any, else the most common ending."""
    if not docs:
        return "Unknown - no status.json"
    texts = [status_text(d) for d in docs]
    unfinished = [t for d, t in zip(docs, texts, strict=True) if d.get("state") != "FINISHED"]
    if unfinished:
        return unfinished[0]
    if len(docs) < workers:
        return "Finished - some workers left no status.json"
    return Counter(texts).most_common(1)[0][0]


def _merge_processors(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The processors of the first worker, each line's leading count summed over the workers
    whose same line differs only in that count (other lines: the first worker's, then any
    other worker's that differ, marked with the worker's name)."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for doc in docs:
        for entry in doc.get("processors", []):
            key = (str(entry.get("chain")), str(entry.get("name")))
            lines = [str(line) for line in entry.get("lines", [])]
            have = merged.get(key)
            if have is None:
                merged[key] = dict(entry) | {"lines": lines}
                continue
            have["lines"] = _sum_lines(have["lines"], lines)
    return list(merged.values())


def _sum_lines(mine: list[str], theirs: list[str]) -> list[str]:
    out: list[str] = []
    for i, line in enumerate(mine):
        other = theirs[i] if i < len(theirs) else None
        a = _COUNTED.match(line)
        b = _COUNTED.match(other) if other is not None else None
        if a and b and a.group(1, 3) == b.group(1, 3):
            out.append(f"{a.group(1)}{int(a.group(2)) + int(b.group(2))}{a.group(3) or ''}")
        else:
            out.append(line)
            if other is not None and other != line:
                out.append(f"{other} (another worker)")
    return out + [f"{line} (another worker)" for line in theirs[len(mine) :]]


def _merge_threads(docs: list[dict[str, Any]]) -> dict[str, Any]:
    steps: Counter[str] = Counter()
    busy = total = 0
    for doc in docs:
        threads = doc.get("threads", {}) or {}
        busy += int(threads.get("busy", 0))
        total += int(threads.get("total", 0))
        steps.update({str(k): int(v) for k, v in (threads.get("steps", {}) or {}).items()})
    return {"busy": busy, "total": total, "steps": dict(steps)}


def _workers_report(shares: list[tuple[Path, int, StatsCounts]], run_dir: Path) -> str:
    """workers-report.txt: each worker's crawl.log lines, downloads and bytes, and the sum."""
    rows = [f"{'[lines]':>10} {'[downloaded]':>13} {'[bytes]':>14} [worker run directory]"]
    lines = downloaded = size = 0
    for wdir, count, c in shares:
        try:
            where = str(wdir.relative_to(run_dir))
        except ValueError:
            where = str(wdir)
        rows.append(f"{count:>10} {c.succeeded:>13} {c.bytes:>14} {where}")
        lines += count
        downloaded += c.succeeded
        size += c.bytes
    rows.append(f"{lines:>10} {downloaded:>13} {size:>14} total ({len(shares)} workers)")
    return "\n".join(rows) + "\n"
