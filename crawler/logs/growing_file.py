"""Reading a file that another process may still be appending lines to.

crawl.log, progress-statistics.log, crawler.jsonl, alerts.log and the state journals grow one
line at a time while a crawl runs. A writer appends each line with one ``write()``, but a reader
can still catch a line half-way: the kernel makes an append atomic for other writers, not for
readers, and a crash or a full disk can leave a line cut short for good. So a line is *complete*
only when its newline is in the file; whatever follows the last newline is a line still being
written and is never returned — the next read, from the offset this one stopped at, gets it
whole. Every reader of a growing file in the crawler goes through this module.

Readers are stateless and thread-safe: each call opens the file itself. A missing file reads
as empty.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Chunk", "complete_lines", "read_complete", "trim_partial_line"]


@dataclass(frozen=True, slots=True)
class Chunk:
    """Complete lines read from a growing file.

    ``data`` holds whole lines only (each ending with ``\\n``); ``end`` is the offset just past
    them (pass it as ``start`` next time); ``size`` is the file's size when it was read, so
    ``end < size`` means that more is there: a line being written, or bytes past ``max_bytes``.
    """

    data: bytes
    end: int
    size: int


def read_complete(path: Path, start: int = 0, max_bytes: int | None = None) -> Chunk:
    """The complete lines of ``path`` from byte ``start`` on, at most ``max_bytes`` of them.

    A line longer than ``max_bytes`` is not returned until ``max_bytes`` is large enough. If the
    file is shorter than ``start`` (replaced or truncated), the chunk is empty with ``size`` <
    ``start``, which tells the caller to start over. A missing file gives an empty chunk.
    """
    try:
        with path.open("rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size <= start:
                return Chunk(b"", start, size)
            fh.seek(start)
            want = size - start if max_bytes is None else min(max_bytes, size - start)
            data = fh.read(want)
    except FileNotFoundError:
        return Chunk(b"", start, 0)
    cut = data.rfind(b"\n") + 1
    return Chunk(data[:cut], start + cut, size)


def complete_lines(path: Path, start: int = 0, *, errors: str = "replace") -> Iterator[str]:
    """Each complete line of ``path`` from byte ``start`` on, decoded as UTF-8 (``errors`` as in
    :meth:`bytes.decode`), without its newline. Reads as it goes, so a log of any size takes
    little memory; lines appended meanwhile are returned too, once complete. A missing file
    yields nothing. ``start`` should be the start of a line (0, or an offset from a
    :class:`Chunk`); if it falls inside one, the rest of that line comes first."""
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        return
    with fh:
        if start:
            fh.seek(start)
        for raw in fh:
            if raw[-1:] != b"\n":
                return  # still being written, or cut short by a crash
            yield raw[:-1].decode("utf-8", errors)


def trim_partial_line(path: Path) -> int:
    """Cut off a last line that has no newline, and return how many bytes were cut.

    For a writer about to append to a file that a crash (``kill -9`` can stop a write between
    two pages) or a full disk left ending inside a line: the fragment is no record, and the new
    lines must not be glued to it. Call it only while no other process writes the file. A
    missing or empty file, or one that ends with a newline, is left alone (0).
    """
    try:
        with path.open("r+b") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size == 0:
                return 0
            pos = size
            while pos > 0:
                step = min(64 * 1024, pos)
                fh.seek(pos - step)
                block = fh.read(step)
                if pos == size and block.endswith(b"\n"):
                    return 0
                newline = block.rfind(b"\n")
                if newline >= 0:
                    pos = pos - step + newline + 1
                    break
                pos -= step
            fh.truncate(pos)
            return size - pos
    except FileNotFoundError:
        return 0
