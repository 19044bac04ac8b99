"""WARCWriterProcessor: files pass `warcio check`, keep the exact bytes, roll over, take threads."""

from __future__ import annotations

import random
import re
import threading
from pathlib import Path

import pytest
from pydantic import ValidationError
from support.processor_context import make_context
from support.warc_checks import fetched, records, warcio_check, warcs

from crawler import CrawlURI
from processors.write import WARCWriterParams, WARCWriterProcessor

pytestmark = pytest.mark.integration

NAME_RE = re.compile(r"^WEB-\d{17}-\d{5}-\d+~[^~/]+\.warc\.gz$")


context = make_context


def body_of(n: int, size: int = 3000) -> bytes:
    """Incompressible bytes, so file sizes follow body sizes."""
    return (f"<html>page {n} ".encode() + random.Random(n).randbytes(size))[:size]


def test_records_hold_the_exact_bytes_and_pass_warcio_check(tmp_path: Path) -> None:
    writer = WARCWriterProcessor("warc")
    writer.start(context(tmp_path))
    curis = [fetched(0, body_of(0, 200_000), truncated="lenTrunc"), fetched(1, body_of(1))]
    for curi in curis:
        writer.process(curi)
    open_files = warcs(tmp_path)
    assert len(open_files) == 1 and open_files[0].name.endswith(".warc.gz.open")
    writer.stop()
    (path,) = warcs(tmp_path)
    assert NAME_RE.match(path.name), path.name
    warcio_check(path)

    recs = records(path)
    assert [r[0] for r in recs] == ["warcinfo"] + ["response", "request", "metadata"] * 2
    info = recs[0][2].decode()
    assert recs[0][1]["WARC-Filename"] == path.name
    for field in ("software: crawler/", "isPartOf: t", "robots: obey", "operator: http://x/"):
        assert field in info
    assert "http-header-user-agent: " in info and "conformsTo: " in info

    for i, curi in enumerate(curis):
        response, request, metadata = recs[1 + 3 * i : 4 + 3 * i]
        assert response[1]["WARC-Target-URI"] == curi.uri
        assert response[1]["WARC-Payload-Digest"] == curi.payload_digest
        assert response[1]["WARC-Date"] == "2023-11-14T22:13:20.123Z"
        assert response[1]["WARC-IP-Address"] == "127.0.0.1"
        assert response[2] == curi.recording.body_bytes()
        assert request[1]["WARC-Concurrent-To"] == response[1]["WARC-Record-ID"]
        assert metadata[1]["WARC-Concurrent-To"] == response[1]["WARC-Record-ID"]
        assert b"outlink: http://site.example/next L a/@href" in metadata[2]
        assert curi.extra_info == {"warcFilename": path.name, "warcFileOffset": response[3]}
    assert recs[1][1]["WARC-Truncated"] == "length"
    assert "WARC-Truncated" not in recs[4][1]
    assert "records written: 7" in "\n".join(writer.report())


def test_files_roll_over_and_each_starts_with_warcinfo(tmp_path: Path) -> None:
    writer = WARCWriterProcessor("warc", WARCWriterParams(max_file_size_bytes=20_000))
    writer.start(context(tmp_path))
    for n in range(12):
        writer.process(fetched(n, body_of(n, 8000)))
    writer.stop()
    writer.stop()
    paths = warcs(tmp_path)
    assert len(paths) >= 4
    assert [int(p.name.split("-")[2]) for p in paths] == list(range(len(paths)))
    seen = []
    for path in paths:
        assert NAME_RE.match(path.name)
        recs = records(path)
        assert recs[0][0] == "warcinfo"
        seen += [r[1]["WARC-Target-URI"] for r in recs if r[0] == "response"]
    assert seen == [f"http://site.example/p{n}" for n in range(12)]


def test_uncompressed_warc_1_0_passes_warcio_check(tmp_path: Path) -> None:
    params = WARCWriterParams(compress=False, warc_version="1.0", write_metadata=False)
    writer = WARCWriterProcessor("warc", params)
    writer.start(context(tmp_path))
    writer.process(fetched(0, body_of(0)))
    writer.stop()
    (path,) = warcs(tmp_path)
    assert path.name.endswith(".warc")
    assert path.read_bytes().startswith(b"WARC/1.0\r\n")
    warcio_check(path)
    recs = records(path)
    assert [r[0] for r in recs] == ["warcinfo", "response", "request"]
    assert recs[1][1]["WARC-Date"] == "2023-11-14T22:13:20Z"


def test_unfetched_uris_are_not_written(tmp_path: Path) -> None:
    writer = WARCWriterProcessor("warc")
    writer.start(context(tmp_path))
    failed = fetched(0, b"x")
    failed.status = -2
    writer.process(failed)
    writer.process(CrawlURI("http://site.example/none", status=200))
    writer.stop()
    assert warcs(tmp_path) == []
    assert failed.extra_info == {}


def test_concurrent_writers_keep_each_uris_records_together(tmp_path: Path) -> None:
    writer = WARCWriterProcessor("warc")
    writer.start(context(tmp_path))

    def work(thread: int) -> None:
        for i in range(40):
            writer.process(fetched(thread * 1000 + i, body_of(i, 5000 + 100 * thread)))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    writer.stop()
    (path,) = warcs(tmp_path)
    warcio_check(path)
    recs = records(path)[1:]
    assert len(recs) == 6 * 40 * 3
    for i in range(0, len(recs), 3):
        uris = {r[1]["WARC-Target-URI"] for r in recs[i : i + 3]}
        assert len(uris) == 1
        assert recs[i + 1][1]["WARC-Concurrent-To"] == recs[i][1]["WARC-Record-ID"]


def test_a_bad_file_name_template_is_rejected_at_load() -> None:
    with pytest.raises(ValidationError):
        WARCWriterParams(template="{prefix}-{nope}")


def test_compressed_payloads_are_stored_and_text_is_deflated(tmp_path: Path) -> None:
    writer = WARCWriterProcessor("warc")
    writer.start(context(tmp_path))
    image = fetched(0, body_of(0, 300_000))
    image.content_type = "image/jpeg"
    page = fetched(1, b"<html>" + b"very compressible text " * 20_000)
    for curi in (image, page):
        writer.process(curi)
    writer.stop()
    (path,) = warcs(tmp_path)
    warcio_check(path)
    recs = records(path)
    assert recs[1][2] == image.recording.body_bytes()
    assert recs[4][2] == page.recording.body_bytes()
    image_member = recs[4][3] - recs[1][3]  # response + request + metadata of the image
    assert 300_000 < image_member < 301_500
    assert path.stat().st_size - recs[4][3] < 20_000  # the page's 460 KB deflated


def test_bodies_on_both_sides_of_the_in_memory_build_keep_their_bytes_and_offsets(
    tmp_path: Path,
) -> None:
    # Up to 1 MiB a URI's records are built in memory; past it in a spool that may go to disk
    # and the body is streamed into its member. Either way the records and offsets hold.
    writer = WARCWriterProcessor("warc")
    writer.start(context(tmp_path))
    sizes = [(1 << 20) - 1, 1 << 20, (1 << 20) + 1, 5_000_000]
    curis = [fetched(n, body_of(n, size)) for n, size in enumerate(sizes)]
    for curi in curis:
        writer.process(curi)
    writer.stop()
    (path,) = warcs(tmp_path)
    warcio_check(path)
    responses = [r for r in records(path) if r[0] == "response"]
    assert [r[2] for r in responses] == [c.recording.body_bytes() for c in curis]
    assert [r[3] for r in responses] == [c.extra_info["warcFileOffset"] for c in curis]
