"""CrawlStats: thread-safe crawl totals fed by every final disposition.

ToeThreads call :meth:`CrawlStats.record_final` once per URI that reaches crawl.log; readers
(progress-statistics.log, reports, limits) call :meth:`CrawlStats.totals` for a consistent copy.
One lock guards everything; it is held only for counter updates, never across I/O.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from crawler.curi import CrawlURI


@dataclass
class HostStats:
    """Per-host totals for hosts-report.txt."""

    urls: int = 0
    bytes: int = 0
    robots: int = 0
    failed: int = 0


@dataclass
class StatsTotals:
    """A consistent copy of the counters at one moment."""

    finished: int = 0
    succeeded: int = 0
    failed: int = 0
    disregarded: int = 0
    bytes: int = 0
    by_status: Counter[int] = field(default_factory=Counter)
    by_mime: Counter[str] = field(default_factory=Counter)
    bytes_by_mime: Counter[str] = field(default_factory=Counter)
    hosts: dict[str, HostStats] = field(default_factory=dict)
    seeds: dict[str, int] = field(default_factory=dict)
    seed_redirects: dict[str, str] = field(default_factory=dict)
    sources: Counter[tuple[str, str]] = field(default_factory=Counter)


def host_of(uri: str) -> str:
    """Host (with a non-default port) of a URI for per-host statistics; ``dns:`` kept whole."""
    if uri.startswith("dns:"):
        return "dns:"
    try:
        return urlsplit(uri).netloc.rsplit("@", 1)[-1].lower() or "-"
    except ValueError:
        return "-"


class CrawlStats:
    """Counters of finished URIs. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._t = StatsTotals()

    def record_final(self, curi: CrawlURI) -> None:
        """Count one URI's final disposition (the moment its crawl.log line is written)."""
        size = max(curi.content_size, 0)
        host = host_of(curi.uri)
        with self._lock:
            t = self._t
            t.finished += 1
            t.by_status[curi.status] += 1
            hs = t.hosts.get(host)
            if hs is None:
                hs = t.hosts[host] = HostStats()
            if curi.status > 0:
                t.succeeded += 1
                t.bytes += size
                mime = curi.mime_type
                t.by_mime[mime] += 1
                t.bytes_by_mime[mime] += size
                hs.urls += 1
                hs.bytes += size
                if curi.uri.endswith("/robots.txt"):
                    hs.robots += 1
            elif curi.is_disregarded:
                t.disregarded += 1
            else:
                t.failed += 1
                hs.failed += 1
            if curi.is_seed:
                t.seeds[curi.uri] = curi.status
                location = curi.header("location")
                if location and curi.status in (301, 302, 303, 307, 308):
                    t.seed_redirects[curi.uri] = location
            if curi.source_tag:
                t.sources[(curi.source_tag, host)] += 1

    def replay_crawl_log(self, path: Path) -> int:
        """Count every line of an existing crawl.log (a resumed crawl); returns lines counted.

        Unparseable lines (e.g. a line cut short by a crash) are skipped.
        """
        from crawler.curi import CrawlURI

        if not path.exists():
            return 0
        counted = 0
        with path.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                cols = line[42:].split(" ", 9) if len(line) > 42 else []
                if len(cols) < 9:
                    continue
                try:
                    status = int(line[25:30])
                    size_text = line[31:41].strip()
                except ValueError:
                    continue
                curi = CrawlURI(cols[0], via=None if cols[2] == "-" else cols[2])
                curi.status = status
                curi.content_size = int(size_text) if size_text.isdigit() else -1
                curi.content_type = None if cols[3] == "no-type" else cols[3]
                curi.is_seed = cols[1] == "-"
                curi.source_tag = None if cols[7] == "-" else cols[7]
                self.record_final(curi)
                counted += 1
        return counted

    def note_seed(self, uri: str) -> None:
        """Remember a seed so seeds-report lists it even if it is never processed."""
        with self._lock:
            self._t.seeds.setdefault(uri, 0)

    def totals(self) -> StatsTotals:
        """A consistent copy of every counter."""
        with self._lock:
            t = self._t
            return StatsTotals(
                finished=t.finished,
                succeeded=t.succeeded,
                failed=t.failed,
                disregarded=t.disregarded,
                bytes=t.bytes,
                by_status=Counter(t.by_status),
                by_mime=Counter(t.by_mime),
                bytes_by_mime=Counter(t.bytes_by_mime),
                hosts={k: HostStats(**vars(v)) for k, v in t.hosts.items()},
                seeds=dict(t.seeds),
                seed_redirects=dict(t.seed_redirects),
                sources=Counter(t.sources),
            )

    def restore(self, totals: StatsTotals) -> None:
        """Replace the counters (resume from saved state)."""
        with self._lock:
            self._t = totals
