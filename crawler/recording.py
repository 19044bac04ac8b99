"""Recording: the raw bytes of one fetch (request head, response head, body), spooled to disk.

FetchHTTP fills a Recording; extractors read the decoded body through :meth:`Recording.decoded_body`
(content-encoding undone with a hard cap, so a decompression bomb cannot exhaust memory); the WARC
writer copies the raw bytes. One Recording belongs to one CrawlURI, so it needs no lock.
"""

from __future__ import annotations

import base64
import hashlib
import tempfile
import zlib
from typing import IO

DEFAULT_IN_MEMORY_BYTES = 512 * 1024
"""Bodies up to this size stay in memory; larger ones spill to a temporary file."""


def sha1_base32(digest: bytes) -> str:
    """``sha1:`` + RFC 4648 base32 of a SHA-1 digest (32 chars), as crawl.log and WARC print it."""
    return "sha1:" + base64.b32encode(digest).decode("ascii")


class Recording:
    """Raw request/response bytes of one fetch with a running SHA-1 of the body (the payload).

    The body is kept exactly as received after transfer-encoding is removed (content-encoding
    kept), which is what crawl.log's size and digest and the WARC payload describe.
    """

    __slots__ = (
        "_body",
        "_sha1",
        "body_size",
        "request_head",
        "response_head",
        "truncated",
    )

    def __init__(self, in_memory_bytes: int = DEFAULT_IN_MEMORY_BYTES) -> None:
        self.request_head: bytes = b""
        self.response_head: bytes = b""
        self.truncated: str | None = None
        self.body_size = 0
        self._body: IO[bytes] = tempfile.SpooledTemporaryFile(  # noqa: SIM115 - owned, closed in close()
            max_size=in_memory_bytes, prefix="crawler-body-"
        )
        self._sha1 = hashlib.sha1()

    def write_body(self, chunk: bytes) -> None:
        """Append raw body bytes."""
        if chunk:
            self._body.write(chunk)
            self._sha1.update(chunk)
            self.body_size += len(chunk)

    @property
    def payload_digest(self) -> str:
        """``sha1:<base32>`` of the body bytes written so far."""
        return sha1_base32(self._sha1.digest())

    def body_stream(self) -> IO[bytes]:
        """The body file, rewound. Do not close it; reading moves the shared position."""
        self._body.seek(0)
        return self._body

    def body_bytes(self, max_bytes: int | None = None) -> bytes:
        """The raw body (at most ``max_bytes``)."""
        self._body.seek(0)
        return self._body.read(-1 if max_bytes is None else max_bytes)

    def decoded_body(self, content_encoding: str | None, max_bytes: int) -> bytes:
        """The body with gzip/deflate content-encodings undone, never more than ``max_bytes``.

        Unknown or broken encodings give the bytes decoded so far (possibly the raw body for an
        unknown encoding). Nested encodings (``gzip, gzip``) are undone one layer at a time, each
        capped, so a small bomb cannot inflate past ``max_bytes``.
        """
        data = self.body_bytes(max_bytes if not content_encoding else None)
        if not content_encoding:
            return data
        codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
        for coding in reversed(codings):
            if coding in ("identity", ""):
                continue
            if coding in ("gzip", "x-gzip"):
                wbits = 16 + zlib.MAX_WBITS
            elif coding == "deflate":
                wbits = zlib.MAX_WBITS if data[:1] == b"\x78" else -zlib.MAX_WBITS
            else:
                return data[:max_bytes]
            decoder = zlib.decompressobj(wbits)
            try:
                data = decoder.decompress(data, max_bytes)
            except zlib.error:
                data = b""
        return data[:max_bytes]

    def close(self) -> None:
        """Free memory and delete the spool file. Idempotent."""
        self._body.close()
