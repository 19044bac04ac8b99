"""WARC record serialization: one record at a time, each its own gzip member.

:class:`WARCRecordWriter` turns a record type, extra WARC headers and a block (raw head bytes
followed by an optional body file) into bytes on an output stream and returns the new record's
``WARC-Record-ID``. It writes the WARC header block itself, byte for byte what warcio's
``WARCWriter`` writes for the same record: the version line, ``WARC-Type``,
``WARC-Record-ID``, ``WARC-Target-URI`` (when there is a target), the caller's headers in
their order, ``WARC-Block-Digest``, ``Content-Type``, ``Content-Length``, a blank line, the
block, and ``CRLF CRLF``. The block digest is computed here (SHA-1, base32); the payload
digest is the caller's (computed while fetching; a request record gets none, as in Heritrix).
A record up to :attr:`GzipMember.BUFFER_BYTES` is read once and deflated in one call; a
larger body (spooled to disk) is read twice, once for its digest and once streamed into its
gzip member. warcio stays the project's WARC *reader* (tests, ``warcio check``); it is not
used for writing, as its per-record objects, small reads and second digest pass cost more
than the record's deflate.

Also here: the warcinfo and metadata blocks, WARC dates, revisit profile URIs. Every writer
method is thread-safe, so one instance serves all threads. Heritrix counterpart: the
``*RecordBuilder`` classes of ``modules/.../warc``.
"""

from __future__ import annotations

import hashlib
import time
from random import getrandbits
from typing import IO

from crawler import CrawlURI
from crawler.recording import sha1_base32
from processors.write.warc_streams import GzipMember, gzip_member

CONFORMS_TO = {
    "1.0": "http://bibnum.bnf.fr/WARC/WARC_ISO_28500_version1_latestdraft.pdf",
    "1.1": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
}
HTTP_RESPONSE = "application/http; msgtype=response"
HTTP_REQUEST = "application/http; msgtype=request"
WARC_FIELDS = "application/warc-fields"
_STREAM_CHUNK_BYTES = 1 << 20
_RECORD_END = b"\r\n\r\n"


def new_record_id() -> str:
    """A ``WARC-Record-ID``: a random (version 4, RFC 4122 variant) UUID URN in angle brackets.

    From the ``random`` module, seeded from the OS at start-up and again in a forked child:
    unique is all an id must be, and asking the OS for 16 bytes per record costs a system call
    and a thread switch. Thread-safe (one C call draws all 128 bits).
    """
    h = (getrandbits(128) & _UUID_RANDOM_BITS | _UUID_V4_BITS).to_bytes(16, "big").hex()
    return f"<urn:uuid:{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}>"


# A version 4 UUID is 122 random bits: the version nibble (bits 76-79) is 4, the variant's two
# high bits (bits 62-63) are 10.
_UUID_V4_BITS = (0x4 << 76) | (0x2 << 62)
_UUID_RANDOM_BITS = ((1 << 128) - 1) ^ ((0xF << 76) | (0x3 << 62))


def revisit_profile(profile: str, warc_version: str) -> str:
    """The WARC-Profile URI of a revisit profile name, for the WARC version written."""
    return f"http://netpreserve.org/warc/{warc_version}/revisit/{profile}"


class WARCRecordWriter:
    """Writes single WARC records (see the module docstring).

    Thread-safe: the only state that changes is :meth:`date`'s cache of the last second it
    formatted, a tuple replaced whole (two threads racing format one second twice, no more).
    """

    __slots__ = ("_second", "compress", "compress_level", "compressor", "warc_version")

    def __init__(
        self, warc_version: str, compress: bool, compress_level: int, compressor: str = "zlib"
    ) -> None:
        self.warc_version = warc_version
        self.compress = compress
        self.compress_level = compress_level
        self.compressor = compressor
        self._second: tuple[int, str] = (0, "1970-01-01T00:00:00")

    def write(
        self,
        out: IO[bytes],
        uri: str,
        kind: str,
        headers: list[tuple[str, str]],
        head: bytes,
        body: IO[bytes] | None = None,
        body_size: int = 0,
        content_type: str = HTTP_RESPONSE,
        compress_level: int | None = None,
    ) -> str:
        """Write one record of type ``kind`` whose block is ``head`` + ``body``; return its id.

        ``body_size`` bytes are read from ``body``'s current position (its position afterwards
        is unspecified); a body that ends early gives a shorter block, never a record whose
        ``Content-Length`` lies. ``headers`` are the WARC headers other than those the writer
        sets (``WARC-Type``, ``WARC-Record-ID``, ``WARC-Target-URI``, ``WARC-Block-Digest``,
        ``Content-Type``, ``Content-Length``), written in their order; CR and LF in any of
        them (and in ``uri``, ``kind``, ``content_type``) become spaces, so no value can end
        its line early. ``compress_level`` overrides the writer's level for this record (0
        stores the block in the gzip member uncompressed, for payloads compressed already).
        Raises ``OSError`` if a body too big to buffer shrinks between its digest and its copy
        (``out`` then holds a partial record and must be discarded).
        """
        level = self.compress_level if compress_level is None else compress_level
        record_id = new_record_id()
        digest = hashlib.sha1(head, usedforsecurity=False)
        data = b""
        streamed = 0
        if body is not None and body_size > 0:
            if len(head) + body_size <= GzipMember.BUFFER_BYTES:
                # Read once: the same bytes feed the digest and the record.
                data = body.read(body_size)
                digest.update(data)
            else:
                streamed = _digest_body(digest, body, body_size)
        fields = _header_block(
            self.warc_version, kind, record_id, uri, headers, sha1_base32(digest.digest()),
            content_type, len(head) + len(data) + streamed,
        )  # fmt: skip
        if streamed and body is not None:
            self._write_streamed(out, fields, head, body, streamed, level)
        elif self.compress:
            record = b"".join((fields, head, data, _RECORD_END))
            out.write(gzip_member(record, level, self.compressor))
        else:
            out.writelines((fields, head, data, _RECORD_END))
        return record_id

    def _write_streamed(
        self, out: IO[bytes], fields: bytes, head: bytes, body: IO[bytes], size: int, level: int
    ) -> None:
        """A record whose body is too big to hold twice in memory, ``size`` bytes streamed."""
        member = GzipMember(out, level, self.compressor) if self.compress else None
        sink = out if member is None else member
        sink.write(fields)
        sink.write(head)
        left = size
        while left > 0 and (chunk := body.read(min(left, _STREAM_CHUNK_BYTES))):
            sink.write(chunk)
            left -= len(chunk)
        if left:
            # The header already promised ``size`` bytes: a record cut short would corrupt
            # every record after it, so the caller gets an error and drops the spool.
            raise OSError(f"WARC record body shrank by {left} bytes while being written")
        sink.write(_RECORD_END)
        if member is not None:
            member.finish()

    def date(self, epoch_ms: int) -> str:
        """WARC-Date of an instant: milliseconds in WARC/1.1, whole seconds in WARC/1.0."""
        second, millis = divmod(epoch_ms, 1000)
        cached = self._second
        if cached[0] != second:
            # strftime is most of a date's cost and a crawl writes many records per second.
            cached = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
            self._second = cached
        return cached[1] + (_MILLIS_SUFFIX[millis] if self.warc_version == "1.1" else "Z")


_MILLIS_SUFFIX = tuple(f".{ms:03d}Z" for ms in range(1000))


def _digest_body(digest: hashlib._Hash, body: IO[bytes], size: int) -> int:
    """Feed up to ``size`` bytes of ``body`` to ``digest``, seek back; return the bytes read."""
    start = body.tell()
    left = size
    while left > 0 and (chunk := body.read(min(left, _STREAM_CHUNK_BYTES))):
        digest.update(chunk)
        left -= len(chunk)
    body.seek(start)
    return size - left


def _header_block(
    version: str,
    kind: str,
    record_id: str,
    uri: str,
    headers: list[tuple[str, str]],
    block_digest: str,
    content_type: str,
    length: int,
) -> bytes:
    """The WARC header block (version line to blank line), as warcio's ``WARCWriter`` writes it
    (``StatusAndHeaders.to_bytes``: ``name: value`` lines, UTF-8), with CR/LF made spaces."""
    target = f"WARC-Target-URI: {uri}\r\n" if uri else ""
    given = "".join([f"{name}: {value}\r\n" for name, value in headers])
    text = (
        f"WARC/{version}\r\nWARC-Type: {kind}\r\nWARC-Record-ID: {record_id}\r\n{target}{given}"
        f"WARC-Block-Digest: {block_digest}\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {length}\r\n\r\n"
    )
    # Version, type, id, digest, type, length and blank lines, the target's and the given ones:
    # that many CRs and LFs mean none came with a value. Two counts are cheaper than looking
    # into every value, and a value with a line break is rare enough to pay for a rebuild.
    lines = len(headers) + (8 if uri else 7)
    if text.count("\n") != lines or text.count("\r") != lines:
        return _header_block(
            _one_line(version), _one_line(kind), record_id, _one_line(uri),
            [(_one_line(name), _one_line(value)) for name, value in headers],
            block_digest, _one_line(content_type), length,
        )  # fmt: skip
    # warcio would raise on a lone surrogate; a '?' in its place keeps the record whole.
    return text.encode("utf-8", "replace")


_INCOMPRESSIBLE_PREFIXES = ("image/", "video/", "audio/", "font/woff")
_COMPRESSIBLE_MEDIA = frozenset(
    ["image/svg+xml", "image/bmp", "image/x-icon", "image/vnd.microsoft.icon", "image/tiff",
     "audio/wav", "audio/x-wav", "image/x-ms-bmp"]
)  # fmt: skip
_INCOMPRESSIBLE_MEDIA = frozenset(
    ["application/zip", "application/gzip", "application/x-gzip", "application/x-bzip2",
     "application/x-xz", "application/x-7z-compressed", "application/vnd.rar",
     "application/x-rar-compressed", "application/font-woff", "application/zstd"]
)  # fmt: skip


def compressed_already(curi: CrawlURI) -> bool:
    """Whether the payload is compressed already (Content-Encoding, or a compressed media type),
    so deflating it again costs CPU for nothing."""
    encoding = curi.header("Content-Encoding")
    if encoding and encoding.strip().lower() not in ("identity", ""):
        return True
    mime = curi.mime_type
    if mime in _INCOMPRESSIBLE_MEDIA:
        return True
    return mime.startswith(_INCOMPRESSIBLE_PREFIXES) and mime not in _COMPRESSIBLE_MEDIA


EXTRA_METADATA = "warc_extra_metadata"
"""``curi.data`` key: ``[[target_uri, content_type, text], …]`` written (UTF-8) as ``metadata``
records concurrent to the URI's response (e.g. the media info JSON of a page); plain JSON
values, so the CrawlURI stays serializable."""


def warcinfo_block(fields: dict[str, str | None]) -> bytes:
    """``application/warc-fields`` lines for the non-empty fields, in the order given."""
    return "".join(f"{k}: {_one_line(v)}\r\n" for k, v in fields.items() if v).encode("utf-8")


def metadata_block(curi: CrawlURI) -> bytes:
    """The metadata record's warc-fields: seed/via/hops/source tag/fetch time/outlinks.

    One ``name: value`` line per field, CRLF-terminated, UTF-8 (unencodable characters as
    ``?``); CR and LF inside a value become spaces. Pure, so thread-safe.
    """
    lines = []
    if curi.is_seed:
        lines.append("seed:")
    elif curi.force_fetch:
        lines.append("force-fetch:")
    if curi.via:
        lines.append(f"via: {curi.via}")
    lines.append(f"hopsFromSeed: {curi.hop_path_text()}")
    if curi.source_tag:
        lines.append(f"sourceTag: {curi.source_tag}")
    if curi.fetch_duration_ms >= 0:
        lines.append(f"fetchTimeMs: {curi.fetch_duration_ms}")
    lines += [f"outlink: {link.uri} {link.hop} {link.context or '-'}" for link in curi.outlinks]
    text = "\r\n".join(lines) + "\r\n"
    # As many CRs and LFs as lines: no value brought its own (checked in C, not per line).
    if text.count("\n") != len(lines) or text.count("\r") != len(lines):
        text = "\r\n".join([_one_line(line) for line in lines]) + "\r\n"
    return text.encode("utf-8", "replace")


def _one_line(text: str) -> str:
    return text.replace("\r", " ").replace("\n", " ")


def timestamp17(epoch_s: float) -> str:
    """``yyyymmddhhmmssSSS`` UTC, as WARC file names carry it."""
    ms = int(epoch_s * 1000)
    return time.strftime("%Y%m%d%H%M%S", time.gmtime(ms // 1000)) + f"{ms % 1000:03d}"
