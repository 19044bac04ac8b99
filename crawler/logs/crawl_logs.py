"""CrawlLogs: crawl.log and the other Heritrix-format logs of one run, under its ``logs/``.

alerts.log and crawler.jsonl are written by the structlog configuration in
:mod:`crawler.logs.applog`.

Every writer is thread-safe (:class:`~crawler.logs.line_file.LineFile`: one ``write`` per line, no
lock); lines are formatted before. ``tail -f`` and ``crawler status`` see each line at once and a
crash loses at most the line being written. A line refused by a full disk is kept in memory and
written first once there is room again (:meth:`CrawlLogs.flush`, called by the controller's loop).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

from crawler.bounded_memo import remember
from crawler.logs.line_file import LineFile

if TYPE_CHECKING:
    from crawler.curi import CrawlURI

LOG_NAMES = (
    "crawl.log",
    "progress-statistics.log",
    "uri-errors.log",
    "runtime-errors.log",
    "nonfatal-errors.log",
)


class _SecondFormat:
    """``time.strftime`` of a whole UTC second, remembered for the last seconds asked.

    A dict, not one entry: the fetch-start column of consecutive lines names a few different
    seconds (fetches of different lengths end together), which one entry kept missing (42%
    of a crawl's lines). Thread-safe: dict operations are atomic under the GIL.
    """

    __slots__ = ("_memo", "_pattern")

    def __init__(self, pattern: str) -> None:
        self._pattern = pattern
        self._memo: dict[int, str] = {}

    def __call__(self, second: int) -> str:
        text = self._memo.get(second)
        if text is None:
            text = remember(
                self._memo, second, time.strftime(self._pattern, time.gmtime(second)), 256
            )
        return text


_ISO_SECOND = _SecondFormat("%Y-%m-%dT%H:%M:%S")
_STAMP_SECOND = _SecondFormat("%Y%m%d%H%M%S")


def log17(epoch_s: float) -> str:
    """``yyyy-mm-ddThh:mm:ss.SSSZ`` (UTC) for a time in seconds since the epoch."""
    whole, millis = divmod(round(epoch_s * 1000), 1000)
    return f"{_ISO_SECOND(whole)}.{millis:03d}Z"


def log14(epoch_s: float) -> str:
    """``yyyy-mm-ddThh:mm:ssZ`` (UTC)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch_s))


def stamp17(epoch_ms: int) -> str:
    """``yyyymmddhhmmssSSS`` (UTC) for a time in milliseconds since the epoch."""
    seconds, millis = divmod(int(epoch_ms), 1000)
    return f"{_STAMP_SECOND(seconds)}{millis:03d}"


def format_crawl_line(curi: CrawlURI, now_s: float, extra_info: bool = True) -> str:
    """One crawl.log line (13 columns, or 12 without extra info), without the newline."""
    size = curi.content_size
    if curi.fetch_start_ms > 0 and curi.fetch_duration_ms >= 0:
        timing = f"{stamp17(curi.fetch_start_ms)}+{curi.fetch_duration_ms}"
    else:
        timing = "-"
    notes = list(curi.annotations)
    if curi.fetch_attempts > 1:
        notes.append(f"{curi.fetch_attempts}t")
    line = (
        f"{log17(now_s)} {curi.status:>5} {size if size >= 0 else '-':>10} {curi.uri} "
        f"{curi.hop_path_text()} {curi.via or '-'} {curi.mime_type} #{curi.thread_number:03d} "
        f"{timing} {curi.payload_digest or '-'} {curi.source_tag or '-'} "
        f"{','.join(notes) if notes else '-'}"
    )
    if extra_info and curi.extra_info:
        info = dict(curi.extra_info)
        if size >= 0:
            info.setdefault("contentSize", size)
        line += " " + json.dumps(info, separators=(",", ":"), ensure_ascii=False)
    return line


class CrawlLogs:
    """The run's ``logs/`` directory: crawl.log, progress-statistics.log and the error logs."""

    def __init__(self, logs_dir: Path, *, extra_info: bool = True) -> None:
        logs_dir.mkdir(parents=True, exist_ok=True)
        self.dir = logs_dir
        self.extra_info = extra_info
        self.crawl = LineFile(logs_dir / "crawl.log")
        self.progress = LineFile(logs_dir / "progress-statistics.log")
        self.uri_errors = LineFile(logs_dir / "uri-errors.log")
        self.runtime_errors = LineFile(logs_dir / "runtime-errors.log")
        self.nonfatal_errors = LineFile(logs_dir / "nonfatal-errors.log")

    def log_final(self, curi: CrawlURI, now_s: float) -> None:
        """Write ``curi``'s crawl.log line, plus its runtime/non-fatal error entries if any."""
        line = format_crawl_line(curi, now_s, self.extra_info)
        self.crawl.write(line)
        if curi.error_traceback:
            self.runtime_errors.write(f"{line} {curi.error_traceback.rstrip()}")
        for error, trace in curi.nonfatal_errors:
            self.nonfatal_errors.write(f"{line} {type(error).__name__}: {error} {trace.rstrip()}")

    def uri_error(self, base: str | None, message: str, raw: str, now_s: float) -> None:
        """uri-errors.log: ``<time> <base URI or n/a> "<message>" <raw link>``."""
        flat = message.replace("\n", " ").replace('"', "'")
        self.uri_errors.write(f'{log17(now_s)} {base or "n/a"} "{flat}" {raw}')

    def files(self) -> tuple[LineFile, ...]:
        """Every log file of the run."""
        return (
            self.crawl,
            self.progress,
            self.uri_errors,
            self.runtime_errors,
            self.nonfatal_errors,
        )

    def flush(self) -> int:
        """Write the lines a full disk made wait, where there is room now; returns how many
        still wait."""
        waiting = 0
        for f in self.files():
            if not f.flush():
                waiting += f.waiting_lines
        return waiting

    def close(self) -> None:
        """Write what waits (waiting for disk space if need be) and close every file.
        Idempotent."""
        for f in self.files():
            f.close()
