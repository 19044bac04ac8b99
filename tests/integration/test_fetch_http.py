"""FetchHTTP against a real keep-alive HTTP/1.1 server on 127.0.0.1."""

from __future__ import annotations

import base64
import gzip
import hashlib
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from support.fetch_support import make_ctx

from crawler import CrawlURI, ProcessorContext, Recording
from processors.fetch import FetchHTTP, FetchHTTPParams

pytestmark = pytest.mark.integration

BODY = b"<html><body>" + b"hello archival world " * 50 + b"</body></html>"
BIG = bytes(range(256)) * 400  # 102400 bytes
GZ = gzip.compress(b"compressible text " * 500)


def sha1_b32(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


class Site(ThreadingHTTPServer):
    daemon_threads = True
    release: threading.Event
    seen: list[tuple[str, dict[str, str], int]]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Site

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.server.seen.append((self.path, dict(self.headers.items()), self.client_address[1]))
        path = self.path
        if path == "/ok":
            self.send(200, BODY, {"Content-Type": "text/html; charset=utf-8"})
        elif path == "/chunked":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(0, len(BODY), 100):
                part = BODY[i : i + 100]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
        elif path == "/gzip":
            self.send(200, GZ, {"Content-Type": "text/plain", "Content-Encoding": "gzip"})
        elif path == "/set-cookie":
            self.send(200, b"", {"Set-Cookie": "session=abc; Path=/"})
        elif path == "/missing":
            self.send(404, b"not here", {"Content-Type": "text/plain"})
        elif path == "/redirect":
            self.send(301, b"", {"Location": "/ok"})
        elif path == "/big":
            self.send(200, BIG, {"Content-Type": "application/octet-stream"})
        elif path == "/stall":
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"0123456789")
            self.wfile.flush()
            self.server.release.wait(5)
            self.close_connection = True
        elif path == "/drip":
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            while not self.server.release.wait(0.05):
                self.wfile.write(b"x" * 10)
                self.wfile.flush()
            self.close_connection = True
        elif path == "/slow-head":
            self.server.release.wait(5)
            self.send(200, b"late")
        elif path == "/cut-headers":
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Ty")
            self.wfile.flush()
            self.close_connection = True
        elif path == "/cut-body":
            self.send_response(200)
            self.send_header("Content-Length", "5000")
            self.end_headers()
            self.wfile.write(b"only a bit")
            self.close_connection = True
        elif path == "/huge-headers":
            self.send_response(200)
            # httpcore lets h11 buffer up to 100 KiB of incomplete head; send far more.
            for i in range(300):
                self.send_header(f"X-Filler-{i}", "y" * 4000)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif path == "/robots.txt":
            self.send(200, b"User-agent: *\nDisallow: /private\n", {"Content-Type": "text/plain"})
        else:
            self.send(404, b"")


@pytest.fixture
def site() -> Iterator[Site]:
    server = Site(("127.0.0.1", 0), Handler)
    server.release = threading.Event()
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.release.set()
    server.shutdown()
    server.server_close()
    thread.join(5)


def base(site: Site) -> str:
    return f"http://127.0.0.1:{site.server_address[1]}"


@pytest.fixture
def ctx(tmp_path: Path) -> ProcessorContext:
    return make_ctx(tmp_path)


def started(ctx: ProcessorContext, **params: Any) -> FetchHTTP:
    proc = FetchHTTP("fetch_http", FetchHTTPParams(**params))
    proc.start(ctx)
    return proc


@pytest.fixture
def fetcher(ctx: ProcessorContext) -> Iterator[FetchHTTP]:
    proc = started(ctx)
    yield proc
    proc.stop()


def fetch(proc: FetchHTTP, uri: str, via: str | None = None) -> CrawlURI:
    curi = CrawlURI(uri, via=via)
    proc.process(curi)
    return curi


def recording(curi: CrawlURI) -> Recording:
    assert isinstance(curi.recording, Recording)
    return curi.recording


def test_200_recorded_with_digest_and_headers(site: Site, fetcher: FetchHTTP) -> None:
    curi = fetch(fetcher, base(site) + "/ok", via=base(site) + "/")
    assert (curi.status, curi.http_status, curi.http_version) == (200, 200, "HTTP/1.1")
    assert curi.content_type == "text/html; charset=utf-8"
    assert curi.mime_type == "text/html"
    assert curi.content_size == curi.content_length == len(BODY)
    assert curi.payload_digest == sha1_b32(BODY)
    assert curi.ip_address == "127.0.0.1"
    assert curi.fetch_start_ms == 1_700_000_000_000
    assert curi.fetch_duration_ms >= 0
    assert ("Content-Length", str(len(BODY))) in curi.response_headers
    rec = recording(curi)
    assert rec.body_bytes() == BODY
    assert rec.truncated is None
    assert rec.response_head.startswith(b"HTTP/1.1 200 OK\r\n")
    assert rec.response_head.endswith(b"\r\n\r\n")
    assert rec.request_head.startswith(b"GET /ok HTTP/1.1\r\n")
    _, headers, _ = site.seen[-1]
    assert headers["User-Agent"] == "Mozilla/5.0 (compatible; crawler/0.1.0; +http://x/)"
    assert headers["From"] == "ops@x.example"
    assert headers["Referer"] == base(site) + "/"
    assert headers["Accept"].startswith("text/html")
    assert "Accept-Encoding" not in headers
    # The stored request head is what the server received.
    assert f"User-Agent: {headers['User-Agent']}".encode() in rec.request_head
    assert b"Referer: " + (base(site) + "/").encode() in rec.request_head


def test_keep_alive_reuses_one_connection(site: Site, fetcher: FetchHTTP) -> None:
    for _ in range(3):
        assert fetch(fetcher, base(site) + "/ok").status == 200
    client_ports = {port for _, _, port in site.seen}
    assert len(client_ports) == 1


def test_chunked_body_stored_dechunked(site: Site, fetcher: FetchHTTP) -> None:
    curi = fetch(fetcher, base(site) + "/chunked")
    rec = recording(curi)
    assert rec.body_bytes() == BODY
    assert curi.content_size == len(BODY)
    assert curi.content_length == -1
    assert curi.payload_digest == sha1_b32(BODY)
    assert b"\r\nX-Crawler-Transfer-Encoding: chunked\r\n" in rec.response_head
    assert b"\r\nTransfer-Encoding" not in rec.response_head
    assert ("Transfer-Encoding", "chunked") in curi.response_headers


def test_gzip_body_kept_raw(site: Site, fetcher: FetchHTTP) -> None:
    curi = fetch(fetcher, base(site) + "/gzip")
    rec = recording(curi)
    assert rec.body_bytes() == GZ
    assert curi.content_size == len(GZ)
    assert curi.payload_digest == sha1_b32(GZ)
    assert rec.decoded_body("gzip", 1 << 20) == gzip.decompress(GZ)


def test_404_is_a_fetch(site: Site, fetcher: FetchHTTP) -> None:
    curi = fetch(fetcher, base(site) + "/missing")
    assert curi.status == 404
    assert curi.is_success
    assert recording(curi).body_bytes() == b"not here"


def test_redirect_not_followed(site: Site, fetcher: FetchHTTP) -> None:
    curi = fetch(fetcher, base(site) + "/redirect")
    assert curi.status == 301
    assert curi.header("location") == "/ok"
    assert [path for path, _, _ in site.seen] == ["/redirect"]


def test_truncation_by_length(site: Site, ctx: ProcessorContext) -> None:
    proc = started(ctx, max_length_bytes=1000)
    try:
        curi = fetch(proc, base(site) + "/big")
        assert curi.status == 200
        assert curi.content_size == 1000
        assert curi.payload_digest == sha1_b32(BIG[:1000])
        assert "lenTrunc" in curi.annotations
        assert recording(curi).truncated == "length"
        # The cut connection is not reused; the next fetch still works.
        assert fetch(proc, base(site) + "/ok").status == 200
    finally:
        proc.stop()


def test_stalled_body_kept_with_time_trunc(site: Site, ctx: ProcessorContext) -> None:
    proc = started(ctx, read_timeout_s=0.3)
    try:
        curi = fetch(proc, base(site) + "/stall")
        assert curi.status == 200
        assert recording(curi).body_bytes() == b"0123456789"
        assert "timeTrunc" in curi.annotations
        assert recording(curi).truncated == "time"
    finally:
        proc.stop()


def test_total_timeout_cuts_a_dripping_body(site: Site, ctx: ProcessorContext) -> None:
    proc = started(ctx, timeout_s=0.4, read_timeout_s=30)
    try:
        began = time.monotonic()
        curi = fetch(proc, base(site) + "/drip")
        # the total timeout ended it, not the read timeout nor the drip (which never ends);
        # a loaded machine may end it late, never early
        assert time.monotonic() - began < 15
        assert curi.status == 200
        assert "timeTrunc" in curi.annotations
        assert 0 < curi.content_size < 100_000
        assert curi.fetch_duration_ms >= 400
    finally:
        proc.stop()


def test_timeout_before_response_is_minus_4(site: Site, ctx: ProcessorContext) -> None:
    proc = started(ctx, read_timeout_s=0.3)
    try:
        curi = fetch(proc, base(site) + "/slow-head")
        assert curi.status == -4
        assert curi.recording is None
        assert "err=ReadTimeout" in curi.annotations
    finally:
        proc.stop()


def test_connection_refused_is_minus_2(fetcher: FetchHTTP) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    curi = fetch(fetcher, f"http://127.0.0.1:{port}/")
    assert curi.status == -2
    assert curi.recording is None
    assert "err=ConnectError" in curi.annotations


def test_connection_closed_mid_headers_is_minus_3(site: Site, fetcher: FetchHTTP) -> None:
    curi = fetch(fetcher, base(site) + "/cut-headers")
    assert curi.status == -3
    assert curi.recording is None


def test_connection_closed_mid_body_is_minus_3(site: Site, fetcher: FetchHTTP) -> None:
    assert fetch(fetcher, base(site) + "/cut-body").status == -3


def test_endless_header_block_is_minus_3(site: Site, fetcher: FetchHTTP) -> None:
    assert fetch(fetcher, base(site) + "/huge-headers").status == -3


def test_invalid_uri_is_minus_7(fetcher: FetchHTTP) -> None:
    assert fetch(fetcher, "http://[::1/x").status == -7


def test_non_http_uri_untouched(fetcher: FetchHTTP) -> None:
    curi = fetch(fetcher, "dns:example.com")
    assert curi.status == 0
    assert curi.recording is None
    assert fetcher.uris_handled == 0


def test_robots_fetch_updates_server_cache(
    site: Site, ctx: ProcessorContext, fetcher: FetchHTTP
) -> None:
    server = f"127.0.0.1:{site.server_address[1]}"
    assert ctx.servers.robots_state(server) is None
    assert fetch(fetcher, base(site) + "/robots.txt").status == 200
    assert ctx.servers.is_robots_valid(server, ctx.clock.time(), 60)
    assert not ctx.servers.allowed(base(site) + "/private", "anybot")
    assert ctx.servers.allowed(base(site) + "/ok", "anybot")


@pytest.mark.parametrize("ignore_cookies", [False, True])
def test_cookies_kept_unless_ignored(
    site: Site, ctx: ProcessorContext, ignore_cookies: bool
) -> None:
    proc = started(ctx, ignore_cookies=ignore_cookies)
    try:
        fetch(proc, base(site) + "/set-cookie")
        fetch(proc, base(site) + "/ok")
        _, headers, _ = site.seen[-1]
        assert headers.get("Cookie") == (None if ignore_cookies else "session=abc")
    finally:
        proc.stop()


def test_accept_compression_offers_gzip(site: Site, ctx: ProcessorContext) -> None:
    proc = started(ctx, accept_compression=True)
    try:
        fetch(proc, base(site) + "/ok")
        _, headers, _ = site.seen[-1]
        assert headers["Accept-Encoding"] == "gzip, deflate, br"
    finally:
        proc.stop()


def test_stop_is_idempotent(ctx: ProcessorContext) -> None:
    proc = started(ctx)
    proc.stop()
    proc.stop()
