"""Small file-like helpers for the WARC writer: a record block read from two parts, and one
gzip member per record.

Neither is thread-safe; each serves one record being written by one thread.
"""

from __future__ import annotations

import zlib
from typing import IO


class ConcatStream:
    """A seekable read-only stream over ``head`` bytes followed by the ``body`` file.

    warcio reads a record's block once for its digest and again to write it; this avoids
    copying a (possibly spooled-to-disk) body just to prepend the HTTP head.
    """

    __slots__ = ("_body", "_body_start", "_head", "_pos")

    def __init__(self, head: bytes, body: IO[bytes] | None) -> None:
        self._head = head
        self._body = body
        self._body_start = body.tell() if body is not None else 0
        self._pos = 0

    def read(self, size: int = -1) -> bytes:
        head = self._head
        pos = self._pos
        if pos < len(head):
            end = len(head) if size is None or size < 0 else min(len(head), pos + size)
            chunk = head[pos:end]
            self._pos = end
            if end == len(head) and self._body is not None:
                self._body.seek(self._body_start)
            return chunk
        if self._body is None:
            return b""
        chunk = self._body.read(-1 if size is None else size)
        self._pos += len(chunk)
        return chunk

    def tell(self) -> int:
        return self._pos

    def seek(self, pos: int, whence: int = 0) -> int:
        if whence != 0:
            raise OSError("ConcatStream only seeks from the start")
        self._pos = pos
        if self._body is not None and pos >= len(self._head):
            self._body.seek(self._body_start + pos - len(self._head))
        return pos


class GzipMember:
    """Writes everything given to it as one gzip member into ``out``; :meth:`finish` ends it.

    ``flush`` is a no-op so the member is not cut by the writer's own flushes.
    """

    __slots__ = ("_compressor", "_out")

    def __init__(self, out: IO[bytes], level: int) -> None:
        self._out = out
        self._compressor = zlib.compressobj(level, zlib.DEFLATED, zlib.MAX_WBITS + 16)

    def write(self, data: bytes) -> int:
        compressed = self._compressor.compress(data)
        if compressed:
            self._out.write(compressed)
        return len(data)

    def flush(self) -> None:
        """Nothing: a gzip member must not be split by intermediate flushes."""

    def finish(self) -> None:
        """End the gzip member."""
        self._out.write(self._compressor.flush())
