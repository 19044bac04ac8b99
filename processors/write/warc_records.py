"""WARC record serialization through warcio: one record at a time, each its own gzip member.

:class:`WARCRecordWriter` turns a record type, extra WARC headers and a block (raw head bytes
followed by an optional body file) into bytes on an output stream and returns the new record's
``WARC-Record-ID``. warcio computes ``WARC-Block-Digest`` and ``Content-Length``; the payload
digest is ours (computed while fetching). Also here: the warcinfo and metadata blocks, WARC
dates, revisit profile URIs. Stateless apart from its parameters, so one instance serves all
threads. Heritrix counterpart: the ``*RecordBuilder`` classes of ``modules/.../warc``.
"""

from __future__ import annotations

import hashlib
import time
from random import getrandbits
from typing import IO, Any

from warcio.recordloader import ArcWarcRecord
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from crawler import CrawlURI
from crawler.recording import sha1_base32
from processors.write.warc_streams import ConcatStream, GzipMember

CONFORMS_TO = {
    "1.0": "http://bibnum.bnf.fr/WARC/WARC_ISO_28500_version1_latestdraft.pdf",
    "1.1": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
}
HTTP_RESPONSE = "application/http; msgtype=response"
_DIGEST_CHUNK_BYTES = 1 << 20
HTTP_REQUEST = "application/http; msgtype=request"
WARC_FIELDS = "application/warc-fields"


def new_record_id() -> str:
    """A ``WARC-Record-ID``: a random (version 4) UUID URN.

    From the ``random`` module, seeded from the OS at start-up: unique is all an id must be,
    and asking the OS for 16 bytes per record costs a system call and a thread switch.
    """
    h = f"{getrandbits(124):031x}"  # 122 bits used; version nibble 4, variant bits 10
    return f"<urn:uuid:{h[:8]}-{h[8:12]}-4{h[12:15]}-{_VARIANT[h[15]]}{h[16:19]}-{h[19:31]}>"


# The variant nibble: its two high bits are 10, its two low bits random (from a hex digit).
_VARIANT = {d: "89ab"[int(d, 16) & 3] for d in "0123456789abcdef"}


def revisit_profile(profile: str, warc_version: str) -> str:
    """The WARC-Profile URI of a revisit profile name, for the WARC version written."""
    return f"http://netpreserve.org/warc/{warc_version}/revisit/{profile}"


class WARCRecordWriter:
    """Writes single WARC records (see the module docstring). Thread-safe (no mutable state)."""

    __slots__ = ("_writer", "compress", "compress_level", "compressor", "warc_version")

    def __init__(
        self, warc_version: str, compress: bool, compress_level: int, compressor: str = "zlib"
    ) -> None:
        self.warc_version = warc_version
        self.compress = compress
        self.compress_level = compress_level
        self.compressor = compressor
        # warcio's record serialization keeps no per-record state on the writer (the output
        # is an argument), so one instance serves every record and thread.
        self._writer = _RawWARCWriter(None, gzip=False, warc_version=warc_version)

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

        ``compress_level`` overrides the writer's level for this record (0 stores the block in
        the gzip member uncompressed, for payloads that are compressed already).
        """
        level = self.compress_level if compress_level is None else compress_level
        member = GzipMember(out, level, self.compressor) if self.compress else None
        writer = self._writer
        warc_headers = StatusAndHeaders("", [], protocol=writer.warc_version)
        record_id = new_record_id()
        warc_headers.add_header("WARC-Type", kind)
        warc_headers.add_header("WARC-Record-ID", record_id)
        if uri:
            warc_headers.add_header("WARC-Target-URI", uri)
        for name, value in headers:
            warc_headers.add_header(name, value)
        # The block digest, computed here in one pass (warcio would read the block in small
        # pieces through its own digester); warcio skips digesting when the header is set.
        digest = hashlib.sha1(head, usedforsecurity=False)
        if body is not None and body_size:
            start, left = body.tell(), body_size
            while left > 0 and (chunk := body.read(min(left, _DIGEST_CHUNK_BYTES))):
                digest.update(chunk)
                left -= len(chunk)
            body.seek(start)
        warc_headers.add_header("WARC-Block-Digest", sha1_base32(digest.digest()))
        length = len(head) + body_size
        # warcio writes only the HTTP headers of a record it knows as "revisit"; our revisit
        # block is already exactly the bytes to write, so warcio is told a neutral type.
        record = ArcWarcRecord(
            "warc", "resource", warc_headers, ConcatStream(head, body), None, content_type, length
        )
        record.payload_length = length
        writer._write_warc_record(member or out, record)
        if member is not None:
            member.finish()
        return str(record_id)

    def date(self, epoch_ms: int) -> str:
        """WARC-Date of an instant: milliseconds in WARC/1.1, whole seconds in WARC/1.0."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch_ms // 1000))
        return f"{stamp}.{epoch_ms % 1000:03d}Z" if self.warc_version == "1.1" else stamp + "Z"


class _RawWARCWriter(WARCWriter):  # type: ignore[misc]
    """warcio's writer, computing only the block digest (the payload digest comes from the
    recording; a request record gets none, as in Heritrix)."""

    def ensure_digest(self, record: Any, block: bool = True, payload: bool = True) -> None:
        super().ensure_digest(record, block=block, payload=False)


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


def warcinfo_block(fields: dict[str, str | None]) -> bytes:
    """``application/warc-fields`` lines for the non-empty fields, in the order given."""
    return "".join(f"{k}: {_one_line(v)}\r\n" for k, v in fields.items() if v).encode("utf-8")


def metadata_block(curi: CrawlURI) -> bytes:
    """The metadata record's warc-fields: seed/via/hops/source tag/fetch time/outlinks."""
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
    for link in curi.outlinks:
        lines.append(f"outlink: {link.uri} {link.hop} {link.context or '-'}")
    text = "\r\n".join(_one_line(line) for line in lines) + "\r\n"
    return text.encode("utf-8", "replace")


def _one_line(text: str) -> str:
    return text.replace("\r", " ").replace("\n", " ")


def timestamp17(epoch_s: float) -> str:
    """``yyyymmddhhmmssSSS`` UTC, as WARC file names carry it."""
    ms = int(epoch_s * 1000)
    return time.strftime("%Y%m%d%H%M%S", time.gmtime(ms // 1000)) + f"{ms % 1000:03d}"
