"""WARCWriterProcessor: the raw bytes of every fetch into WARC files (the only warcio user).

For each URI with status > 0 and a recording (``curi.recording``), writes, each as its own gzip
member: a ``response`` record (block = raw response head + body as received; ``WARC-Payload-Digest``
= ``curi.payload_digest``; ``WARC-Date`` = fetch start; ``WARC-IP-Address``; ``WARC-Truncated``
when the recording was cut), then a ``request`` record (raw request head) and a ``metadata``
record (via, hops, outlinks), both ``WARC-Concurrent-To`` the response. ``dns:`` URIs with a
recording get a ``text/dns`` response record. Sets ``curi.extra_info['warcFilename']`` and
``['warcFileOffset']`` (offset of the response record).

Files are ``<prefix>-<yyyymmddhhmmssSSS>-<serial:05>-<pid>~<hostname>.warc.gz`` (``template``),
named ``….open`` while written, begin with a ``warcinfo`` record, and roll over before a URI's
records once they are past ``max_file_size_bytes``. A write error renames the file ``….invalid``,
adds a non-fatal error to the URI and the next URI starts a new file.

Thread-safety: records of one URI are built and compressed by the calling thread into a spool
(no lock held), then appended to the current file under a lock (a plain copy), so threads
compress in parallel while records of one URI stay contiguous. Heritrix counterpart:
``WARCWriterChainProcessor`` / WebArchive-Commons ``WARCWriter``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import Field, field_validator
from warcio.recordloader import ArcWarcRecord
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from crawler import CrawlURI, Params, Processor, ProcessorContext, __version__
from processors.fetch.user_agent import user_agent
from processors.write.warc_streams import ConcatStream, GzipMember

CONFORMS_TO = {
    "1.0": "http://bibnum.bnf.fr/WARC/WARC_ISO_28500_version1_latestdraft.pdf",
    "1.1": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
}
_TRUNCATED = {"length": "length", "lenTrunc": "length", "time": "time", "timeTrunc": "time"}
_SPOOL_IN_MEMORY_BYTES = 4 * 1024 * 1024
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
    compress_level: int = Field(6, ge=1, le=9, description="zlib level of the gzip members")
    write_requests: bool = Field(True, description="write a request record per fetch")
    write_metadata: bool = Field(True, description="write a metadata record (via, hops, outlinks)")
    warc_version: Literal["1.0", "1.1"] = Field("1.1", description="WARC format version")
    template: str = Field(
        "{prefix}-{timestamp17}-{serial:05d}-{pid}~{hostname}",
        description="file name sans extension: {prefix} {timestamp17} {serial} {pid} {hostname}",
    )

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
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = None
        self._path: Path | None = None
        self._serial = 0
        self._last_stamp = ""
        self._hostname = socket.gethostname()
        self._dir = Path(self.params.directory)
        self._counts: dict[str, int] = {}
        self._bytes_written = 0
        self._files_closed = 0

    # ----------------------------------------------------------------- lifecycle
    def start(self, ctx: ProcessorContext) -> None:
        super().start(ctx)
        directory = Path(self.params.directory)
        self._dir = directory if directory.is_absolute() else ctx.run_dir / directory
        self._dir.mkdir(parents=True, exist_ok=True)

    def stop(self) -> None:
        with self._lock, contextlib.suppress(OSError):
            self._close_file()

    def report(self) -> list[str]:
        with self._lock:
            counts = ", ".join(f"{kind} {n}" for kind, n in sorted(self._counts.items()))
            lines = super().report()
            lines.append(f"  records written: {sum(self._counts.values())} ({counts or 'none'})")
            lines.append(f"  bytes written: {self._bytes_written}")
            lines.append(f"  files: {self._files_closed + (self._file is not None)}")
            return lines

    # ----------------------------------------------------------------- processing
    def should_process(self, curi: CrawlURI) -> bool:
        return (
            curi.status > 0
            and curi.recording is not None
            and curi.uri.startswith(("http://", "https://", "dns:"))
        )

    def inner_process(self, curi: CrawlURI) -> None:
        spool = tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY_BYTES)  # noqa: SIM115
        try:
            kinds = self._build_records(curi, spool)
            size = spool.tell()
            spool.seek(0)
            with self._lock:
                try:
                    name, offset = self._append(spool, size)
                except OSError as exc:
                    curi.nonfatal_errors.append((exc, traceback.format_exc()))
                    curi.annotate("unwritten:ioerror")
                    self._invalidate()
                    return
                for kind in kinds:
                    self._counts[kind] = self._counts.get(kind, 0) + 1
            curi.extra_info["warcFilename"] = name
            curi.extra_info["warcFileOffset"] = offset
        finally:
            spool.close()

    # ----------------------------------------------------------------- records
    def _build_records(self, curi: CrawlURI, out: IO[bytes]) -> list[str]:
        rec = curi.recording
        date = _warc_date(curi.fetch_start_ms or int(self.context.clock.time() * 1000), self._v11)
        body = rec.body_stream()
        if curi.uri.startswith("dns:"):
            headers = [("WARC-Date", date)]
            if curi.ip_address:
                headers.append(("WARC-IP-Address", curi.ip_address))
            self._write(out, curi.uri, "response", headers, b"", body, rec.body_size, "text/dns")
            return ["response"]
        headers = [("WARC-Date", date)]
        digest = curi.payload_digest or rec.payload_digest
        headers.append(("WARC-Payload-Digest", digest))
        if curi.ip_address:
            headers.append(("WARC-IP-Address", curi.ip_address))
        if rec.truncated:
            headers.append(("WARC-Truncated", _TRUNCATED.get(rec.truncated, "unspecified")))
        response_id = self._write(
            out, curi.uri, "response", headers, rec.response_head, body, rec.body_size, None
        )
        kinds = ["response"]
        concurrent = [("WARC-Date", date), ("WARC-Concurrent-To", response_id)]
        if self.params.write_requests and rec.request_head:
            self._write(out, curi.uri, "request", concurrent, rec.request_head, None, 0, None)
            kinds.append("request")
        if self.params.write_metadata:
            block = _metadata_block(curi)
            self._write(out, curi.uri, "metadata", concurrent, block, None, 0, None)
            kinds.append("metadata")
        return kinds

    def _write(
        self,
        out: IO[bytes],
        uri: str,
        kind: str,
        headers: list[tuple[str, str]],
        head: bytes,
        body: IO[bytes] | None,
        body_size: int,
        content_type: str | None,
    ) -> str:
        """Write one record (one gzip member if compressing); returns its WARC-Record-ID."""
        writer = _RawWARCWriter(
            GzipMember(out, self.params.compress_level) if self.params.compress else out,
            gzip=False,
            warc_version=self.params.warc_version,
        )
        warc_headers = writer.warc_headers(uri, kind, headers)
        stream = ConcatStream(head, body)
        length = len(head) + body_size
        ctype = content_type or writer.WARC_RECORDS.get(kind, "application/octet-stream")
        record = ArcWarcRecord("warc", kind, warc_headers, stream, None, ctype, length)
        record.payload_length = length
        writer.write_record(record)
        if self.params.compress:
            writer.out.finish()
        return str(warc_headers.get_header("WARC-Record-ID"))

    @property
    def _v11(self) -> bool:
        return self.params.warc_version == "1.1"

    # ----------------------------------------------------------------- files (under lock)
    def _append(self, spool: IO[bytes], size: int) -> tuple[str, int]:
        if self._file is not None and self._file.tell() > self.params.max_file_size_bytes:
            self._close_file()
        if self._file is None:
            self._open_file()
        assert self._file is not None and self._path is not None
        offset = self._file.tell()
        shutil.copyfileobj(spool, self._file, 1024 * 1024)
        self._file.flush()
        self._bytes_written += size
        return self._path.name[: -len(".open")], offset

    def _open_file(self) -> None:
        stamp = _timestamp17(self.context.clock.time())
        if stamp <= self._last_stamp:
            stamp = str(int(self._last_stamp) + 1)
        self._last_stamp = stamp
        base = self.params.template.format(
            prefix=self.params.prefix,
            timestamp17=stamp,
            serial=self._serial,
            pid=os.getpid(),
            hostname=self._hostname,
        )
        self._serial += 1
        name = base + (".warc.gz" if self.params.compress else ".warc")
        path = self._dir / (name + ".open")
        handle = open(path, "xb")  # noqa: SIM115 - closed in _close_file
        self._file, self._path = handle, path
        try:
            info = self._warcinfo(name)
            handle.write(info)
            handle.flush()
            self._bytes_written += len(info)
            self._counts["warcinfo"] = self._counts.get("warcinfo", 0) + 1
        except OSError:
            self._invalidate()
            raise

    def _warcinfo(self, filename: str) -> bytes:
        order = self.context.order
        version = self.params.warc_version
        fields = {
            "software": f"crawler/{__version__}",
            "hostname": self._hostname,
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
        block = "".join(f"{k}: {v}\r\n" for k, v in fields.items() if v).encode("utf-8")
        buf = tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY_BYTES)  # noqa: SIM115
        with buf:
            headers = [
                ("WARC-Date", _warc_date(int(self.context.clock.time() * 1000), self._v11)),
                ("WARC-Filename", filename),
            ]
            self._write(buf, "", "warcinfo", headers, block, None, 0, None)
            buf.seek(0)
            return buf.read()

    def _close_file(self) -> None:
        handle, path = self._file, self._path
        self._file = self._path = None
        if handle is None or path is None:
            return
        handle.close()
        os.replace(path, path.with_name(path.name[: -len(".open")]))
        self._files_closed += 1

    def _invalidate(self) -> None:
        handle, path = self._file, self._path
        self._file = self._path = None
        if handle is not None:
            with contextlib.suppress(OSError):
                handle.close()
        if path is not None:
            with contextlib.suppress(OSError):
                os.replace(path, path.with_name(path.name[: -len(".open")] + ".invalid"))


class _RawWARCWriter(WARCWriter):  # type: ignore[misc]
    """warcio's writer, told to keep our raw HTTP bytes and to compute only the block digest.

    The payload digest comes from the recording (computed while fetching); a request record
    gets none, as in Heritrix.
    """

    def ensure_digest(self, record: Any, block: bool = True, payload: bool = True) -> None:
        super().ensure_digest(record, block=block, payload=False)

    def warc_headers(self, uri: str, kind: str, extra: list[tuple[str, str]]) -> StatusAndHeaders:
        headers = StatusAndHeaders("", [], protocol=self.warc_version)
        headers.add_header("WARC-Type", kind)
        headers.add_header("WARC-Record-ID", self._make_warc_id())
        if uri:
            headers.add_header("WARC-Target-URI", uri)
        for name, value in extra:
            headers.add_header(name, value)
        return headers


def _metadata_block(curi: CrawlURI) -> bytes:
    lines = []
    if curi.is_seed:
        lines.append("seed:")
    if curi.via:
        lines.append(f"via: {curi.via}")
    lines.append(f"hopsFromSeed: {curi.hop_path_text()}")
    if curi.source_tag:
        lines.append(f"sourceTag: {curi.source_tag}")
    if curi.fetch_duration_ms >= 0:
        lines.append(f"fetchTimeMs: {curi.fetch_duration_ms}")
    for link in curi.outlinks:
        lines.append(f"outlink: {link.uri} {link.hop} {link.context or '-'}")
    text = "\r\n".join(line.replace("\r", " ").replace("\n", " ") for line in lines) + "\r\n"
    return text.encode("utf-8", "replace")


def _timestamp17(epoch_s: float) -> str:
    ms = int(epoch_s * 1000)
    return time.strftime("%Y%m%d%H%M%S", time.gmtime(ms // 1000)) + f"{ms % 1000:03d}"


def _warc_date(epoch_ms: int, fractional: bool) -> str:
    """ISO 8601 UTC; WARC/1.1 allows milliseconds, WARC/1.0 has whole seconds (as Heritrix)."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch_ms // 1000))
    return f"{stamp}.{epoch_ms % 1000:03d}Z" if fractional else stamp + "Z"
