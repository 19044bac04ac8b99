"""Recording: the raw bytes of one fetch (request head, response head, body), spooled to disk.

FetchHTTP fills a Recording; extractors read the decoded body through :meth:`Recording.decoded_body`
(content-encoding undone with a hard cap, so a decompression bomb cannot exhaust memory); the WARC
writer copies the raw bytes. :func:`decode_prefix` is that decoding for raw bytes read elsewhere
(a WARC record's payload). One Recording belongs to one CrawlURI, so it needs no lock.
"""

from __future__ import annotations

import base64
import hashlib
import io
import tempfile
import zlib
from collections.abc import Callable, Iterator
from typing import IO, Any

import brotlicffi as brotli  # type: ignore[import-untyped]

DEFAULT_IN_MEMORY_BYTES = 512 * 1024
"""Bodies up to this size stay in memory; larger ones spill to a temporary file."""
KEPT_DECODED_BYTES = 2 * 1024 * 1024
"""A decoded body up to this size is kept for the next :meth:`Recording.decoded_body` call."""


def sha1_base32(digest: bytes) -> str:
    """``sha1:`` + RFC 4648 base32 of a SHA-1 digest (32 chars), as crawl.log and WARC print it.

    Exactly ``base64.b32encode(digest)`` for a 20-byte digest (other lengths go through
    ``base64``), over twice as fast: Python 3.11's ``b32encode`` is a Python loop, and this
    runs per record and per fetch. The 160 bits are spread, as one int, into 32 bytes of 5
    bits each (halving the field width five times: 80 bits per 128, 40 per 64, 20 per 32,
    10 per 16, 5 per 8), which one ``bytes.translate`` maps onto the alphabet. Pure, so
    thread-safe.
    """
    if len(digest) != _SHA1_BYTES:
        return "sha1:" + base64.b32encode(digest).decode("ascii")
    n = int.from_bytes(digest, "big")
    n = (n >> 80) << 128 | n & _LOW_80
    low = n & _LOW_40_OF_128
    n = (n ^ low) << 24 | low
    low = n & _LOW_20_OF_64
    n = (n ^ low) << 12 | low
    low = n & _LOW_10_OF_32
    n = (n ^ low) << 6 | low
    low = n & _LOW_5_OF_16
    n = (n ^ low) << 3 | low
    return "sha1:" + n.to_bytes(32, "big").translate(_BASE32_OF_5_BITS).decode("ascii")


def _low_bits_of_each(slot_bits: int, keep_bits: int, slots: int) -> int:
    """A mask of the low ``keep_bits`` of each of ``slots`` fields ``slot_bits`` wide."""
    field = (1 << keep_bits) - 1
    return sum(field << (i * slot_bits) for i in range(slots))


_SHA1_BYTES = 20
_LOW_80 = (1 << 80) - 1
_LOW_40_OF_128 = _low_bits_of_each(128, 40, 2)
_LOW_20_OF_64 = _low_bits_of_each(64, 20, 4)
_LOW_10_OF_32 = _low_bits_of_each(32, 10, 8)
_LOW_5_OF_16 = _low_bits_of_each(16, 5, 16)
_BASE32_OF_5_BITS = bytes.maketrans(bytes(range(32)), b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")


class Recording:
    """Raw request/response bytes of one fetch with a running SHA-1 of the body (the payload).

    The body is kept exactly as received after transfer-encoding is removed (content-encoding
    kept), which is what crawl.log's size and digest and the WARC payload describe.
    """

    __slots__ = (
        "_body",
        "_decoded",
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
        # (Content-Encoding, decoded bytes, whether they are the whole body): the last decoding
        self._decoded: tuple[str | None, bytes, bool] | None = None

    def write_body(self, chunk: bytes) -> None:
        """Append raw body bytes."""
        if chunk:
            self._decoded = None
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
        """The body with its content-encodings undone, never more than ``max_bytes``.

        gzip/x-gzip, deflate (zlib-wrapped or raw) and br are undone, streaming from the spool in
        chunks, each layer's output bounded per step, so neither a spooled multi-GB body nor a
        small decompression bomb (nested ``gzip, gzip``, a brotli bomb) can take memory beyond
        ``max_bytes`` plus a few chunks. An unknown coding stops decoding there (the bytes of
        the layers undone so far are returned, the raw body if it is the outermost); a broken
        stream gives what was decoded before the error.

        The result (up to :data:`KEPT_DECODED_BYTES`) is kept until the body grows or the
        Recording closes, so the extractors and rules that read one page (links, media markup,
        sitemaps) decode it once.
        """
        if max_bytes <= 0:
            return b""
        kept = self._decoded
        if kept is not None and kept[0] == content_encoding:
            data, whole = kept[1], kept[2]
            if len(data) >= max_bytes:
                return data[:max_bytes]
            if whole:
                return data
        if not is_decoded(content_encoding):
            data = self._raw_prefix(max_bytes)
            if len(data) <= KEPT_DECODED_BYTES:
                self._decoded = (content_encoding, data, len(data) == self.body_size)
            return data
        data, whole = decode_prefix(_raw_chunks(self.body_stream()), content_encoding, max_bytes)
        if len(data) <= KEPT_DECODED_BYTES:
            self._decoded = (content_encoding, data, whole)
        return data

    def _raw_prefix(self, max_bytes: int) -> bytes:
        """The first ``max_bytes`` of the raw body. A body still in memory is handed out as the
        spool's own bytes (no copy while the body is not written to again); one rolled over to
        disk is read once. Either way no decoding buffer and no second copy: a page of a few MB
        in flight on each of hundreds of threads made the C heap's peaks, which it keeps."""
        getvalue = getattr(getattr(self._body, "_file", None), "getvalue", None)
        if getvalue is not None:
            data: bytes = getvalue()
            return data if len(data) <= max_bytes else data[:max_bytes]
        self._body.seek(0)
        data = self._body.read(min(max_bytes, self.body_size))  # a read sized to the cap
        self._body.seek(0, io.SEEK_END)  # where the next write_body appends
        return data

    def close(self) -> None:
        """Free memory and delete the spool file. Idempotent."""
        self._decoded = None
        self._body.close()


_STEP_BYTES = 64 * 1024
"""Input read and output produced per decoding step (bounds memory per layer)."""


def _layers(content_encoding: str | None) -> list[Callable[[Iterator[bytes]], Iterator[bytes]]]:
    """The decoders undoing ``content_encoding``, innermost last; they stop at an unknown one."""
    layers = []
    for coding in reversed([c.strip().lower() for c in (content_encoding or "").split(",")]):
        if coding in ("identity", ""):
            continue
        layer = _DECODERS.get(coding)
        if layer is None:
            break
        layers.append(layer)
    return layers


def is_decoded(content_encoding: str | None) -> bool:
    """Whether :func:`decode_prefix` undoes any layer of ``content_encoding`` (else the body
    is its own decoding)."""
    return bool(_layers(content_encoding))


def decode_prefix(
    chunks: Iterator[bytes], content_encoding: str | None, max_bytes: int
) -> tuple[bytes, bool]:
    """The first ``max_bytes`` of the body whose raw bytes ``chunks`` yields, its
    content-encodings undone (see :meth:`Recording.decoded_body`), and whether that is all of
    it. Each layer produces at most ``_STEP_BYTES`` per step whatever the size of a chunk, so
    memory is ``max_bytes`` plus a few steps however compressible the body (a decompression
    bomb). A broken stream gives what was decoded before the error. Pure: any thread."""
    pipeline = chunks
    for layer in _layers(content_encoding):
        pipeline = layer(pipeline)
    out = bytearray()
    whole = True
    try:
        for piece in pipeline:
            out += piece[: max_bytes - len(out)]
            if len(out) >= max_bytes:
                whole = False
                break
    except (zlib.error, brotli.error, EOFError, OSError):
        pass
    return bytes(out), whole


def _raw_chunks(stream: IO[bytes]) -> Iterator[bytes]:
    while chunk := stream.read(_STEP_BYTES):
        yield chunk


def _looks_like_zlib(head: bytes) -> bool:
    """RFC 1950 header: deflate method, window <= 32K, header checksum a multiple of 31."""
    return (
        len(head) >= 2
        and head[0] & 0x0F == 8
        and head[0] >> 4 <= 7
        and ((head[0] << 8) | head[1]) % 31 == 0
    )


def _inflate(chunks: Iterator[bytes], gzip: bool) -> Iterator[bytes]:
    """Undo one gzip (all members) or deflate layer, at most ``_STEP_BYTES`` per yield."""
    decoder: Any = None
    for chunk in chunks:
        data = chunk
        while data:
            if decoder is None:
                if gzip:
                    wbits = 16 + zlib.MAX_WBITS
                else:
                    wbits = zlib.MAX_WBITS if _looks_like_zlib(data) else -zlib.MAX_WBITS
                decoder = zlib.decompressobj(wbits)
            out = decoder.decompress(data, _STEP_BYTES)
            if out:
                yield out
            data = decoder.unconsumed_tail
            if decoder.eof:
                # Concatenated gzip members form one body; after a deflate stream, stop.
                if not gzip:
                    return
                data = decoder.unused_data + data
                decoder = None
    if decoder is not None:
        # Output still owed for input already consumed, drained a bounded step at a time.
        while out := decoder.decompress(b"", _STEP_BYTES):
            yield out


def _gunzip(chunks: Iterator[bytes]) -> Iterator[bytes]:
    return _inflate(chunks, gzip=True)


def _undeflate(chunks: Iterator[bytes]) -> Iterator[bytes]:
    return _inflate(chunks, gzip=False)


def _unbrotli(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """Undo one br layer with brotli's output-limited streaming decompressor."""
    decoder = brotli.Decompressor()
    for chunk in chunks:
        out = decoder.process(chunk, output_buffer_limit=_STEP_BYTES)
        while out:
            yield out
            # Past the limit, brotli wants empty input until its pending output is drained.
            out = decoder.process(b"", output_buffer_limit=_STEP_BYTES)
        if decoder.is_finished():
            return


_DECODERS: dict[str, Callable[[Iterator[bytes]], Iterator[bytes]]] = {
    "gzip": _gunzip,
    "x-gzip": _gunzip,
    "deflate": _undeflate,
    "br": _unbrotli,
}
