"""The reports about the crawl's machinery: processors, toe threads, and a basic frontier
summary (used until, or when, the frontier's own ``frontier_summary_report`` is unavailable).

Live reports are built from the objects themselves; :func:`processor_entries` and
:func:`frontier_entry` turn them into plain data that ``status.json`` carries, so a report of a
crawl that is no longer running can still be written. Heritrix counterparts:
``ProcessorChain.reportTo``, ``ToePool.reportTo`` / ``ToeThread.reportTo``,
``WorkQueueFrontier.reportTo``.
"""

from __future__ import annotations

import sys
import time
import traceback
from typing import TYPE_CHECKING, Any

from crawler.reports.formats import date12, format_duration_ms

if TYPE_CHECKING:
    from crawler.chain import ProcessorChains
    from crawler.control.toepool import ToePool
    from crawler.frontier.frontier import FrontierSnapshot

_CHAIN_TITLES = {
    "pre": "PreChain",
    "fetch": "FetchChain",
    "extract": "ExtractChain",
    "write": "WriteChain",
    "post": "PostChain",
}


def processor_entries(chains: ProcessorChains) -> list[dict[str, Any]]:
    """Every processor's chain, class, name and ``report()`` lines (a failing report() is
    reported as such, never raised)."""
    entries = []
    for chain in chains.chains:
        for proc in chain:
            try:
                lines = [str(line) for line in proc.report()]
            except Exception as exc:  # noqa: BLE001 - one broken report must not hide the rest
                lines = [f"  report failed: {type(exc).__name__}: {exc}"]
            cls = type(proc)
            entries.append(
                {
                    "chain": chain.name,
                    "class": f"{cls.__module__}.{cls.__qualname__}",
                    "name": proc.name,
                    "lines": lines,
                }
            )
    return entries


def processors_report(entries: list[dict[str, Any]], now_s: float) -> str:
    """processors-report.txt: per chain a header, then ``Processor: <class>`` and its lines."""
    out: list[str] = []
    for chain, title in _CHAIN_TITLES.items():
        procs = [e for e in entries if e["chain"] == chain]
        out.append(f"{title} - Processors report - {date12(now_s)}")
        out.append(f"  Number of Processors: {len(procs)}")
        out.append("")
        for entry in procs:
            out.append(f"Processor: {entry['class']}")
            out.extend(entry["lines"])
            out.append("")
    return "\n".join(out) + "\n"


def threads_report(pool: ToePool | None, now_s: float, *, stacks: bool = True) -> str:
    """threads-report.txt: each ToeThread's URI, processor, step and (if busy) its stack."""
    threads = pool.threads if pool is not None else []
    active = sum(1 for t in threads if t.current is not None)
    out = [
        f"Toe threads report - {date12(now_s)}",
        f" Number of toe threads in pool: {len(threads)} ({active} active)",
    ]
    frames = sys._current_frames() if stacks else {}
    mono = time.monotonic()
    for t in threads:
        curi = t.current
        step_for = format_duration_ms((mono - t.step_since) * 1000)
        out.append(f"[ToeThread #{t.serial}: {curi.uri if curi is not None else ''}")
        if curi is None:
            out.append(" -no CrawlURI- ")
            out.append(f"    WAITING for {step_for}")
        else:
            out.append(f" {curi.uri} {curi.fetch_attempts} attempts")
            out.append(f"    in processor: {t.processor or '-'}")
            out.append(f"    ACTIVE for {step_for}")
        out.append(f"    step: {t.step} for {step_for}")
        out.append(f"    {'alive' if t.is_alive() else 'terminated'}, {t.uris_processed} URIs done")
        frame = frames.get(t.ident or -1)
        if curi is not None and frame is not None:
            out.extend("    " + line.rstrip() for line in traceback.format_stack(frame))
        out.append("]")
    return "\n".join(out) + "\n"


def threads_summary_report(threads: dict[str, Any], now_s: float, state: str) -> str:
    """threads-report.txt for a crawl that is not running: the last published thread counts."""
    steps = threads.get("steps", {})
    out = [
        f"Toe threads report - {date12(now_s)}",
        f" Number of toe threads in pool: {threads.get('total', 0)} "
        f"({threads.get('busy', 0)} active)",
        f" (the crawl is not running ({state}); last published thread steps:)",
    ]
    out.extend(f" {step}: {count}" for step, count in sorted(steps.items()))
    return "\n".join(out) + "\n"


def frontier_entry(snap: FrontierSnapshot) -> dict[str, Any]:
    """The snapshot as plain data (also published in ``status.json``)."""
    return {
        "discovered": snap.discovered,
        "queued": snap.queued,
        "in_process": snap.in_process,
        "succeeded": snap.succeeded,
        "failed": snap.failed,
        "disregarded": snap.disregarded,
        "queues": dict(snap.queues),
        "total_queues": snap.total_queues,
        "max_depth": snap.max_depth,
        "longest": [list(kv) for kv in snap.longest],
    }


def basic_frontier_report(job_name: str, frontier: dict[str, Any], now_s: float) -> str:
    """frontier-summary-report.txt from snapshot counts: STATS, QUEUES, longest queues."""
    q = frontier.get("queues", {})
    succeeded = int(frontier.get("succeeded", 0))
    failed = int(frontier.get("failed", 0))
    disregarded = int(frontier.get("disregarded", 0))
    in_process, ready, snoozed = q.get("in_process", 0), q.get("ready", 0), q.get("snoozed", 0)
    out = [
        f"Frontier report - {date12(now_s)}",
        f" Job being crawled: {job_name}",
        "",
        " -----===== STATS =====-----",
        f" Discovered:    {frontier.get('discovered', 0)}",
        f" Queued:        {frontier.get('queued', 0)}",
        f" Finished:      {succeeded + failed + disregarded}",
        f"  Successfully: {succeeded}",
        f"  Failed:       {failed}",
        f"  Disregarded:  {disregarded}",
        "",
        " -----===== QUEUES =====-----",
        f" Already included size:     {frontier.get('discovered', 0)}",
        f"               pending:     {frontier.get('queued', 0)}",
        "",
        f" All class queues map size: {frontier.get('total_queues', 0)}",
        f"             Active queues: {in_process + ready + snoozed}",
        f"                    In-process: {in_process}",
        f"                         Ready: {ready}",
        f"                       Snoozed: {snoozed}",
        f"           Inactive queues: {q.get('inactive', 0)}",
        f"            Retired queues: {q.get('retired', 0)}",
        f"          Exhausted queues: {q.get('exhausted', 0)}",
        "",
        f" -----===== {len(frontier.get('longest', []))} LONGEST QUEUES =====-----",
    ]
    out.extend(f" {key}: {size} URIs" for key, size in frontier.get("longest", []))
    return "\n".join(out) + "\n"
