"""WARCRecordWriter writes what warcio's WARCWriter writes; base32 digests, record ids, dates."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import random
import re
import subprocess
import sys
import threading
import time
import uuid
import zlib
from pathlib import Path
from typing import Any

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.recordloader import ArcWarcRecord
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from crawler import CrawlURI, Link, Recording
from crawler.recording import sha1_base32
from processors.write.warc_records import (
    HTTP_REQUEST,
    HTTP_RESPONSE,
    WARC_FIELDS,
    WARCRecordWriter,
    metadata_block,
    new_record_id,
    revisit_profile,
    warcinfo_block,
)
from processors.write.warc_streams import GzipMember, gzip_member

URI = "http://site.example/päge?q=1"
REQUEST_HEAD = b"GET /p HTTP/1.1\r\nHost: site.example\r\nUser-Agent: t\r\n\r\n"
RESPONSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5000\r\n\r\n"
DATE = "2023-11-14T22:13:20.123Z"


# ------------------------------------------------------------------ base32, ids, dates
def test_sha1_base32_is_rfc4648_base32_for_every_digest() -> None:
    rng = random.Random(7)
    digests = [rng.randbytes(20) for _ in range(50_000)]
    digests += [bytes(20), b"\xff" * 20]
    digests += [(1 << bit).to_bytes(20, "big") for bit in range(160)]  # each bit lands right
    for digest in digests:
        assert sha1_base32(digest) == "sha1:" + base64.b32encode(digest).decode("ascii")


def test_sha1_base32_of_other_lengths_still_matches_base64() -> None:
    for size in (0, 1, 5, 19, 21, 32):
        digest = os.urandom(size)
        assert sha1_base32(digest) == "sha1:" + base64.b32encode(digest).decode("ascii")


RECORD_ID_RE = re.compile(
    r"<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}>\Z"
)


def test_record_ids_are_random_version_4_uuid_urns() -> None:
    ids = [new_record_id() for _ in range(20_000)]
    assert len(set(ids)) == len(ids)
    variants = set()
    for record_id in ids:
        assert RECORD_ID_RE.match(record_id), record_id
        parsed = uuid.UUID(record_id[len("<urn:uuid:") : -1])
        assert parsed.version == 4
        assert parsed.variant == uuid.RFC_4122
        variants.add(record_id[29])
    assert variants == set("89ab")  # the variant's two low bits are random
    # Every other hex digit takes all 16 values somewhere: the 122 bits really are random.
    for pos in (10, 20, 25, 30, 35, 40, 45):
        assert {record_id[pos] for record_id in ids} == set("0123456789abcdef"), pos


def reference_date(epoch_ms: int, warc_version: str) -> str:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch_ms // 1000))
    return f"{stamp}.{epoch_ms % 1000:03d}Z" if warc_version == "1.1" else stamp + "Z"


@pytest.mark.parametrize("warc_version", ["1.0", "1.1"])
def test_date_is_the_formatted_instant_whatever_the_cache_holds(warc_version: str) -> None:
    writer = WARCRecordWriter(warc_version, True, 3)
    rng = random.Random(3)
    base = 1_700_000_000_000
    instants = [0, 999, 1000, base, base + 1, base + 999, base + 1000, base - 1, base]
    instants += [base + rng.randrange(-5000, 5000) for _ in range(2000)]
    instants += [rng.randrange(0, 4_000_000_000_000) for _ in range(500)]
    for epoch_ms in instants:
        assert writer.date(epoch_ms) == reference_date(epoch_ms, warc_version), epoch_ms
    assert writer.date(base) == (
        "2023-11-14T22:13:20.000Z" if warc_version == "1.1" else "2023-11-14T22:13:20Z"
    )


def test_date_is_right_from_many_threads_at_once() -> None:
    writer = WARCRecordWriter("1.1", True, 3)
    wrong: list[int] = []

    def hammer(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(3000):
            epoch_ms = 1_700_000_000_000 + rng.randrange(0, 20_000)
            if writer.date(epoch_ms) != reference_date(epoch_ms, "1.1"):
                wrong.append(epoch_ms)

    threads = [threading.Thread(target=hammer, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not wrong


# ------------------------------------------------------------------ blocks
def test_metadata_block_lines_and_line_breaks_inside_values() -> None:
    curi = CrawlURI(
        "http://a.example/p",
        via="http://a.example/",
        hop_path="LE",
        source_tag="seeds",
        fetch_duration_ms=12,
        outlinks=[Link("http://a.example/x", "L", "a/@href"), Link("http://a.example/y", "E")],
    )
    assert metadata_block(curi) == (
        b"via: http://a.example/\r\nhopsFromSeed: LE\r\nsourceTag: seeds\r\n"
        b"fetchTimeMs: 12\r\noutlink: http://a.example/x L a/@href\r\n"
        b"outlink: http://a.example/y E -\r\n"
    )
    curi.is_seed = True
    curi.via = "http://a.example/\r\nWARC-Type: evil"
    curi.outlinks = [
        Link("http://a.example/z", "L", "a\n@href"),
        Link("http://a.example/\u00fc", "L"),
    ]
    assert metadata_block(curi) == (
        b"seed:\r\nvia: http://a.example/  WARC-Type: evil\r\nhopsFromSeed: LE\r\n"
        b"sourceTag: seeds\r\nfetchTimeMs: 12\r\noutlink: http://a.example/z L a @href\r\n"
        + "outlink: http://a.example/\u00fc L -\r\n".encode()
    )


# ------------------------------------------------------------------ records, against warcio
class _BlockDigestOnlyWriter(WARCWriter):  # type: ignore[misc]
    """warcio's writer with the payload digest left to the caller, as the crawler does."""

    def ensure_digest(self, record: Any, block: bool = True, payload: bool = True) -> None:
        super().ensure_digest(record, block=block, payload=False)


def warcio_record(
    warc_version: str,
    kind: str,
    record_id: str,
    uri: str,
    headers: list[tuple[str, str]],
    block: bytes,
    content_type: str,
) -> bytes:
    """The uncompressed bytes warcio writes for this record; warcio computes the block digest."""
    writer = _BlockDigestOnlyWriter(None, gzip=False, warc_version=warc_version)
    rec_headers = StatusAndHeaders("", [], protocol=writer.warc_version)
    rec_headers.add_header("WARC-Type", kind)
    rec_headers.add_header("WARC-Record-ID", record_id)
    if uri:
        rec_headers.add_header("WARC-Target-URI", uri)
    for name, value in headers:
        rec_headers.add_header(name, value)
    # warcio writes only the HTTP headers of a record it knows as "revisit", and our blocks
    # are written whole, so it is told a neutral type (WARC-Type is the header above).
    record = ArcWarcRecord(
        "warc", "resource", rec_headers, io.BytesIO(block), None, content_type, len(block)
    )
    record.payload_length = len(block)
    out = io.BytesIO()
    writer._write_warc_record(out, record)
    return out.getvalue()


def one_member(data: bytes) -> bytes:
    decomp = zlib.decompressobj(zlib.MAX_WBITS + 16)
    plain = decomp.decompress(data)
    assert decomp.eof and decomp.unused_data == b"", "not exactly one gzip member"
    return plain


def recording(body: bytes, in_memory_bytes: int = 512 * 1024) -> Recording:
    rec = Recording(in_memory_bytes=in_memory_bytes)
    rec.request_head = REQUEST_HEAD
    rec.response_head = RESPONSE_HEAD
    for i in range(0, len(body), 50_000):
        rec.write_body(body[i : i + 50_000])
    return rec


def html(size: int) -> bytes:
    rng = random.Random(size)
    words = [b"archive", b"crawler", b"page", b"<a href='/x'>", b"link", b"text", b"</a>"]
    return b" ".join(rng.choice(words) for _ in range(size // 4))[:size]


def the_records(big: bool) -> list[dict[str, Any]]:
    """One capture's worth of records, as WARCWriterProcessor writes them, warcinfo first."""
    body = os.urandom(GzipMember.BUFFER_BYTES + 12345) if big else html(15_000)
    # A small in-memory limit spools the big body to disk, as a real fetch would.
    rec = recording(body, in_memory_bytes=64 * 1024)
    digest = rec.payload_digest
    curi = CrawlURI(
        URI, via="http://site.example/", hop_path="L", fetch_duration_ms=7,
        outlinks=[Link(f"http://site.example/l{i}", "L", "a/@href") for i in range(40)],
    )  # fmt: skip
    concurrent = [("WARC-Date", DATE), ("WARC-Concurrent-To", "<urn:uuid:x>")]
    info = warcinfo_block({"software": "crawler/t", "hostname": "h", "format": "WARC File Format"})
    dns = b"20231114221320\nsite.example.\t300\tIN\tA\t127.0.0.1\n"
    return [
        {"kind": "warcinfo", "uri": "", "block": info, "content_type": WARC_FIELDS,
         "headers": [("WARC-Date", DATE), ("WARC-Filename", "WEB-1.warc.gz")]},
        {"kind": "response", "uri": "dns:site.example", "head": b"", "body": dns,
         "content_type": "text/dns",
         "headers": [("WARC-Date", DATE), ("WARC-IP-Address", "127.0.0.1")]},
        {"kind": "response", "uri": URI, "head": RESPONSE_HEAD, "body": body, "recording": rec,
         "content_type": HTTP_RESPONSE,
         "headers": [("WARC-Date", DATE), ("WARC-Payload-Digest", digest),
                     ("WARC-IP-Address", "127.0.0.1"), ("WARC-Truncated", "length")]},
        {"kind": "revisit", "uri": URI, "block": RESPONSE_HEAD, "content_type": HTTP_RESPONSE,
         "headers": [("WARC-Date", DATE),
                     ("WARC-Profile", revisit_profile("identical-payload-digest", "1.1")),
                     ("WARC-Refers-To-Target-URI", URI), ("WARC-Refers-To-Date", DATE),
                     ("WARC-Payload-Digest", digest), ("WARC-Truncated", "length")]},
        {"kind": "request", "uri": URI, "block": REQUEST_HEAD, "content_type": HTTP_REQUEST,
         "headers": concurrent},
        {"kind": "metadata", "uri": URI, "block": metadata_block(curi),
         "content_type": WARC_FIELDS, "headers": concurrent},
    ]  # fmt: skip


def write_one(writer: WARCRecordWriter, spec: dict[str, Any], out: io.BytesIO) -> str:
    if "block" in spec:
        return writer.write(
            out, spec["uri"], spec["kind"], spec["headers"], spec["block"], None, 0,
            spec["content_type"],
        )  # fmt: skip
    rec = spec.get("recording")
    body = rec.body_stream() if rec is not None else io.BytesIO(spec["body"])
    return writer.write(
        out, spec["uri"], spec["kind"], spec["headers"], spec["head"], body, len(spec["body"]),
        spec["content_type"],
    )  # fmt: skip


def block_of(spec: dict[str, Any]) -> bytes:
    return spec["block"] if "block" in spec else spec["head"] + spec["body"]


def warcio_check(path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "warcio.cli", "check", "-v", str(path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("digest pass") == 5, result.stdout  # all but the revisit


@pytest.mark.parametrize("big", [False, True], ids=["in-memory", "spooled-past-buffer"])
@pytest.mark.parametrize(
    ("compress", "compressor", "level"),
    [(False, "zlib", 6), (True, "zlib", 6), (True, "isal", 3)],
    ids=["warc", "warc.gz-zlib", "warc.gz-isal"],
)
@pytest.mark.parametrize("warc_version", ["1.0", "1.1"])
def test_records_are_the_bytes_warcio_writes_and_read_back(
    tmp_path: Path, warc_version: str, compress: bool, compressor: str, level: int, big: bool
) -> None:
    writer = WARCRecordWriter(warc_version, compress, level, compressor)
    specs = the_records(big)
    path = tmp_path / ("t.warc.gz" if compress else "t.warc")
    ids = []
    with path.open("wb") as warc:
        for spec in specs:
            out = io.BytesIO()
            record_id = write_one(writer, spec, out)
            ids.append(record_id)
            assert RECORD_ID_RE.match(record_id)
            expected = warcio_record(
                warc_version, spec["kind"], record_id, spec["uri"], spec["headers"],
                block_of(spec), spec["content_type"],
            )  # fmt: skip
            written = out.getvalue()
            if not compress:
                assert written == expected, spec["kind"]
            else:
                assert one_member(written) == expected, spec["kind"]
                if len(expected) <= GzipMember.BUFFER_BYTES:
                    # Deflated whole in one call: the very member warcio's bytes would give.
                    assert written == gzip_member(expected, level, compressor), spec["kind"]
            warc.write(written)
    with path.open("rb") as handle:
        # Unparsed, so each record's stream is its whole block, HTTP head included.
        iterator = ArchiveIterator(handle, no_record_parse=True)
        for spec, record_id, record in zip(specs, ids, iterator, strict=True):
            headers = record.rec_headers
            assert headers.protocol == f"WARC/{warc_version}"
            assert headers.get_header("WARC-Type") == spec["kind"]
            assert headers.get_header("WARC-Record-ID") == record_id
            assert headers.get_header("WARC-Target-URI") == (spec["uri"] or None)
            for name, value in spec["headers"]:
                assert headers.get_header(name) == value
            assert headers.get_header("Content-Type") == spec["content_type"]
            block = block_of(spec)
            assert int(headers.get_header("Content-Length")) == len(block)
            assert record.raw_stream.read() == block
    with path.open("rb") as handle:
        for record in ArchiveIterator(handle, check_digests=True):
            record.content_stream().read()
            expected_check = None if record.rec_type == "revisit" else True
            assert record.digest_checker.passed is expected_check, record.rec_type
    warcio_check(path)


def test_line_breaks_in_header_values_become_spaces() -> None:
    writer = WARCRecordWriter("1.1", False, 6)
    out = io.BytesIO()
    headers = [("WARC-Date", DATE), ("WARC-Refers-To-Target-URI", "http://x/\r\nWARC-Type: bad")]
    record_id = writer.write(
        out, "http://x/a\nb", "metadata", headers, b"k: v\r\n", None, 0, "text/plain\r"
    )
    clean = [("WARC-Date", DATE), ("WARC-Refers-To-Target-URI", "http://x/  WARC-Type: bad")]
    expected = warcio_record(
        "1.1", "metadata", record_id, "http://x/a b", clean, b"k: v\r\n", "text/plain "
    )
    assert out.getvalue() == expected
    out.seek(0)
    assert b"\r\nWARC-Target-URI: http://x/a b\r\n" in out.getvalue()
    record = next(iter(ArchiveIterator(out, no_record_parse=True)))
    assert record.rec_headers.get_header("WARC-Type") == "metadata"
    assert record.rec_headers.get_header("Content-Type") == "text/plain"
    assert record.raw_stream.read() == b"k: v\r\n"


def test_a_body_shorter_than_announced_gives_a_consistent_record() -> None:
    writer = WARCRecordWriter("1.1", True, 6)
    out = io.BytesIO()
    body = io.BytesIO(b"only this")
    writer.write(out, "http://x/", "response", [("WARC-Date", DATE)], b"HEAD\r\n\r\n", body, 500)
    out.seek(0)
    record = next(iter(ArchiveIterator(out, no_record_parse=True, check_digests=True)))
    assert record.raw_stream.read() == b"HEAD\r\n\r\nonly this"
    assert record.digest_checker.passed is True


def test_level_0_stores_the_record_and_reads_from_the_body_position() -> None:
    writer = WARCRecordWriter("1.1", True, 3, "isal")
    payload = os.urandom(40_000)
    body = io.BytesIO(b"skipped" + payload)
    body.seek(7)
    out = io.BytesIO()
    writer.write(
        out, "http://x/i.jpg", "response", [], b"H\r\n\r\n", body, len(payload), compress_level=0
    )
    assert len(payload) < len(out.getvalue()) < len(payload) + 600
    out.seek(0)
    record = next(iter(ArchiveIterator(out, no_record_parse=True)))
    assert record.raw_stream.read() == b"H\r\n\r\n" + payload


def test_recording_payload_digest_is_the_base32_sha1_of_the_body() -> None:
    rec = recording(b"hello")
    expected = base64.b32encode(hashlib.sha1(b"hello").digest()).decode("ascii")
    assert rec.payload_digest == "sha1:" + expected
    rec.close()
