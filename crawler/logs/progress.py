"""ProgressStatistics: progress-statistics.log rows in Heritrix's fixed columns.

:meth:`ProgressStatistics.sample` is called by the controller every ``progress_interval_s``
(and at state changes); it computes current and average rates from the previous sample.
Only the controller's thread calls it, so it keeps its previous sample without a lock.
"""

from __future__ import annotations

import math
import resource
from dataclasses import dataclass

from crawler.frontier.frontier import FrontierSnapshot
from crawler.logs.crawl_logs import log14

LEGEND = (
    "           timestamp  discovered      queued   downloaded       doc/s(avg)  KB/s(avg)"
    "   dl-failures   busy-thread   mem-use-KB  heap-size-KB   congestion   max-depth   avg-depth"
)
_COLUMN_ENDS = (32, 44, 57, 74, 85, 99, 113, 126, 140, 153, 165, 177)


def fmt_decimal(value: float, places: int = 2) -> str:
    """At most ``places`` decimals, US grouping, trailing zeros dropped; ``NaN``/``∞`` kept."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "∞"
    text = f"{value:,.{places}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def rss_kb() -> int:
    """Current resident set size of this process in KiB (0 if unknown)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            pages = int(fh.read().split()[1])
        return pages * resource.getpagesize() // 1024
    except (OSError, ValueError, IndexError):
        return 0


def peak_rss_kb() -> int:
    """Peak resident set size of this process in KiB.

    Read from ``VmHWM`` (the high-water mark of this process's own address space): Linux's
    ``ru_maxrss`` also counts the address space of whatever started the process (``exec``
    records it), so a crawl started by a large process would report that process's size.
    Falls back to ``ru_maxrss`` where ``/proc`` is missing.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


@dataclass(frozen=True)
class ProgressRow:
    """One sample's values, also published for ``crawler status``."""

    time_s: float
    discovered: int
    queued: int
    downloaded: int
    docs_per_s: float
    avg_docs_per_s: float
    kb_per_s: float
    avg_kb_per_s: float
    failed: int
    busy_threads: int
    mem_kb: int
    peak_mem_kb: int
    congestion: float
    max_depth: int
    avg_depth: float

    def line(self) -> str:
        """The row in Heritrix's fixed columns."""
        values = (
            str(self.discovered),
            str(self.queued),
            str(self.downloaded),
            f"{fmt_decimal(self.docs_per_s)}({fmt_decimal(self.avg_docs_per_s)})",
            f"{round(self.kb_per_s)}({round(self.avg_kb_per_s)})",
            str(self.failed),
            str(self.busy_threads),
            str(self.mem_kb),
            str(self.peak_mem_kb),
            fmt_decimal(self.congestion),
            str(self.max_depth),
            str(round(self.avg_depth)),
        )
        out = log14(self.time_s)
        for end, value in zip(_COLUMN_ENDS, values, strict=True):
            out += " " * max(0, end - len(out) - len(value)) + value
        return out


class ProgressStatistics:
    """Computes progress rows from the frontier snapshot and crawl totals."""

    def __init__(self, start_s: float) -> None:
        self._start_s = start_s
        self._paused_s = 0.0
        self._last: tuple[float, int, int] = (start_s, 0, 0)

    def add_paused(self, seconds: float) -> None:
        """Exclude ``seconds`` spent paused from the average rates."""
        self._paused_s += seconds

    def sample(
        self,
        now_s: float,
        snap: FrontierSnapshot,
        downloaded: int,
        failed: int,
        total_bytes: int,
        busy_threads: int,
    ) -> ProgressRow:
        """A new row; current rates are since the previous call."""
        last_s, last_docs, last_bytes = self._last
        interval = max(now_s - last_s, 1e-9)
        elapsed = max(now_s - self._start_s - self._paused_s, 1e-9)
        self._last = (now_s, downloaded, total_bytes)
        return ProgressRow(
            time_s=now_s,
            discovered=snap.discovered,
            queued=snap.queued,
            downloaded=downloaded,
            docs_per_s=(downloaded - last_docs) / interval,
            avg_docs_per_s=downloaded / elapsed,
            kb_per_s=(total_bytes - last_bytes) / 1024 / interval,
            avg_kb_per_s=total_bytes / 1024 / elapsed,
            failed=failed,
            busy_threads=busy_threads,
            mem_kb=rss_kb(),
            peak_mem_kb=peak_rss_kb(),
            congestion=snap.congestion,
            max_depth=snap.max_depth,
            avg_depth=snap.avg_depth,
        )
