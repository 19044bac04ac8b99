"""Small file-like helpers for the WARC writer: a record block read from two parts, and one
gzip member per record.

Neither is thread-safe; each serves one record being written by one thread.
"""

from __future__ import annotations

import zlib
from typing import IO, Any

from isal import isal_zlib


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

    Up to ``BUFFER_BYTES`` the data is gathered and compressed in one call at :meth:`finish`:
    every zlib call lets another thread take the interpreter, so a record written in a dozen
    small pieces would cost a dozen thread switches. Past that it streams. ``flush`` is a no-op
    so the member is not cut by the writer's own flushes.

    ``compressor`` names the deflate library: ``"isal"`` (ISA-L, levels 0-3, about five times
    faster than zlib at a ratio close to zlib's level 6) or ``"zlib"`` (levels 1-9). Level 0
    always stores the data uncompressed with zlib, for payloads compressed already. Either way
    the member is an ordinary gzip member any WARC reader decompresses.
    """

    BUFFER_BYTES = 1 << 20

    __slots__ = ("_buffered", "_compressor", "_level", "_lib", "_out", "_parts")

    def __init__(self, out: IO[bytes], level: int, compressor: str = "zlib") -> None:
        self._out = out
        self._level = level
        self._lib: Any = isal_zlib if compressor == "isal" and level > 0 else zlib
        self._parts: list[bytes] = []
        self._buffered = 0
        self._compressor: Any = None

    def write(self, data: bytes) -> int:
        size = len(data)
        if self._compressor is None:
            self._parts.append(data)
            self._buffered += size
            if self._buffered <= self.BUFFER_BYTES:
                return size
            self._compressor = self._lib.compressobj(self._level, zlib.DEFLATED, _GZIP_WBITS)
            data = b"".join(self._parts)
            self._parts = []
        compressed = self._compressor.compress(data)
        if compressed:
            self._out.write(compressed)
        return size

    def flush(self) -> None:
        """Nothing: a gzip member must not be split by intermediate flushes."""

    def finish(self) -> None:
        """End the gzip member."""
        if self._compressor is None:
            self._out.write(self._lib.compress(b"".join(self._parts), self._level, _GZIP_WBITS))
            self._parts = []
        else:
            self._out.write(self._compressor.flush())


_GZIP_WBITS = zlib.MAX_WBITS + 16
