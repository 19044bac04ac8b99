"""What the console knows about one run beyond its ``status.json``: response codes and MIME
types tallied from ``crawl.log``, and the time series behind the charts.

:class:`CrawlLogTally` reads ``crawl.log`` incrementally (from the offset it reached last time,
at most ``chunk_bytes`` per call so a request on a huge finished log stays short; ``complete``
says whether it has caught up). :class:`RunMonitor` keeps a sample of the status each time the
crawl has published a new one (about one a second; the last ``MAX_SAMPLES``) and, for the time
before the console watched, the rows of ``progress-statistics.log``. Monitors are shared by request
threads: every public method takes the monitor's lock.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from pathlib import Path
from typing import Any

from crawler.curi import DISREGARDED_STATUSES
from crawler.logs.growing_file import read_complete
from crawler.reports.plot import parse_progress_log

CHUNK_BYTES = 4 * 1024 * 1024
MAX_SAMPLES = 3600
TOP_N = 15
_DISREGARDED = frozenset(str(code) for code in DISREGARDED_STATUSES)


class CrawlLogTally:
    """Counts of crawl.log lines by status code, by MIME type and by host (with bytes; a host's
    failures are its lines with a negative status that is not a disregard)."""

    def __init__(self, path: Path, chunk_bytes: int = CHUNK_BYTES) -> None:
        self.path = path
        self.chunk_bytes = chunk_bytes
        self.codes: Counter[str] = Counter()
        self.mimes: Counter[str] = Counter()
        self.mime_bytes: Counter[str] = Counter()
        self.hosts: dict[str, list[int]] = {}
        self.offset = self.lines = 0
        self.complete = False

    def _reset(self) -> None:
        self.codes.clear()
        self.mimes.clear()
        self.mime_bytes.clear()
        self.hosts.clear()
        self.offset = self.lines = 0

    def update(self) -> None:
        """Read what was appended since the last call (up to ``chunk_bytes``)."""
        if not self.path.exists():
            self.complete = True
            return
        start = self.offset
        chunk = read_complete(self.path, start, self.chunk_bytes)
        if chunk.size < start:  # replaced or truncated: start over
            self._reset()
            start = 0
            chunk = read_complete(self.path, start, self.chunk_bytes)
        codes, mimes, mime_bytes, hosts = self.codes, self.mimes, self.mime_bytes, self.hosts
        for raw in chunk.data.splitlines():
            parts = raw.split(None, 7)
            if len(parts) < 7:
                continue
            code = parts[1].decode("ascii", "replace")
            mime = parts[6].decode("utf-8", "replace")
            size = int(parts[2]) if parts[2].isdigit() else 0
            codes[code] += 1
            mimes[mime] += 1
            mime_bytes[mime] += size
            uri = parts[3].split(b"/", 3)
            host = uri[2].decode("utf-8", "replace") if len(uri) > 2 else "-"
            tally = hosts.get(host)
            if tally is None:
                tally = hosts[host] = [0, 0, 0]
            tally[0] += 1
            tally[1] += size
            tally[2] += code.startswith("-") and code not in _DISREGARDED
            self.lines += 1
        # caught up when this read reached the end of the file (bar a line being written)
        self.complete = chunk.size - start <= self.chunk_bytes
        self.offset = chunk.end

    def document(self) -> dict[str, Any]:
        """Codes (all of them) and the ``TOP_N`` MIME types by count."""
        return {
            "lines": self.lines,
            "complete": self.complete,
            "codes": [
                {"code": int(code) if code.lstrip("-").isdigit() else code, "count": n}
                for code, n in self.codes.most_common()
            ],
            "mimes": [
                {"mime": mime, "count": n, "bytes": self.mime_bytes[mime]}
                for mime, n in self.mimes.most_common(TOP_N)
            ],
            "other_mimes": max(0, len(self.mimes) - TOP_N),
            "hosts": [
                {"host": host, "urls": t[0], "bytes": t[1], "failed": t[2]}
                for host, t in sorted(self.hosts.items(), key=lambda kv: -kv[1][0])[:TOP_N]
            ],
        }


_SERIES_KEYS = ("t", "discovered", "queued", "downloaded", "uris_per_s", "kb_per_s", "busy")


class RunMonitor:
    """Tally and chart series of one run directory."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.tally = CrawlLogTally(run_dir / "logs" / "crawl.log")
        self.samples: deque[tuple[float, ...]] = deque(maxlen=MAX_SAMPLES)
        self._last_updated_s = 0.0
        self._progress_key: tuple[int, int] | None = None
        self._progress_rows: list[tuple[float, ...]] = []
        self._lock = threading.Lock()

    def observe(self, doc: dict[str, Any]) -> None:
        """Take a sample of ``doc`` (a status document) if the crawl published a new one."""
        updated = float(doc.get("updated_s") or 0.0)
        with self._lock:
            if updated <= self._last_updated_s:
                return
            self._last_updated_s = updated
            rates = doc.get("rates") or {}
            threads = doc.get("threads") or {}
            self.samples.append(
                (
                    round(updated, 3),
                    float(doc.get("discovered") or 0),
                    float(doc.get("queued") or 0),
                    float(doc.get("downloaded") or 0),
                    float(rates.get("uris_per_s") or 0.0),
                    float(rates.get("kb_per_s") or 0.0),
                    float(threads.get("busy") or 0),
                )
            )

    def tally_document(self) -> dict[str, Any]:
        """Read new crawl.log lines, then the tally."""
        with self._lock:
            self.tally.update()
            return self.tally.document()

    def series(self, since_s: float = 0.0) -> dict[str, Any]:
        """Chart points after ``since_s``: progress-statistics.log rows older than the first
        live sample, then the live samples. Columns as in ``keys``."""
        with self._lock:
            first_live = self.samples[0][0] if self.samples else float("inf")
            older = [row for row in self._progress() if since_s < row[0] < first_live]
            live = [row for row in self.samples if row[0] > since_s]
        return {"keys": list(_SERIES_KEYS), "points": [list(r) for r in (*older, *live)]}

    def _progress(self) -> list[tuple[float, ...]]:
        path = self.run_dir / "logs" / "progress-statistics.log"
        try:
            stat = path.stat()
        except FileNotFoundError:
            return []
        key = (stat.st_size, stat.st_mtime_ns)
        if key != self._progress_key:
            try:
                s = parse_progress_log(path)
            except OSError:
                return self._progress_rows
            self._progress_key = key
            self._progress_rows = [
                (t, float(d), float(q), float(dl), r, kb, float(b))
                for t, d, q, dl, r, kb, b in zip(
                    s.times_s,
                    s.discovered,
                    s.queued,
                    s.downloaded,
                    s.docs_per_s,
                    s.kb_per_s,
                    s.busy_threads,
                    strict=True,
                )
            ]
        return self._progress_rows
