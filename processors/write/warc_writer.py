"""WARCWriterProcessor: the raw bytes of every fetch into WARC files, with revisit records.

For each URI with status > 0 and a recording (``curi.recording``), writes, each record its own
gzip member and all records of one URI contiguous (an HTTP answer the frontier will retry —
``frontier.retries.http_statuses`` with tries left — is not written: the archive holds the
URI's final answer, so replay never shows a 503 that a retry turned into a 200):

* a ``response`` record (block = raw response head + body as received; ``WARC-Payload-Digest`` =
  ``curi.payload_digest``; ``WARC-Date`` = fetch start; ``WARC-IP-Address``; ``WARC-Truncated``
  when the recording was cut), **or** a ``revisit`` record (block = the HTTP response head only)
  when the payload needs no second copy:

  - ``server-not-modified``: FetchHTTP got a 304 to a conditional request and set
    ``curi.revisit``; refers to the earlier capture (from the fetch history when known). When
    the earlier payload was read back (``curi.earlier_status``: :mod:`crawler.continuity`) and
    ``not_modified_revisit`` is ``identical-payload-digest`` (the default), the revisit is
    written as that profile instead, its block the stored response's head freshened by the
    304's (status line of the stored response, e.g. 200): the 304 proved the payload identical,
    and pywb replays a revisit whose own head is a 304 as an empty 304, so the page would not
    replay. crawl.log keeps the 304 and ``duplicate:server-not-modified``; the request record
    (with ``revisit_extra_records``) keeps the conditional request. ``server-not-modified``
    keeps the 304 head, as Heritrix writes it.
  - ``identical-payload-digest`` (``dedup``): the digest index (``ctx.digest_index``: this run,
    the job's earlier crawls, every worker of a ``--workers`` crawl) already holds a capture of
    this payload, by any URI, or an earlier collection's index
    (``ctx.collections``, order key ``dedup.collections``) holds a capture of this URI with this
    payload; refers to it, adds ``WARC-Truncated: length``, sets ``curi.revisit`` and annotates
    ``duplicate:digest``. Truncated captures and payloads under ``dedup_min_size_bytes`` are
    never deduplicated.

* then a ``request`` record (raw request head) and a ``metadata`` record (via, hops, outlinks),
  both ``WARC-Concurrent-To`` the first (after a revisit of the same URI's own earlier capture —
  identical payload or 304 — only with ``revisit_extra_records``: the original's metadata
  already lists the same outlinks; a request other than a GET always has its record: its
  method and body key the response in the CDXJ index, :mod:`crawler.archive.method_query`), and
  any extra ``metadata`` records a processor left in ``curi.data[EXTRA_METADATA]`` (a page's
  media info JSON).

``dns:`` URIs with a recording get one ``response`` record, ``Content-Type: text/dns``, the DNS
answer as block. Sets ``curi.extra_info['warcFilename']`` / ``['warcFileOffset']`` (offset of the
first record). After writing, records the fetch in the history and the payload's first capture in
the digest index (none without a history: no dedup then). A write error gives the URI a
non-fatal error and ``unwritten:ioerror``; the file becomes ``….invalid``, the next URI starts a
new one. A full disk is not an error: the thread waits for space and writes the records then
(:class:`~crawler.disk.SpaceWait`; the file is cut back to the last whole record first), so no
capture is dropped and no half record stays in a file. File naming, ``.open``, warcinfo and
rollover: :mod:`processors.write.warc_files`.
With the order's ``archive.index`` on, each closed file is indexed into ``RUN_DIR/indexes/`` on a
background thread (:class:`crawler.archive.indexer.BackgroundIndexer`); :meth:`stop` waits for it.
The writer hands it what each URI's first record holds (URL, date, type, HTTP status and type,
payload digest, offset, length), so the file need not be read again.

Thread-safety: records of one URI are built and compressed by the calling thread into a spool
(no lock held), then appended under the file set's lock (a plain copy), so threads compress in
parallel. Members are deflated with ISA-L by default (``compressor: isal``, level 2: over ten
times faster than zlib's level 6 for ~15% more bytes; level 3 saves ~2% of the bytes for about
twice level 2's CPU); ``compressor: zlib`` with ``compress_level: 6`` writes what Heritrix
writes. Heritrix counterpart:
``WARCWriterChainProcessor`` with ``ContentDigestHistoryLoader`` /
``ContentDigestHistoryStorer`` and ``FetchHistoryProcessor`` (dedup).
"""

from __future__ import annotations

import io
import tempfile
import threading
import traceback
from http import HTTPStatus
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import Field, field_validator, model_validator

from crawler import CrawlURI, Params, Processor, ProcessorContext, __version__
from crawler.archive.indexer import BackgroundIndexer, LocatedEntry
from crawler.archive.method_query import request_method_query
from crawler.archive.warc_scan import IndexEntry, http_status_and_type
from crawler.disk import SPACE_WAIT, is_disk_full
from crawler.frontier import RetryPolicy
from processors.fetch.user_agent import user_agent
from processors.write.revisits import (
    IDENTICAL_PAYLOAD_DIGEST,
    SERVER_NOT_MODIFIED,
    Referent,
    digest_checked,
    find_referent,
    remember_capture,
)
from processors.write.warc_files import WARCFileSet
from processors.write.warc_records import (
    CONFORMS_TO,
    EXTRA_METADATA,
    HTTP_REQUEST,
    HTTP_RESPONSE,
    WARC_FIELDS,
    WARCRecordWriter,
    compressed_already,
    metadata_block,
    revisit_profile,
    warcinfo_block,
)
from processors.write.warc_streams import GzipMember

_TRUNCATED = {
    "length": "length",
    "lenTrunc": "length",
    "time": "time",
    "timeTrunc": "time",
    "disconnect": "disconnect",
}
_SPOOL_IN_MEMORY_BYTES = 4 * 1024 * 1024
_ISAL_MAX_LEVEL = 3

_TEMPLATE_FIELDS = {
    "prefix": "WEB",
    "timestamp17": "0" * 17,
    "serial": 0,
    "pid": 1,
    "hostname": "h",
}


class WARCWriterParams(Params):
    """Parameters of :class:`WARCWriterProcessor`."""

    prefix: str = Field("WEB", min_length=1, description="first part of every WARC file name")
    directory: str = Field("warcs", description="where WARCs go, relative to the run directory")
    max_file_size_bytes: int = Field(1_000_000_000, gt=0, description="roll over past this size")
    compress: bool = Field(True, description="gzip each record (.warc.gz) or not (.warc)")
    compressor: Literal["isal", "zlib"] = Field(
        "isal", description="deflate library: isal (ISA-L, ~10x faster) or zlib (as Heritrix)"
    )
    compress_level: int = Field(
        2,
        ge=1,
        le=9,
        description="level of the gzip members: isal 1-3 (3: ~2% smaller, 2x the CPU), zlib 1-9",
    )
    write_requests: bool = Field(True, description="write a request record per fetch")
    write_metadata: bool = Field(True, description="write a metadata record (via, hops, outlinks)")
    warc_version: Literal["1.0", "1.1"] = Field("1.1", description="WARC format version")
    template: str = Field(
        "{prefix}-{timestamp17}-{serial:05d}-{pid}~{hostname}",
        description="file name sans extension: {prefix} {timestamp17} {serial} {pid} {hostname}",
    )
    dedup: bool = Field(
        True,
        description="write a headers-only revisit for a payload already captured (digest index)",
    )
    dedup_min_size_bytes: int = Field(
        1, ge=0, description="smaller payloads are always written in full (1: all but empty ones)"
    )
    store_compressed_payloads: bool = Field(
        True,
        description="store already-compressed payloads (images, video, zip, Content-Encoding) "
        "without deflating them again (gzip level 0): same size, far less CPU",
    )
    revisit_extra_records: bool = Field(
        False,
        description="beside a revisit of the same URI's earlier capture (identical payload or a "
        "304: a recrawl), also write the fetch's request and metadata records (the original's "
        "metadata lists the same outlinks; false: the revisit alone, a third of the bytes); "
        "other revisits always get them",
    )
    not_modified_revisit: Literal["identical-payload-digest", "server-not-modified"] = Field(
        "identical-payload-digest",
        description="profile of a 304's revisit whose earlier payload was read back: "
        "identical-payload-digest with the stored head freshened by the 304's (replays in "
        "pywb), or server-not-modified with the 304 head (as Heritrix; pywb replays an empty "
        "304)",
    )
    skip_identical_digests: bool = Field(
        False,
        description="write nothing for a duplicate payload (annotated unwritten:identicalDigest)",
    )

    @model_validator(mode="after")
    def _level_fits_compressor(self) -> WARCWriterParams:
        if self.compressor == "isal" and self.compress_level > _ISAL_MAX_LEVEL:
            raise ValueError(
                f"compress_level {self.compress_level} is past isal's levels 1-"
                f"{_ISAL_MAX_LEVEL}: use 1-{_ISAL_MAX_LEVEL}, or compressor: zlib for levels 1-9"
            )
        return self

    @field_validator("template")
    @classmethod
    def _template_formats(cls, value: str) -> str:
        try:
            value.format(**_TEMPLATE_FIELDS)
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(f"bad WARC file name template {value!r}: {exc!r}") from None
        return value


class WARCWriterProcessor(Processor[WARCWriterParams]):
    """Writes WARC records for fetched URIs (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        p = self.params
        self._records = WARCRecordWriter(p.warc_version, p.compress, p.compress_level, p.compressor)
        self._files: WARCFileSet | None = None
        self._indexer: BackgroundIndexer | None = None
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}
        self._dedup_bytes = 0
        self._retry: RetryPolicy | None = None

    # ----------------------------------------------------------------- lifecycle
    def start(self, ctx: ProcessorContext) -> None:
        super().start(ctx)
        self._retry = RetryPolicy(ctx.order.frontier.retries)
        p = self.params
        directory = Path(p.directory)
        directory = directory if directory.is_absolute() else ctx.run_dir / directory
        directory.mkdir(parents=True, exist_ok=True)
        if ctx.watch_disk is not None:
            ctx.watch_disk(directory)
        if ctx.order.archive.index:
            self._indexer = BackgroundIndexer(ctx.run_dir / "indexes")
        self._files = WARCFileSet(
            directory,
            prefix=p.prefix,
            template=p.template,
            compress=p.compress,
            max_file_size_bytes=p.max_file_size_bytes,
            warcinfo=self._warcinfo,
            now_s=ctx.clock.time,
            on_closed=self._indexer.submit if self._indexer is not None else None,
        )

    def stop(self) -> None:
        if self._files is not None:
            self._files.close()
        if self._indexer is not None:
            self._indexer.close()

    def report(self) -> list[str]:
        lines = super().report()
        with self._lock:
            counts = dict(self._counts)
            dedup_bytes = self._dedup_bytes
        files = self._files
        if files is not None and files.warcinfo_records:
            counts["warcinfo"] = files.warcinfo_records
        text = ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items()))
        lines.append(f"  records written: {sum(counts.values())} ({text or 'none'})")
        lines.append(f"  payload bytes not rewritten (revisits): {dedup_bytes}")
        collections = self.ctx.collections if self.ctx is not None else None
        if collections is not None:
            lines.extend(collections.report())
        if files is not None:
            lines.append(f"  bytes written: {files.bytes_written}")
            lines.append(f"  files: {files.files_opened}")
        return lines

    # ----------------------------------------------------------------- processing
    def should_process(self, curi: CrawlURI) -> bool:
        status = curi.status
        return (
            status > 0
            and curi.recording is not None
            and curi.uri.startswith(("http://", "https://", "dns:", "urn:"))
            and not (status >= 400 and self._retry is not None and self._retry.will_retry(curi))
        )

    def inner_process(self, curi: CrawlURI) -> None:
        files = self._files
        if files is None:
            raise RuntimeError(f"processor {self.name!r} used before start()")
        history = self.context.history
        digests = self.context.digest_index
        is_dns = curi.uri.startswith("dns:")
        p = self.params
        referent = (
            None
            if is_dns or curi.uri.startswith("urn:")
            else find_referent(
                curi, history, p.dedup, p.dedup_min_size_bytes, self.context.collections, digests
            )
        )
        if (
            referent is not None
            and referent.profile == IDENTICAL_PAYLOAD_DIGEST
            and self.params.skip_identical_digests
        ):
            curi.annotate("unwritten:identicalDigest")
            remember_capture(curi, history, referent, "", "", "", 0, digests)
            return
        spool = _spool_for(curi.recording.body_size)
        try:
            first_id, date, kinds, entry = self._build(curi, spool, referent, is_dns)
            size = spool.tell()
            spool.seek(0)
            try:
                name, offset = files.append(spool, size, entry)
            except OSError as exc:
                curi.nonfatal_errors.append((exc, traceback.format_exc()))
                curi.annotate("unwritten:ioerror")
                return
        finally:
            spool.close()
        with self._lock:
            for kind in kinds:
                self._counts[kind] = self._counts.get(kind, 0) + 1
            if referent is not None:
                self._dedup_bytes += curi.recording.body_size
        curi.extra_info["warcFilename"] = name
        curi.extra_info["warcFileOffset"] = offset
        if not is_dns and not curi.uri.startswith("urn:"):
            # No referent after a lookup: the digest index just missed this payload.
            looked_up = referent is None and digest_checked(curi, p.dedup, p.dedup_min_size_bytes)
            remember_capture(
                curi, history, referent, first_id, date, name, offset, digests, looked_up
            )

    # ----------------------------------------------------------------- records
    def _build(
        self, curi: CrawlURI, spool: IO[bytes], referent: Referent | None, is_dns: bool
    ) -> tuple[str, str, list[str], Any]:
        """Build ``curi``'s records into ``spool``. A spool past memory goes to the temporary
        directory: if that disk is full, wait for space and build again."""
        while True:
            try:
                if is_dns:
                    return self._build_dns(curi, spool)
                if curi.uri.startswith("urn:"):
                    return self._build_resource(curi, spool)
                return self._build_http(curi, spool, referent)
            except OSError as exc:
                if not is_disk_full(exc):
                    raise
                SPACE_WAIT.wait(Path(tempfile.gettempdir()), "warc spool", exc)
                spool.seek(0)
                spool.truncate()

    def _build_dns(self, curi: CrawlURI, out: IO[bytes]) -> tuple[str, str, list[str], Any]:
        rec = curi.recording
        date = self._date(curi)
        headers = [("WARC-Date", date)]
        if curi.ip_address:
            headers.append(("WARC-IP-Address", curi.ip_address))
        body = rec.body_stream()
        start = out.tell()
        record_id = self._records.write(
            out, curi.uri, "response", headers, b"", body, rec.body_size, "text/dns"
        )
        # A block that is not HTTP: its payload digest (as indexers compute it) is the block's.
        entry = IndexEntry(curi.uri, date, "response", "text/dns", None, None, rec.payload_digest)
        return record_id, date, ["response"], _located(entry, start, out.tell())

    def _build_resource(self, curi: CrawlURI, out: IO[bytes]) -> tuple[str, str, list[str], Any]:
        """A ``resource`` record (e.g. a browser screenshot, ``urn:screenshot:<page>``); no index
        entry of the writer's own (the indexer reads the record from the file)."""
        rec = curi.recording
        date = self._date(curi)
        headers = [("WARC-Date", date), ("WARC-Payload-Digest", rec.payload_digest)]
        record_id = self._records.write(
            out, curi.uri, "resource", headers, b"", rec.body_stream(), rec.body_size,
            curi.content_type or "application/octet-stream",
        )  # fmt: skip
        return record_id, date, ["resource"], None

    def _build_http(
        self, curi: CrawlURI, out: IO[bytes], referent: Referent | None
    ) -> tuple[str, str, list[str], Any]:
        rec = curi.recording
        date = self._date(curi)
        headers = [("WARC-Date", date)]
        writer = self._records
        start = out.tell()
        head = rec.response_head
        if referent is None:
            payload_digest = curi.payload_digest or rec.payload_digest
            headers.append(("WARC-Payload-Digest", payload_digest))
            digest: str | None = payload_digest
            self._common_headers(curi, headers)
            if rec.truncated:
                headers.append(("WARC-Truncated", _TRUNCATED.get(rec.truncated, "unspecified")))
            level = (
                0 if self.params.store_compressed_payloads and compressed_already(curi) else None
            )
            first_id = writer.write(
                out, curi.uri, "response", headers, rec.response_head, rec.body_stream(),
                rec.body_size, HTTP_RESPONSE, level,
            )  # fmt: skip
            kinds = ["response"]
        else:
            profile = referent.profile
            truncated = profile == IDENTICAL_PAYLOAD_DIGEST and rec.body_size > 0
            if (
                profile == SERVER_NOT_MODIFIED
                and curi.earlier_status
                and referent.payload_digest
                and self.params.not_modified_revisit == IDENTICAL_PAYLOAD_DIGEST
            ):
                profile, head = IDENTICAL_PAYLOAD_DIGEST, freshened_head(curi)
            headers.append(("WARC-Profile", revisit_profile(profile, writer.warc_version)))
            headers.append(("WARC-Refers-To-Target-URI", referent.uri))
            if referent.date:
                headers.append(("WARC-Refers-To-Date", referent.date))
            if referent.record_id:
                headers.append(("WARC-Refers-To", referent.record_id))
            digest = referent.payload_digest
            if digest:
                headers.append(("WARC-Payload-Digest", digest))
            self._common_headers(curi, headers)
            if truncated:
                headers.append(("WARC-Truncated", "length"))
            first_id = writer.write(out, curi.uri, "revisit", headers, head)
            kinds = ["revisit"]
        entry = self._index_entry(curi, date, kinds[0], digest, start, out.tell(), head)
        if (
            referent is not None
            and referent.uri == curi.uri
            and not self.params.revisit_extra_records
            # A POST's request record keys its revisit in the index (another body, same URI).
            and rec.request_head[:4] in (b"GET ", b"")
        ):
            return first_id, date, kinds, entry
        concurrent = [("WARC-Date", date), ("WARC-Concurrent-To", first_id)]
        if self.params.write_requests and rec.request_head:
            writer.write(
                out, curi.uri, "request", concurrent, rec.request_head, None, 0, HTTP_REQUEST
            )
            kinds.append("request")
        if self.params.write_metadata:
            block = metadata_block(curi)
            writer.write(out, curi.uri, "metadata", concurrent, block, None, 0, WARC_FIELDS)
            kinds.append("metadata")
        for target, content_type, text in curi.data.get(EXTRA_METADATA, ()):
            block = text.encode("utf-8", "replace")
            writer.write(out, target, "metadata", concurrent, block, None, 0, content_type)
            kinds.append("metadata")
        return first_id, date, kinds, entry

    def _index_entry(
        self,
        curi: CrawlURI,
        date: str,
        kind: str,
        digest: str | None,
        start: int,
        end: int,
        head: bytes | None = None,
    ) -> Any:
        """What the CDXJ index needs of the URI's first record (its ``WARC-Payload-Digest`` is
        ``digest``); None (the indexer then reads the file) when its URI would be written
        altered or it has no payload digest."""
        if self._indexer is None:
            return None
        if not digest or "\r" in curi.uri or "\n" in curi.uri:
            return None
        rec = curi.recording
        status, mime = http_status_and_type(head or rec.response_head)
        request = None
        # Keyed by the request only when its record is written, so `crawler index` agrees.
        if self.params.write_requests and rec.request_head[:4] != b"GET ":
            request = request_method_query(rec.request_head)
        entry = IndexEntry(curi.uri, date, kind, HTTP_RESPONSE, status, mime, digest, request)
        return _located(entry, start, end)

    @staticmethod
    def _common_headers(curi: CrawlURI, headers: list[tuple[str, str]]) -> None:
        if curi.ip_address:
            headers.append(("WARC-IP-Address", curi.ip_address))
        if curi.http_version.upper() in ("HTTP/2", "HTTP/2.0"):
            headers.append(("WARC-Protocol", "h2"))

    def _date(self, curi: CrawlURI) -> str:
        return self._records.date(curi.fetch_start_ms or int(self.context.clock.time() * 1000))

    def _warcinfo(self, filename: str) -> bytes:
        order = self.context.order
        version = self.params.warc_version
        files = self._files
        block = warcinfo_block(
            {
                "software": f"crawler/{__version__}",
                "hostname": files.hostname if files is not None else None,
                "operator": order.operator.contact_url,
                "publisher": order.operator.organization,
                "isPartOf": order.name,
                "description": order.description,
                "robots": order.robots.policy,
                "http-header-user-agent": user_agent(order),
                "http-header-from": order.operator.from_email,
                "format": f"WARC File Format {version}",
                "conformsTo": CONFORMS_TO[version],
            }
        )
        buf = io.BytesIO()
        headers = [
            ("WARC-Date", self._records.date(int(self.context.clock.time() * 1000))),
            ("WARC-Filename", filename),
        ]
        self._records.write(buf, "", "warcinfo", headers, block, None, 0, WARC_FIELDS)
        return buf.getvalue()


def freshened_head(curi: CrawlURI) -> bytes:
    """The HTTP head of the stored response a 304 validated, freshened by the 304's headers
    (``curi.response_headers``, as :mod:`crawler.continuity` set them), with the stored status."""
    status = curi.earlier_status
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = ""
    lines = [f"HTTP/1.1 {status} {reason}".rstrip()]
    lines += [f"{name}: {value}" for name, value in curi.response_headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")


def _spool_for(body_size: int) -> IO[bytes]:
    """Where a URI's records are built: in memory for a body up to a buffered record's size
    (its members cannot outgrow memory), else a file that moves to disk past 4 MB."""
    if body_size <= GzipMember.BUFFER_BYTES:
        return io.BytesIO()
    return tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY_BYTES)


def _located(entry: IndexEntry, start: int, end: int) -> LocatedEntry:
    """``entry`` of the record at ``start``..``end`` of a URI's spool."""
    return LocatedEntry(start, end - start, entry)
