"""Responses to requests other than GET are indexed under the key pywb looks them up by (the
method and body appended to the URL's query): the scan of a ``.warc.gz`` gives the lines
cdxj-indexer's ``--post-append`` gives (bodies of every kind, one past the scan's first read),
and the body rules follow what a replayed page's request is keyed by."""

from __future__ import annotations

import json
from io import BytesIO
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from crawler.archive.indexer import CdxjIndexer
from crawler.archive.method_query import method_query

pytestmark = pytest.mark.timeout(30)
URL = "http://example.test/api/search"
BIG = json.dumps({"q": "x" * 70_000, "page": 3}).encode()
MULTIPART = (
    b'--XyZ\r\nContent-Disposition: form-data; name="q"\r\n\r\nowl\r\n'
    b'--XyZ\r\nContent-Disposition: form-data; name="n"\r\n\r\n2\r\n--XyZ--\r\n'
)
REQUESTS = [
    ("POST", "application/json", json.dumps({"q": "owl", "filters": {"tag": ["a", "b"]}})),
    ("POST", "application/json; charset=utf-8", BIG),
    ("POST", "application/x-www-form-urlencoded", b"q=owl+eyes&n=5"),
    ("POST", "multipart/form-data; boundary=XyZ", MULTIPART),
    ("POST", "application/octet-stream", bytes(range(40))),
    ("POST", "text/plain", b"not json"),
    ("PUT", "application/json", b'{"id": 7}'),
    ("GET", None, b""),
]


def _write(path: Path, gzip: bool) -> None:
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=gzip)
        for n, (method, ctype, body) in enumerate(REQUESTS):
            data = body.encode() if isinstance(body, str) else body
            payload = json.dumps({"n": n}).encode()
            head = StatusAndHeaders(
                "200 OK",
                [("Content-Type", "application/json"), ("Content-Length", str(len(payload)))],
                protocol="HTTP/1.1",
            )
            response = writer.create_warc_record(
                URL, "response", payload=BytesIO(payload), http_headers=head
            )
            writer.write_record(response)
            fields = [("Host", "example.test"), ("Content-Length", str(len(data)))]
            if ctype:
                fields.append(("Content-Type", ctype))
            req = StatusAndHeaders(f"{method} /api/search HTTP/1.1", fields, is_http_request=True)
            concurrent = {"WARC-Concurrent-To": response.rec_headers.get_header("WARC-Record-ID")}
            writer.write_record(
                writer.create_warc_record(
                    URL,
                    "request",
                    payload=BytesIO(data),
                    http_headers=req,
                    warc_headers_dict=concurrent,
                )
            )


def test_the_scan_keys_posts_as_cdxj_indexer_does(tmp_path: Path) -> None:
    warc = tmp_path / "posts.warc.gz"
    _write(warc, gzip=True)
    indexer = CdxjIndexer()
    scanned = indexer.index(warc, tmp_path / "scan")
    library = indexer._index_with_library(warc, tmp_path / "library")
    assert scanned.problem is None and scanned.index is not None and library.index is not None
    mine = scanned.index.read_text().splitlines()
    assert len(mine) == len(REQUESTS)
    assert mine == library.index.read_text().splitlines()
    keys = sorted(line.split(" ", 1)[0] for line in mine)
    assert "test,example)/api/search" in keys  # the GET
    assert "test,example)/api/search?__wb_method=post&n=5&q=owl%20eyes" in keys
    assert "test,example)/api/search?__wb_method=post&n=2&q=owl" in keys  # multipart
    assert "test,example)/api/search?__wb_method=put&id=7" in keys
    assert "test,example)/api/search?__wb_method=post&q=owl&tag=a&tag.2_=b" in keys
    big = next(k for k in keys if "q=xxxx" in k)  # its request record is past the first read
    assert len(big) < 4200  # the body's pairs are cut at 4096 characters


def test_an_uncompressed_warc_gets_the_same_keys(tmp_path: Path) -> None:
    _write(tmp_path / "posts.warc.gz", gzip=True)
    _write(tmp_path / "posts.warc", gzip=False)
    indexer = CdxjIndexer()
    gz = indexer.index(tmp_path / "posts.warc.gz", tmp_path / "a").index
    plain = indexer.index(tmp_path / "posts.warc", tmp_path / "b").index
    assert gz is not None and plain is not None

    def keys(index: Path) -> list[str]:
        return [line.split(" ", 1)[0] for line in index.read_text().splitlines()]

    assert keys(gz) == keys(plain)


def test_json_scalars_are_written_as_javascript_writes_them() -> None:
    body = b'{"a": true, "b": false, "c": null, "d": 2.0, "e": 2.5, "f": [1, {"f": 3}]}'
    query = method_query("POST", "application/json", body)
    assert query is not None
    assert query.query == "a=true&b=false&c=null&d=2&e=2.5&f=1&f.2_=3"
    assert query.append_to("http://h/s?x=1") == "http://h/s?x=1&__wb_method=POST&" + query.query


def test_bodies_that_cannot_be_read_as_pairs() -> None:
    assert method_query("POST", "application/json", b"{not json") == method_query(
        "POST", "application/json", b""
    )
    plain = method_query("POST", "text/plain", b"hi")
    assert plain is not None and plain.query == "__wb_post_data=aGk="
    deleted = method_query("DELETE", None, b"ignored")
    assert (
        deleted is not None and deleted.append_to("http://h/x") == "http://h/x?__wb_method=DELETE"
    )
    assert method_query("GET", None, b"") is None
