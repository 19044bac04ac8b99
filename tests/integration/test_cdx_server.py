"""CdxServerIndex against a CDX server on 127.0.0.1: answers, outages, timeouts, recovery."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
import structlog
from structlog.testing import capture_logs

from crawler.archive.cdx_server import CdxServerIndex

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

D1 = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA1"
D2 = "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB2"


class CdxServer(ThreadingHTTPServer):
    """Answers ``/coll/cdx?url=…&output=json`` from ``captures`` (url -> list of entries)
    like pywb: one JSON object per line. ``mode`` switches to other answers."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.captures: dict[str, list[dict[str, str]]] = {}
        self.mode = "jsonl"
        self.delay_s = 0.0
        self.queries: list[dict[str, list[str]]] = []

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/coll/cdx"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        server: CdxServer = self.server  # type: ignore[assignment]
        query = parse_qs(urlsplit(self.path).query)
        server.queries.append(query)
        if server.delay_s:
            time.sleep(server.delay_s)
        rows = server.captures.get(query["url"][0], [])
        status = 200
        if server.mode == "error":
            status, body = 503, b"overloaded"
        elif server.mode == "garbage":
            body = b"<html>not json</html>"
        elif server.mode == "table":
            fields = ["urlkey", "timestamp", "original", "mimetype", "statuscode", "digest"]
            table = [fields] + [[r.get(f, r.get("url", "-")) for f in fields] for r in rows]
            body = json.dumps(table).encode()
        elif not rows and server.mode == "404":
            status, body = 404, b"No Captures found"
        else:
            body = b"".join(json.dumps(r).encode() + b"\n" for r in rows)
        try:
            self.send_response(status)
            self.send_header("Content-Type", "text/x-ndjson")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def cdx() -> Iterator[CdxServer]:
    server = CdxServer()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(5)


def entry(url: str, ts: str, digest: str, mime: str = "text/html") -> dict[str, str]:
    return {
        "urlkey": "x",
        "timestamp": ts,
        "url": url,
        "mime": mime,
        "status": "200",
        "digest": digest,
        "filename": "OLD.warc.gz",
        "offset": "123",
        "length": "456",
    }


URL = "http://example.com/page?x=1&y=2"


def test_finds_the_latest_matching_capture(cdx: CdxServer) -> None:
    cdx.captures[URL] = [
        entry(URL, "20240101000000", f"sha1:{D1}"),
        entry(URL, "20250101000000", D1),  # CDX 11 servers keep no "sha1:" prefix
        entry(URL, "20260101000000", D2),
        entry(URL, "20260601000000", D1, mime="warc/revisit"),
    ]
    index = CdxServerIndex(cdx.endpoint, timeout_s=5)
    found = index.find(URL, "ignored", D1)
    assert found is not None
    assert (found.url, found.timestamp, found.filename, found.offset) == (
        URL,
        "20250101000000",
        "OLD.warc.gz",
        123,
    )
    assert found.warc_date == "2025-01-01T00:00:00Z" and found.source == cdx.endpoint
    assert index.find(URL, "ignored", "C" * 32) is None
    assert index.find("http://example.com/other", "ignored", D1) is None
    assert cdx.queries[0] == {"url": [URL], "matchType": ["exact"], "output": ["json"]}
    cdx.mode = "table"  # a Wayback-style server: rows under a header row
    found = index.find(URL, "ignored", D2)
    assert found is not None and found.timestamp == "20260101000000"
    index.close()


def test_404_means_no_captures_not_an_outage(cdx: CdxServer) -> None:
    cdx.mode = "404"
    index = CdxServerIndex(cdx.endpoint)
    with capture_logs() as logs:
        assert index.find(URL, "k", D1) is None
        assert index.find(URL, "k", D1) is None
    assert logs == [] and index.failures == 0 and len(cdx.queries) == 2


@pytest.mark.parametrize("mode", ["error", "garbage", "timeout"])
def test_a_failing_server_means_no_dedup_one_alert_and_a_pause(cdx: CdxServer, mode: str) -> None:
    now = [1000.0]
    if mode == "timeout":
        cdx.delay_s = 0.6
    else:
        cdx.mode = mode
    cdx.captures[URL] = [entry(URL, "20250101000000", D1)]
    index = CdxServerIndex(
        cdx.endpoint,
        timeout_s=0.2,
        retry_after_s=30,
        logger=structlog.get_logger(),
        monotonic=lambda: now[0],
    )
    with capture_logs() as logs:
        assert index.find(URL, "k", D1) is None
        asked = len(cdx.queries)
        for _ in range(5):
            assert index.find(URL, "k", D1) is None  # not asked while paused
        assert len(cdx.queries) == asked
        cdx.mode, cdx.delay_s = "jsonl", 0.0
        now[0] += 31
        found = index.find(URL, "k", D1)
    assert found is not None
    events = [(e["event"], e["log_level"]) for e in logs]
    assert events == [("dedup_cdx_server_down", "warning"), ("dedup_cdx_server_up", "info")]
    assert logs[0]["url"] == cdx.endpoint and "no dedup" in logs[0]["effect"]
    assert (index.failures, index.skipped) == (1, 5)


def test_a_server_that_is_not_there(free_port: int) -> None:
    index = CdxServerIndex(f"http://127.0.0.1:{free_port}/coll/cdx", logger=structlog.get_logger())
    with capture_logs() as logs:
        assert index.find(URL, "k", D1) is None
    assert [e["event"] for e in logs] == ["dedup_cdx_server_down"]
    assert "ConnectionRefusedError" in logs[0]["error"]


def test_many_threads_share_it(cdx: CdxServer) -> None:
    urls = [f"http://example.com/{n}" for n in range(40)]
    for n, url in enumerate(urls):
        cdx.captures[url] = [entry(url, f"2025010100{n:04d}", D1)]
    index = CdxServerIndex(cdx.endpoint)
    results: dict[str, str | None] = {}

    def ask(part: list[str]) -> None:
        for url in part:
            found = index.find(url, "k", D1)
            results[url] = found.timestamp if found else None

    threads = [threading.Thread(target=ask, args=(urls[i::4],)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert results == {url: f"2025010100{n:04d}" for n, url in enumerate(urls)}
