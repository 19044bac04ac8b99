"""FetchHTTP sends a login step's POST (both clients: its own HTTP/1.1 client and httpx), records
the request with its body, and never sends a login step conditionally (a 304 would hide the
login form)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from support.fetch_support import make_ctx

from crawler import CrawlURI, Recording
from crawler.history import CrawlHistory
from processors.fetch import FetchHTTP, FetchHTTPParams
from processors.login.form_login import MARKER, REQUEST

pytestmark = [pytest.mark.integration, pytest.mark.timeout(30)]
ETAG = '"v1"'


class Site(ThreadingHTTPServer):
    daemon_threads = True
    seen: list[tuple[str, str, dict[str, str], bytes]]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Site

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _answer(self, method: str) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = dict(self.headers.items())
        self.server.seen.append((method, self.path, headers, body))
        if headers.get("If-None-Match") == ETAG:
            self.send_response(304)
            self.end_headers()
            return
        page = b"<form method=post><input type=password name=p></form>"
        self.send_response(200)
        self.send_header("ETag", ETAG)
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def do_GET(self) -> None:
        self._answer("GET")

    def do_POST(self) -> None:
        self._answer("POST")


@pytest.fixture
def site() -> Iterator[Site]:
    server = Site(("127.0.0.1", 0), Handler)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("http2", [False, True], ids=["http11-client", "httpx-client"])
def test_a_post_is_sent_and_recorded_with_its_body(site: Site, tmp_path: Path, http2: bool) -> None:
    proc = FetchHTTP("fetch_http", FetchHTTPParams(http2=http2))
    proc.start(make_ctx(tmp_path))
    uri = f"http://127.0.0.1:{site.server_address[1]}/login"
    curi = CrawlURI(uri)
    form = "user=alice&pass=s3cret"
    ctype = "application/x-www-form-urlencoded"
    curi.data[REQUEST] = {"method": "POST", "body": form, "content_type": ctype}
    try:
        proc.process(curi)
    finally:
        proc.stop()
    assert curi.status == 200
    ((method, path, headers, body),) = site.seen
    assert (method, path, body) == ("POST", "/login", form.encode())
    assert headers["Content-Type"] == ctype
    assert headers["Content-Length"] == str(len(form))
    rec = curi.recording
    assert isinstance(rec, Recording)
    assert rec.request_head.startswith(b"POST /login HTTP/1.1\r\n")
    assert rec.request_head.endswith(b"\r\n\r\n" + form.encode())


def test_a_login_step_is_never_conditional(site: Site, tmp_path: Path) -> None:
    uri = f"http://127.0.0.1:{site.server_address[1]}/login"
    with CrawlHistory.open(tmp_path / "state") as history:
        proc = FetchHTTP("fetch_http", FetchHTTPParams())
        proc.start(make_ctx(tmp_path, history=history))
        try:
            first = CrawlURI(uri)
            proc.process(first)
            history.record_fetch(first, "<urn:uuid:first>", "2024-03-05T14:02:11Z")
            page = CrawlURI(uri, force_fetch=True)
            page.data[MARKER] = {"domain": "127.0.0.1", "step": "page"}
            proc.process(page)
            plain = CrawlURI(uri, force_fetch=True)
            proc.process(plain)
        finally:
            proc.stop()
    assert page.status == 200 and "If-None-Match" not in site.seen[1][2]
    assert plain.status == 304  # any other forced re-fetch stays conditional
