"""gzip members for the WARC writer: each record is one member, compressed in one call when
it is small (:func:`gzip_member`), or streamed through a :class:`GzipMember` when it is not.

:func:`gzip_member` is pure; a :class:`GzipMember` serves one record being written by one
thread and is not thread-safe.
"""

from __future__ import annotations

import zlib
from typing import IO, Any

from isal import isal_zlib


def gzip_member(data: bytes, level: int, compressor: str = "zlib") -> bytes:
    """``data`` as one complete gzip member, deflated in a single library call.

    ``compressor`` and ``level`` as for :class:`GzipMember` (level 0 stores with zlib). One
    call rather than a compressor object: each zlib call lets another thread take the
    interpreter, and a small record needs no more than one.
    """
    lib: Any = isal_zlib if compressor == "isal" and level > 0 else zlib
    member: bytes = lib.compress(data, level, _GZIP_WBITS)
    return member


class GzipMember:
    """Writes everything given to it as one gzip member into ``out``; :meth:`finish` ends it.

    Up to ``BUFFER_BYTES`` the data is gathered and compressed in one call at :meth:`finish`:
    every zlib call lets another thread take the interpreter, so a record written in a dozen
    small pieces would cost a dozen thread switches. Past that it streams. ``flush`` is a no-op
    so the member is not cut by a caller's flushes.

    ``compressor`` names the deflate library: ``"isal"`` (ISA-L, levels 0-3; at level 2 over ten
    times faster than zlib's level 6 for ~15% more bytes) or ``"zlib"`` (levels 1-9). Level 0
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
