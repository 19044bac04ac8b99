"""WarcScanner: the CDXJ lines of a ``.warc.gz`` whose records are each a gzip member, read at
C speed.

Each member is inflated with ISA-L, at most ``INFLATE_STEP_BYTES`` of output per call however
compressible it is (output discarded past the headers); only the WARC header block and, for
``response``/``revisit`` records in ``application/http``, the HTTP status line and
``Content-Type`` are parsed. The lines are the ones ``cdxj-indexer`` writes (the same SURT
key, from :func:`~crawler.archive.surt_key.surt_urlkey`, same fields and order;
``tests/archive/test_warc_scan.py`` compares them on real crawls), at about a third of its
CPU: the library parses every header of every record (request and metadata records too) in
Python, which cost 17% of a crawl's CPU.
:meth:`WarcScanner.format` also makes the line of an :class:`IndexEntry` the WARC writer
describes, so indexes made during a crawl are the same lines.

:meth:`WarcScanner.scan` returns None when the file holds something it does not handle (a
record not in a gzip member of its own, an HTTP record without ``WARC-Payload-Digest``): the
caller then uses ``cdxj-indexer``. A record with a block that is not HTTP and no payload digest
(``dns:``) gets the sha1 of its block, as ``cdxj-indexer`` computes it. A file cut short or
damaged ends the scan at the last whole record; :class:`ScanResult` says where. No shared
state; one call per thread.
"""

from __future__ import annotations

import base64
import hashlib
import json
import mmap
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from isal import isal_zlib

from crawler.archive.method_query import MethodQuery, request_method_query
from crawler.archive.surt_key import surt_urlkey
from crawler.crawler_error import CrawlerError

_GZIP_WBITS = 31
# Input is fed in growing pieces: what a member leaves unused is copied out (unused_data), so a
# small first piece keeps that copy small for the many small records.
_FIRST_FEED_BYTES = 8 * 1024
_MAX_FEED_BYTES = 1024 * 1024
_HEAD_BYTES = 64 * 1024  # WARC + HTTP headers must end within this much output
INFLATE_STEP_BYTES = 1024 * 1024
"""Most output one inflate call may produce: a member whose body compressed a thousandfold
(a long run of one byte) would otherwise inflate a whole input piece at once, a GiB per MiB."""
_INDEXED = (b"response", b"revisit", b"resource", b"metadata")
_MIME_END = re.compile(r"[;\s]")
_INDEXED_STR = ("response", "revisit", "resource", "metadata")
_WARC_FIELDS = b"\r\nContent-Type: application/warc-fields\r\n"


class IndexEntry(NamedTuple):
    """What a CDXJ line needs of a record, as its writer knows it (or the scan reads it)."""

    url: str
    date: str  # WARC-Date
    kind: str  # WARC-Type
    content_type: str  # the record's Content-Type
    status: str | None  # HTTP status code of an application/http response or revisit
    mime: str | None  # its HTTP Content-Type
    digest: str  # WARC-Payload-Digest
    request: MethodQuery | None = None  # a request other than a GET: keyed by its body too


class UnsupportedWarcError(CrawlerError):
    """The file needs the general indexer."""


@dataclass
class ScanResult:
    """Lines (unsorted), the bytes holding whole records, and what stopped the scan early."""

    lines: list[str]
    whole_bytes: int
    problem: str | None = None


class WarcScanner:
    """Indexes per-record-gzipped WARC files (see the module docstring)."""

    def scan(self, warc: Path, filename: str) -> ScanResult | None:
        """The CDXJ lines of ``warc`` naming it ``filename``; None if it needs cdxj-indexer."""
        with warc.open("rb") as fh:
            size = fh.seek(0, 2)
            if size == 0:
                return ScanResult([], 0)
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
                try:
                    return self._scan(memoryview(data), size, filename)
                except UnsupportedWarcError:
                    return None

    def _scan(self, view: memoryview, size: int, filename: str) -> ScanResult:
        lines: list[str] = []
        pos = 0
        # The last response or revisit indexed: a request other than a GET right after it,
        # concurrent to it, re-keys its line (see :mod:`crawler.archive.method_query`).
        last: _Indexed | None = None
        try:
            while pos < size:
                if bytes(view[pos : pos + 2]) != b"\x1f\x8b":
                    if pos == 0:
                        raise UnsupportedWarcError("not gzip")
                    return ScanResult(lines, pos, f"no gzip member at byte {pos}")
                end, head = _member(view, pos, size)
                if end is None:
                    return ScanResult(lines, pos, f"cut short: indexed up to byte {pos}")
                indexed = self._line(head, pos, end - pos, filename)
                if indexed is _OTHER_REQUEST:
                    line = None if last is None else self._rekeyed(last, head, view[pos:end])
                    if line is not None:
                        lines[-1] = line
                    last = None
                elif indexed is not None:
                    lines.append(indexed.line)
                    last = indexed if indexed.record_id else None
                else:
                    last = None
                pos = end
        except (isal_zlib.error, OSError, ValueError) as error:  # type: ignore[misc]
            return ScanResult(lines, pos, f"damaged gzip member at byte {pos} ({error})")
        finally:
            view.release()
        return ScanResult(lines, size)

    def _rekeyed(self, last: _Indexed, head: bytes, member: memoryview) -> str | None:
        """``last``'s line keyed by the request record ``head`` (the start of the inflated
        ``member``) if that request is concurrent to it; None otherwise."""
        split = head.find(b"\r\n\r\n")
        warc = _fields(head[:split])
        if (
            warc.get(b"warc-concurrent-to") != last.record_id
            or warc.get(b"warc-target-uri", b"").decode("utf-8", "surrogateescape")
            != last.entry.url
        ):
            return None
        try:
            size = int(warc.get(b"content-length", b""))
        except ValueError:
            return None
        block = head[split + 4 : split + 4 + size]
        if len(block) < size:  # a body past the first output: inflate up to the block's end
            block = _inflated_prefix(member, split + 4 + size)[split + 4 :]
        request = request_method_query(block)
        if request is None:
            return None
        return self.format(last.entry._replace(request=request), *last.place)

    def _line(self, head: bytes, offset: int, length: int, filename: str) -> _Indexed | None:
        split = head.find(b"\r\n\r\n")
        if not head.startswith(b"WARC/") or split < 0:
            raise UnsupportedWarcError("a member without a whole WARC header")
        kind = _quick_type(head, split)
        if kind is not None and kind not in _INDEXED:
            if kind == b"request" and head[split + 4 : split + 8] != b"GET ":
                return _OTHER_REQUEST  # keys the response before it
            return None  # request, warcinfo: no need to parse the rest
        if kind == b"metadata" and head.find(_WARC_FIELDS, 0, split + 2) >= 0:
            return None  # the crawler's own metadata records (via, hops, outlinks)
        warc = _fields(head[:split])
        kind = warc.get(b"warc-type", b"")
        if kind not in _INDEXED:
            return None
        content_type = warc.get(b"content-type", b"").decode("latin-1")
        digest = warc.get(b"warc-payload-digest")
        if digest is None:
            digest = _block_digest(head, split, warc, content_type)
        status: str | None = None
        mime: str | None = None
        if kind in (b"response", b"revisit") and content_type.startswith("application/http"):
            status, mime = http_status_and_type(head[split + 4 :])
        entry = IndexEntry(
            warc[b"warc-target-uri"].decode("utf-8", "surrogateescape"),
            warc[b"warc-date"].decode("latin-1"),
            kind.decode("latin-1"),
            content_type,
            status,
            mime,
            digest.decode("latin-1"),
        )
        line = self.format(entry, offset, length, filename)
        if line is None:
            return None
        record_id = warc.get(b"warc-record-id") if kind != b"metadata" else None
        return _Indexed(line, entry, record_id, (offset, length, filename))

    def format(self, entry: IndexEntry, offset: int, length: int, filename: str) -> str | None:
        """The CDXJ line of a record described by ``entry`` (None if not indexed)."""
        kind, content_type = entry.kind, entry.content_type
        if kind not in _INDEXED_STR:
            return None
        if kind in ("resource", "metadata") and content_type == "application/warc-fields":
            return None
        doc: dict[str, str] = {"url": entry.url}
        mime = entry.mime
        if kind not in ("response", "revisit"):
            mime = content_type
        elif not content_type.startswith("application/http"):
            mime = None
        if kind == "revisit":
            mime = "warc/revisit"
        if mime:
            doc["mime"] = _MIME_END.split(mime, 1)[0].strip()
        if entry.status is not None and content_type.startswith("application/http"):
            doc["status"] = entry.status
        doc["digest"] = entry.digest
        doc["length"] = str(length)
        doc["offset"] = str(offset)
        doc["filename"] = filename
        keyed = entry.url
        request = entry.request
        if request is not None:
            keyed = request.append_to(keyed)
            doc["requestBody"] = request.query
            doc["method"] = request.method
        return f"{surt_urlkey(keyed)} {_timestamp(entry.date)} {json.dumps(doc)}"


class _Indexed(NamedTuple):
    """A line the scan made, with what re-keying it needs."""

    line: str
    entry: IndexEntry
    record_id: bytes | None  # of a response or revisit, else None
    place: tuple[int, int, str]  # offset, length, file name


_OTHER_REQUEST = _Indexed("", IndexEntry("", "", "request", "", None, None, ""), None, (0, 0, ""))
"""What :meth:`WarcScanner._line` returns for a request record of a method other than GET."""


def _member(view: memoryview, start: int, size: int) -> tuple[int | None, bytes]:
    """End offset of the gzip member at ``start`` (None if cut short) and its first output."""
    inflater = isal_zlib.decompressobj(_GZIP_WBITS)
    head = b""
    pos = start
    feed = _FIRST_FEED_BYTES
    while not inflater.eof:
        if pos >= size:
            return None, head
        chunk = view[pos : pos + feed]
        pos += len(chunk)
        feed = min(feed * 4, _MAX_FEED_BYTES)
        out = inflater.decompress(chunk, INFLATE_STEP_BYTES)
        if len(head) < _HEAD_BYTES:
            head += out[: _HEAD_BYTES - len(head)]
        if inflater.unconsumed_tail or len(out) == INFLATE_STEP_BYTES:  # a highly packed body
            for out in bounded_inflate(inflater, inflater.unconsumed_tail):
                if len(head) < _HEAD_BYTES:
                    head += out[: _HEAD_BYTES - len(head)]
    return pos - len(inflater.unused_data), head


def bounded_inflate(inflater: Any, data: bytes | memoryview) -> Iterator[bytes]:
    """Feed ``data`` to ``inflater`` (a ``decompressobj`` of zlib or ISA-L), yielding its output
    at most ``INFLATE_STEP_BYTES`` at a time, until the input is used up (or the stream ends)
    and no output is pending. However compressible the stream, one call holds one step."""
    while not inflater.eof:
        out: bytes = inflater.decompress(data, INFLATE_STEP_BYTES)
        if out:
            yield out
        data = inflater.unconsumed_tail
        if not data and len(out) < INFLATE_STEP_BYTES:
            return  # all input taken and the output not cut at the step: more input needed


def _inflated_prefix(member: memoryview, limit: int) -> bytes:
    """The first ``limit`` bytes the gzip ``member`` inflates to (fewer if it holds fewer),
    inflated a bounded step at a time: memory follows ``limit``, not the member's ratio."""
    inflater = isal_zlib.decompressobj(_GZIP_WBITS)
    out = bytearray()
    for piece in bounded_inflate(inflater, member):
        out += piece[: limit - len(out)]
        if len(out) >= limit:
            break
    return bytes(out)


def _quick_type(head: bytes, split: int) -> bytes | None:
    """WARC-Type as the crawler's writer spells the header; None if spelled otherwise."""
    at = head.find(b"\r\nWARC-Type: ", 0, split)
    if at < 0:
        return None
    end = head.find(b"\r\n", at + 13)
    return head[at + 13 : end].strip()


def _block_digest(head: bytes, split: int, warc: dict[bytes, bytes], content_type: str) -> bytes:
    """The payload digest cdxj-indexer computes for a record without one (a ``dns:`` response):
    for a block that is not HTTP, the sha1 of the whole block."""
    try:
        size = int(warc.get(b"content-length", b""))
    except ValueError:
        raise UnsupportedWarcError("no Content-Length") from None
    start = split + 4
    if content_type.startswith("application/http") or len(head) < start + size:
        raise UnsupportedWarcError("an HTTP record without a payload digest")
    digest = hashlib.sha1(head[start : start + size], usedforsecurity=False).digest()
    return b"sha1:" + base64.b32encode(digest)


def _fields(block: bytes) -> dict[bytes, bytes]:
    fields: dict[bytes, bytes] = {}
    for raw in block.split(b"\r\n")[1:]:
        name, sep, value = raw.partition(b":")
        if sep:
            fields.setdefault(name.strip().lower(), value.strip())
    return fields


def http_status_and_type(block: bytes) -> tuple[str | None, str | None]:
    """Status code and Content-Type of an HTTP response head."""
    end = block.find(b"\r\n\r\n")
    lines = (block if end < 0 else block[:end]).split(b"\r\n")
    parts = lines[0].split(None, 2)
    status = parts[1].decode("latin-1") if len(parts) > 1 else None
    for raw in lines[1:]:
        name, sep, value = raw.partition(b":")
        if sep and name.strip().lower() == b"content-type":
            return status, value.strip().decode("latin-1")
    return status, None


def _timestamp(date: str) -> str:
    digits = "".join(ch for ch in date[:19] if ch.isdigit())
    if len(digits) == 14:
        return digits
    from warcio.timeutils import iso_date_to_timestamp

    return str(iso_date_to_timestamp(date))
