"""Reading the end of a growing log file without reading all of it.

:func:`tail` returns the last lines (optionally only those containing a filter text) by reading
blocks backwards from the end, scanning at most ``max_scan_bytes``; with ``after`` (a byte offset
returned by an earlier call) it returns only the lines appended since, so a browser following
``crawl.log`` fetches each line once. Only whole lines are returned: a line still being written
(no newline yet) waits for the next call (:mod:`crawler.logs.growing_file`). Stateless and
thread-safe.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from crawler.logs.growing_file import read_complete

BLOCK_BYTES = 64 * 1024
MAX_SCAN_BYTES = 8 * 1024 * 1024
MAX_LINE_CHARS = 4000


@dataclass(frozen=True)
class Tail:
    """Lines found (oldest first), the offset to pass as ``after`` next time, the file size,
    and whether the scan stopped at ``max_scan_bytes`` before the start of the file."""

    lines: list[str]
    end: int
    size: int
    truncated: bool


def _keep(line: str, needle: str) -> bool:
    return not needle or needle in line.lower()


def _clip(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "…"


def tail(
    path: Path,
    lines: int,
    *,
    contains: str = "",
    after: int | None = None,
    max_scan_bytes: int = MAX_SCAN_BYTES,
) -> Tail:
    """The last ``lines`` whole lines of ``path`` containing ``contains`` (case-insensitive).

    With ``after``, only lines that start at or after that offset (if the file shrank, or is
    more than ``max_scan_bytes`` further on, it falls back to a plain tail). A missing file
    gives no lines.
    """
    needle = contains.lower()
    if after is not None and after >= 0:
        chunk = read_complete(path, after, max_scan_bytes + 1)
        if after <= chunk.size and chunk.size - after <= max_scan_bytes:
            found = [
                _clip(text)
                for raw in chunk.data.splitlines()
                if _keep(text := raw.decode("utf-8", "replace"), needle)
            ]
            return Tail(found[-lines:] if lines > 0 else [], chunk.end, chunk.size, False)
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        return Tail([], 0, 0, False)
    with fh:
        return _backwards(fh, os.fstat(fh.fileno()).st_size, lines, needle, max_scan_bytes)


def _backwards(stream: BinaryIO, size: int, lines: int, needle: str, max_scan_bytes: int) -> Tail:
    pos = size
    buf = b""
    end: int | None = None
    found: list[str] = []
    scanned = 0
    while pos > 0 and len(found) < lines and scanned < max_scan_bytes:
        step = min(BLOCK_BYTES, pos)
        pos -= step
        scanned += step
        stream.seek(pos)
        buf = stream.read(step) + buf
        if end is None:
            cut = buf.rfind(b"\n")
            if cut < 0:
                continue
            end = pos + cut + 1
            buf = buf[: cut + 1]
        # the first piece may be a partial line unless we reached the start of the file
        first_nl = buf.find(b"\n") if pos > 0 else -1
        if pos > 0 and first_nl < 0:
            continue
        complete, buf = buf[first_nl + 1 :], buf[: first_nl + 1]
        for raw in reversed(complete.splitlines()):
            text = raw.decode("utf-8", "replace")
            if _keep(text, needle):
                found.append(_clip(text))
                if len(found) >= lines:
                    break
    found.reverse()
    return Tail(found, end if end is not None else 0, size, pos > 0 and len(found) < lines)
