"""CrawlLogs: crawl.log and the other Heritrix-format logs of one run (design.md §5).

alerts.log and crawler.jsonl are written by the structlog configuration in :mod:`crawler.applog`.

Every writer is thread-safe: one lock per file, held only while a finished line is written.
Lines are formatted outside the locks. Files are line-buffered so ``tail -f`` and ``crawler status``
see each line at once and a crash loses at most the line being written.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from crawler.growing_file import trim_partial_line

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
    """``time.strftime`` of a whole UTC second, remembered for the last second asked.

    Thread-safe: the cache is one tuple, replaced atomically.
    """

    __slots__ = ("_cache", "_pattern")

    def __init__(self, pattern: str) -> None:
        self._pattern = pattern
        self._cache: tuple[int, str] = (-1, "")

    def __call__(self, second: int) -> str:
        cached_second, text = self._cache
        if cached_second != second:
            text = time.strftime(self._pattern, time.gmtime(second))
            self._cache = (second, text)
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


class _LineFile:
    """An append-only text file written a whole line at a time.

    Each line is one ``write`` system call on a file opened with ``O_APPEND``, which the kernel
    makes atomic: no lock and no buffer, so threads never queue behind each other here and a
    line is in the file (surviving ``kill -9``) as soon as :meth:`write` returns. A line that a
    crash cut short (``kill -9`` can stop a write at a page boundary) is removed when the file
    is opened again: readers never counted it, and the frontier's recovery logs its URI again.
    """

    __slots__ = ("_fd", "path")

    def __init__(self, path: Path) -> None:
        self.path = path
        trim_partial_line(path)  # a resumed crawl whose last line a crash cut short
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def write(self, text: str) -> None:
        fd = self._fd
        if fd is None:
            return
        data = (text if text.endswith("\n") else text + "\n").encode("utf-8", "backslashreplace")
        try:
            written = os.write(fd, data)
            while written < len(data):  # only on a full disk or a signal: finish the line
                written += os.write(fd, data[written:])
        except OSError:
            if self._fd is not None:
                raise

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


class CrawlLogs:
    """The run's ``logs/`` directory: crawl.log, progress-statistics.log and the error logs."""

    def __init__(self, logs_dir: Path, *, extra_info: bool = True) -> None:
        logs_dir.mkdir(parents=True, exist_ok=True)
        self.dir = logs_dir
        self.extra_info = extra_info
        self.crawl = _LineFile(logs_dir / "crawl.log")
        self.progress = _LineFile(logs_dir / "progress-statistics.log")
        self.uri_errors = _LineFile(logs_dir / "uri-errors.log")
        self.runtime_errors = _LineFile(logs_dir / "runtime-errors.log")
        self.nonfatal_errors = _LineFile(logs_dir / "nonfatal-errors.log")

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

    def close(self) -> None:
        """Close every file. Idempotent."""
        for f in (
            self.crawl,
            self.progress,
            self.uri_errors,
            self.runtime_errors,
            self.nonfatal_errors,
        ):
            f.close()
