"""EarlierPayload: a 304's recording filled from the stored capture the history names."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from crawler import CrawlURI, Recording
from crawler.continuity.earlier_payload import EarlierPayload, freshened, outlinks_of
from crawler.continuity.warc_locator import (
    WarcLocator,
    earlier_runs,
    run_dir_of_history,
    warc_directories,
)
from crawler.history import CrawlHistory, FetchHistoryEntry

URI = "http://example.test/page.html"
BODY = b'<html><a href="/next.html">next</a></html>'
STORED = [
    ("Content-Type", "text/html; charset=utf-8"),
    ("Content-Length", str(len(BODY))),
    ("ETag", '"v1"'),
    ("Link", "</style.css>; rel=stylesheet"),
]


def write_capture(path: Path, uri: str = URI, outlinks: str = "") -> tuple[str, int]:
    """A response, request and metadata record of ``uri`` at the end of ``path``: the
    response's record id and offset."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as fh:
        writer = WARCWriter(fh, gzip=True)
        offset = fh.tell()
        http = StatusAndHeaders("200 OK", STORED, protocol="HTTP/1.1")
        response = writer.create_warc_record(
            uri, "response", payload=io.BytesIO(BODY), http_headers=http
        )
        writer.write_record(response)
        record_id = response.rec_headers.get_header("WARC-Record-ID")
        concurrent = {"WARC-Concurrent-To": record_id}
        request = writer.create_warc_record(
            uri,
            "request",
            payload=io.BytesIO(b"GET /page.html HTTP/1.1\r\n\r\n"),
            warc_headers_dict=concurrent,
        )
        writer.write_record(request)
        metadata = writer.create_warc_record(
            uri,
            "metadata",
            payload=io.BytesIO(f"hopsFromSeed: L\r\n{outlinks}".encode()),
            warc_content_type="application/warc-fields",
            warc_headers_dict=concurrent,
        )
        writer.write_record(metadata)
    return record_id, offset


def not_modified_304() -> tuple[CrawlURI, Recording]:
    curi = CrawlURI(URI)
    curi.status = curi.http_status = 304
    curi.response_headers = [("ETag", '"v1"'), ("Date", "Fri, 27 Nov 2026 10:00:00 GMT")]
    rec = Recording()
    rec.response_head = b'HTTP/1.1 304 Not Modified\r\nETag: "v1"\r\n\r\n'
    return curi, rec


def entry(name: str, record_id: str | None, offset: int) -> FetchHistoryEntry:
    return FetchHistoryEntry(200, 0.0, "sha1:X", '"v1"', None, record_id, "d", name, offset)


def test_a_304_takes_the_stored_payload_and_freshened_headers(tmp_path: Path) -> None:
    warcs = tmp_path / "old" / "warcs"
    record_id, offset = write_capture(warcs / "OLD.warc.gz")
    loader = EarlierPayload(WarcLocator([tmp_path / "new" / "warcs", warcs]))
    curi, rec = not_modified_304()
    assert loader.load(curi, rec, entry("OLD.warc.gz", record_id, offset))
    assert rec.body_bytes() == BODY
    assert rec.response_head.startswith(b"HTTP/1.1 304")  # the revisit still writes the 304
    assert (curi.status, curi.earlier_status, curi.payload_status) == (304, 200, 200)
    assert curi.content_type == "text/html; charset=utf-8"
    assert curi.header("Date") == "Fri, 27 Nov 2026 10:00:00 GMT"
    assert curi.header("Link") == "</style.css>; rel=stylesheet"
    assert curi.outlinks == [] and curi.annotations == []
    assert loader.report() == ["  earlier payloads loaded for 304s: 1 (unread: 0)"]
    curi.reset_for_retry()
    assert curi.earlier_status == 0 and curi.payload_status == 0


def test_with_outlinks_the_metadata_records_links_are_added_once(tmp_path: Path) -> None:
    path = tmp_path / "warcs" / "OLD.warc.gz.open"  # left so by a kill -9
    lines = (
        "outlink: http://example.test/next.html L a/@href\r\n"
        "outlink: http://example.test/rendered.html L -\r\n"
        "outlink: http://example.test/app.js E script/@src\r\n"
        "outlink: mailto:x@example.test L a/@href\r\n"
    )
    record_id, offset = write_capture(path, outlinks=lines)
    loader = EarlierPayload(WarcLocator([tmp_path / "warcs"]), with_outlinks=True)
    curi, rec = not_modified_304()
    curi.outlinks = list(outlinks_of(b"outlink: http://example.test/next.html L a/@href\r\n"))
    assert loader.load(curi, rec, entry("OLD.warc.gz", record_id, offset))
    assert [(link.uri, link.hop, link.context) for link in curi.outlinks] == [
        ("http://example.test/next.html", "L", "a/@href"),
        ("http://example.test/rendered.html", "L", ""),
        ("http://example.test/app.js", "E", "script/@src"),
    ]


def test_a_capture_that_cannot_be_read_is_annotated(tmp_path: Path) -> None:
    warcs = tmp_path / "warcs"
    record_id, offset = write_capture(warcs / "OLD.warc.gz")
    _, other_offset = write_capture(warcs / "OLD.warc.gz", "http://example.test/other")
    logged: list[tuple[str, dict[str, object]]] = []

    class Logger:
        def warning(self, event: str, **data: object) -> None:
            logged.append((event, data))

    loader = EarlierPayload(WarcLocator([warcs]), Logger())
    cases = [
        (entry("GONE.warc.gz", record_id, offset), "earlierPayload:missing"),
        (entry("OLD.warc.gz", record_id, other_offset), "earlierPayload:unreadable"),
        (entry("OLD.warc.gz", "<urn:uuid:not-it>", offset), "earlierPayload:unreadable"),
        (entry("OLD.warc.gz", record_id, offset + 7), "earlierPayload:unreadable"),
    ]
    for history_entry, note in cases:
        curi, rec = not_modified_304()
        assert not loader.load(curi, rec, history_entry)
        assert curi.annotations == [note] and curi.earlier_status == 0
    assert [event for event, _ in logged] == ["earlier_payload_unread"] * 2  # once per file
    assert loader.unread == 4 and loader.loaded == 0


def test_freshening_keeps_the_stored_length_and_type() -> None:
    fresh = [("ETag", '"v2"'), ("Content-Length", "0"), ("Connection", "close")]
    assert freshened(STORED, fresh) == [
        ("Content-Type", "text/html; charset=utf-8"),
        ("Content-Length", str(len(BODY))),
        ("Link", "</style.css>; rel=stylesheet"),
        ("ETag", '"v2"'),
    ]


@pytest.mark.parametrize("name", ["", "../x.warc.gz", "sub/x.warc.gz"])
def test_the_locator_refuses_names_with_a_directory(tmp_path: Path, name: str) -> None:
    (tmp_path / "x.warc.gz").write_bytes(b"")
    assert WarcLocator([tmp_path]).find(name) is None


def test_warc_directories_of_runs_and_their_workers(tmp_path: Path) -> None:
    run = tmp_path / "run"
    for worker in ("w01", "w02"):
        (run / "workers" / worker / "warcs").mkdir(parents=True)
    assert run_dir_of_history(run / "workers" / "w01" / "state" / "history") == (
        run / "workers" / "w01"
    )
    assert warc_directories([tmp_path / "new", run]) == [
        tmp_path / "new" / "warcs",
        run / "warcs",
        run / "workers" / "w01" / "warcs",
        run / "workers" / "w02" / "warcs",
    ]


def test_earlier_runs_follow_each_crawls_own_import_back(tmp_path: Path) -> None:
    CrawlHistory.open(tmp_path / "one" / "state").close()
    CrawlHistory.open(tmp_path / "two" / "state", import_from=tmp_path / "one").close()
    with CrawlHistory.open(tmp_path / "three" / "state", import_from=tmp_path / "two") as three:
        assert earlier_runs(three.imported_from) == [tmp_path / "two", tmp_path / "one"]


def test_a_writer_directory_named_in_the_runs_effective_order_is_searched(
    tmp_path: Path,
) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "order.effective.yaml").write_text(
        "chains:\n  write:\n"
        "    - {name: warc_writer, class: processors.write.WARCWriterProcessor,"
        f" params: {{directory: archive}}}}\n"
        "    - {name: other, class: processors.write.WARCWriterProcessor,"
        f" params: {{directory: {tmp_path / 'elsewhere'}}}}}\n"
        "    - {name: mirror, class: processors.write.MirrorWriterProcessor,"
        " params: {directory: mirror}}\n"
    )
    assert warc_directories([run]) == [run / "warcs", run / "archive", tmp_path / "elsewhere"]
    (run / "order.effective.yaml").write_text("chains: [unclosed")
    assert warc_directories([run]) == [run / "warcs"]
