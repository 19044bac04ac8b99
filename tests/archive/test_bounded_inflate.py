"""Reading a WARC never inflates a record, or a page's content-encoding, all at once.

A record whose body is a long run of one byte (a page of zeros, a padded file) compresses a
thousandfold, so a 64 KiB piece of its gzip member is 64 MiB of output. The scanner, the
re-keying of a POST and the cut-short check of the indexer take that output a bounded step at a
time (``INFLATE_STEP_BYTES``), whatever the ratio; a WACZ's page titles undo a page's
content-encoding as the crawl's extractors do (bounded steps).
"""

from __future__ import annotations

import io
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import brotlicffi as brotli  # type: ignore[import-untyped]
import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from crawler.archive.indexer import _gzip_member_complete, _indexer_class
from crawler.archive.pages import IndexLine, read_title
from crawler.archive.warc_scan import INFLATE_STEP_BYTES, WarcScanner

ZEROS_BYTES = 64 * 1024 * 1024
"""The run-of-zeros body: about 64 KiB as a gzip member."""
MAX_PEAK_BYTES = 8 * INFLATE_STEP_BYTES
"""Python allocations a scan may peak at beside the mapped file: a few steps, not the body."""
POST_BODY = b'{"q": "owl", "pad": "' + b"x" * 200_000 + b'"}'
"""A JSON body past the scanner's first output (64 KiB): its query comes only from the whole
body (a cut one is not JSON), so re-keying must inflate the request record to its end."""

pytestmark = pytest.mark.timeout(60)

T = TypeVar("T")


def _peak(call: Callable[[], T]) -> tuple[T, int]:
    """``call()``'s result and the peak bytes Python allocated while it ran."""
    tracemalloc.start()
    try:
        result = call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


def _response(writer: WARCWriter, url: str, body: bytes, mime: str = "text/html") -> str:
    """Write a response record of ``body``; its WARC-Record-ID."""
    head = StatusAndHeaders(
        "200 OK",
        [("Content-Type", mime), ("Content-Length", str(len(body)))],
        protocol="HTTP/1.1",
    )
    record = writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=head)
    writer.write_record(record)
    return str(record.rec_headers.get_header("WARC-Record-ID"))


def _warc_with_zeros_and_a_post(path: Path) -> None:
    """A response of ``ZEROS_BYTES`` zeros, then a page answering a POST with its request."""
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        _response(writer, "http://example.test/zeros.bin", bytes(ZEROS_BYTES), "text/plain")
        url = "http://example.test/search"
        response_id = _response(writer, url, b"<html><title>results</title></html>")
        request = StatusAndHeaders(
            "POST /search HTTP/1.1",
            [
                ("Host", "example.test"),
                ("Content-Type", "application/json"),
                ("Content-Length", str(len(POST_BODY))),
            ],
            is_http_request=True,
        )
        record = writer.create_warc_record(
            url,
            "request",
            payload=io.BytesIO(POST_BODY),
            http_headers=request,
            warc_headers_dict={"WARC-Concurrent-To": response_id},
        )
        writer.write_record(record)


@pytest.fixture(scope="module")
def zeros_warc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bounded") / "zeros.warc.gz"
    _warc_with_zeros_and_a_post(path)
    return path


def test_scanning_a_run_of_zeros_record_holds_a_few_steps_not_the_body(zeros_warc: Path) -> None:
    result, peak = _peak(lambda: WarcScanner().scan(zeros_warc, zeros_warc.name))
    assert result is not None and result.problem is None
    assert peak < MAX_PEAK_BYTES, f"scan peaked at {peak / 2**20:.0f} MiB of Python memory"
    out = io.StringIO()
    _indexer_class()(
        out, [str(zeros_warc)], filename=zeros_warc.name, post_append=True
    ).process_all()
    assert sorted(result.lines) == sorted(out.getvalue().splitlines())
    # the POST re-keyed its response's line from a body longer than the first output
    assert any("__wb_method=post" in line and "q=owl" in line for line in result.lines)


def test_the_cut_short_check_inflates_a_step_at_a_time(zeros_warc: Path) -> None:
    with zeros_warc.open("rb") as fh:
        first = WarcScanner().scan(zeros_warc, zeros_warc.name)
        assert first is not None
        length = int(first.lines[0].split('"length": "', 1)[1].split('"', 1)[0])
        whole, peak = _peak(lambda: _gzip_member_complete(fh, length))  # type: ignore[arg-type]
        assert whole
        assert peak < MAX_PEAK_BYTES, f"check peaked at {peak / 2**20:.0f} MiB"
        fh.seek(0)
        assert not _gzip_member_complete(fh, length - 10)  # type: ignore[arg-type]


def _encoded_page(path: Path) -> None:
    """Two pages with titles: a gzip bomb (64 MiB of zeros after the title) and a br page."""
    page = b"<html><head><title>Bomb &amp; page</title></head><body>" + bytes(ZEROS_BYTES)
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb = compressor.compress(page) + compressor.flush()
    br = brotli.compress(b"<html><title>Brotli page</title><body>" + b"words " * 5000)
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for url, body, coding in (("bomb.html", bomb, "gzip"), ("br.html", br, "br")):
            head = StatusAndHeaders(
                "200 OK",
                [("Content-Type", "text/html"), ("Content-Encoding", coding)],
                protocol="HTTP/1.1",
            )
            record = writer.create_warc_record(
                "http://example.test/" + url,
                "response",
                payload=io.BytesIO(body),
                http_headers=head,
            )
            writer.write_record(record)


def test_a_wacz_page_title_of_a_decompression_bomb_costs_its_scan_not_a_reader_block(
    tmp_path: Path,
) -> None:
    warc = tmp_path / "pages.warc.gz"
    _encoded_page(warc)
    scanned = WarcScanner().scan(warc, warc.name)
    assert scanned is not None
    lines = [IndexLine.parse(line, tmp_path) for line in scanned.lines]
    by_url = {line.fields["url"].rsplit("/", 1)[1]: line for line in lines}
    title, peak = _peak(lambda: read_title(by_url["bomb.html"]))
    assert title == "Bomb & page"
    assert peak < MAX_PEAK_BYTES, f"title read peaked at {peak / 2**20:.0f} MiB"
    assert read_title(by_url["br.html"]) == "Brotli page"
