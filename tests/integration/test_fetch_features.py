"""FetchHTTP features: HTTP auth, a forward proxy, conditional requests (304 revisits), headers."""

from __future__ import annotations

import base64
import hashlib
import http.client
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from support.fetch_support import make_ctx

from crawler import CrawlURI, ProcessorContext, Recording
from crawler.history import CrawlHistory
from processors.fetch import Credential, FetchHTTP, FetchHTTPParams

pytestmark = pytest.mark.integration

REALM = "archive"
NONCE = "dcd98b7102dd2f0e8b11d0f600bfb0c093"
ETAG = '"v1"'
LAST_MODIFIED = "Wed, 21 Oct 2015 07:28:00 GMT"


def _md5(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()


class Site(ThreadingHTTPServer):
    daemon_threads = True
    seen: list[tuple[str, dict[str, str]]]


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
        headers = dict(self.headers.items())
        self.server.seen.append((self.path, headers))
        auth = headers.get("Authorization", "")
        if self.path == "/basic":
            good = "Basic " + base64.b64encode(b"alice:s3cret").decode()
            if auth == good:
                self.send(200, b"members only")
            else:
                self.send(401, b"who are you", {"WWW-Authenticate": f'Basic realm="{REALM}"'})
        elif self.path == "/digest":
            if self._digest_ok(auth):
                self.send(200, b"digest members")
            else:
                challenge = f'Digest realm="{REALM}", qop="auth", nonce="{NONCE}", algorithm=MD5'
                self.send(401, b"", {"WWW-Authenticate": challenge})
        elif self.path == "/cached":
            if headers.get("If-None-Match") == ETAG:
                self.send_response(304)
                self.send_header("ETag", ETAG)
                self.end_headers()
            else:
                self.send(200, b"cacheable", {"ETag": ETAG, "Last-Modified": LAST_MODIFIED})
        else:
            self.send(200, b"plain page", {"Content-Type": "text/plain"})

    def _digest_ok(self, auth: str) -> bool:
        if not auth.startswith("Digest "):
            return False
        fields = dict(re.findall(r'(\w+)="?([^",]*)"?', auth[7:]))
        ha1 = _md5(f"bob:{REALM}:hunter2")
        ha2 = _md5(f"GET:{fields.get('uri', '')}")
        expected = _md5(
            f"{ha1}:{NONCE}:{fields.get('nc')}:{fields.get('cnonce')}:{fields.get('qop')}:{ha2}"
        )
        return fields.get("username") == "bob" and fields.get("response") == expected


def _serve(server: ThreadingHTTPServer) -> Iterator[None]:
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture
def site() -> Iterator[Site]:
    server = Site(("127.0.0.1", 0), Handler)
    server.seen = []
    yield from (server for _ in _serve(server))


class Proxy(ThreadingHTTPServer):
    daemon_threads = True
    requested: list[str]


class ProxyHandler(BaseHTTPRequestHandler):
    """A forward proxy for absolute-form GETs, relaying to the origin with http.client."""

    protocol_version = "HTTP/1.1"
    server: Proxy

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.server.requested.append(self.path)
        target = urlsplit(self.path)
        upstream = http.client.HTTPConnection(target.hostname or "", target.port or 80, timeout=5)
        upstream.request("GET", target.path or "/", headers={"Via": "1.1 test-proxy"})
        reply = upstream.getresponse()
        body = reply.read()
        upstream.close()
        self.send_response(reply.status)
        self.send_header("X-Proxied", "yes")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def proxy() -> Iterator[Proxy]:
    server = Proxy(("127.0.0.1", 0), ProxyHandler)
    server.requested = []
    yield from (server for _ in _serve(server))


def base(server: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture
def ctx(tmp_path: Path) -> ProcessorContext:
    return make_ctx(tmp_path)


def started(ctx: ProcessorContext, **params: Any) -> FetchHTTP:
    proc = FetchHTTP("fetch_http", FetchHTTPParams(**params))
    proc.start(ctx)
    return proc


def fetch(proc: FetchHTTP, uri: str, *, force_fetch: bool = False) -> CrawlURI:
    curi = CrawlURI(uri, force_fetch=force_fetch)
    proc.process(curi)
    return curi


def recording(curi: CrawlURI) -> Recording:
    assert isinstance(curi.recording, Recording)
    return curi.recording


# -------------------------------------------------------------------------- auth
def test_401_without_credentials_is_recorded(site: Site, ctx: ProcessorContext) -> None:
    proc = started(ctx)
    try:
        curi = fetch(proc, base(site) + "/basic")
    finally:
        proc.stop()
    assert curi.status == 401
    assert recording(curi).body_bytes() == b"who are you"
    assert len(site.seen) == 1


def test_401_retried_with_matching_basic_credential(site: Site, ctx: ProcessorContext) -> None:
    cred = Credential(domain="127.0.0.1", username="alice", password="s3cret")
    proc = started(ctx, credentials=(cred,))
    try:
        curi = fetch(proc, base(site) + "/basic")
    finally:
        proc.stop()
    assert curi.status == 200
    assert recording(curi).body_bytes() == b"members only"
    assert [path for path, _ in site.seen] == ["/basic", "/basic"]
    assert "Authorization" not in site.seen[0][1]
    assert b"\r\nAuthorization: Basic " in recording(curi).request_head


def test_401_retried_with_digest_credential(site: Site, ctx: ProcessorContext) -> None:
    port = site.server_address[1]
    cred = Credential(
        domain=f"127.0.0.1:{port}", username="bob", password="hunter2", scheme="digest"
    )
    proc = started(ctx, credentials=(cred,))
    try:
        curi = fetch(proc, base(site) + "/digest")
    finally:
        proc.stop()
    assert curi.status == 200
    assert recording(curi).body_bytes() == b"digest members"
    assert b"\r\nAuthorization: Digest " in recording(curi).request_head


@pytest.mark.parametrize(
    ("cred", "requests"),
    [
        (Credential(domain="other.example", username="alice", password="s3cret"), 1),
        (Credential(domain="127.0.0.1.example", username="alice", password="s3cret"), 1),
        (Credential(domain="127.0.0.1", username="alice", password="x", scheme="digest"), 1),
        (Credential(domain="127.0.0.1", username="alice", password="x", realm="elsewhere"), 1),
        (Credential(domain="127.0.0.1", username="alice", password="wrong"), 2),
    ],
    ids=["other-host", "suffix-host", "other-scheme", "other-realm", "wrong-password"],
)
def test_401_kept_when_no_credential_fits(
    site: Site, ctx: ProcessorContext, cred: Credential, requests: int
) -> None:
    proc = started(ctx, credentials=(cred,))
    try:
        curi = fetch(proc, base(site) + "/basic")
    finally:
        proc.stop()
    assert curi.status == 401
    assert len(site.seen) == requests
    assert "Authorization" not in site.seen[0][1]


# -------------------------------------------------------------------------- proxy
def test_proxy_url_routes_requests_through_the_proxy(
    site: Site, proxy: Proxy, ctx: ProcessorContext
) -> None:
    proc = started(ctx, proxy_url=base(proxy))
    try:
        curi = fetch(proc, base(site) + "/page")
    finally:
        proc.stop()
    assert curi.status == 200
    assert curi.header("X-Proxied") == "yes"
    assert recording(curi).body_bytes() == b"plain page"
    assert proxy.requested == [base(site) + "/page"]
    assert site.seen[0][1]["Via"] == "1.1 test-proxy"
    # The proxy's address is not the origin's: the ServerCache learns nothing from it.
    assert ctx.servers.host_state("127.0.0.1") is None


def test_proxy_url_must_be_http_or_socks5() -> None:
    FetchHTTPParams(proxy_url="socks5://127.0.0.1:1080")
    FetchHTTPParams(proxy_url="socks5h://user:pw@127.0.0.1:1080")
    with pytest.raises(ValueError, match="proxy_url"):
        FetchHTTPParams(proxy_url="ftp://127.0.0.1:1080")
    with pytest.raises(ValueError, match="socks5"):
        FetchHTTPParams(proxy_url="socks5://:1080")


# -------------------------------------------------------------------------- conditional
def test_304_from_history_is_a_server_not_modified_revisit(site: Site, tmp_path: Path) -> None:
    with CrawlHistory.open(tmp_path / "state") as history:
        ctx = make_ctx(tmp_path, history=history)
        proc = started(ctx)
        try:
            first = fetch(proc, base(site) + "/cached")
            assert first.status == 200
            assert first.revisit is None
            assert "If-None-Match" not in site.seen[0][1]
            history.record_fetch(first, "<urn:uuid:first>", "2024-03-05T14:02:11Z")
            # Fetched again in the same crawl: only a forced re-fetch can be.
            second = fetch(proc, base(site) + "/cached", force_fetch=True)
        finally:
            proc.stop()
    sent = site.seen[1][1]
    assert sent["If-None-Match"] == ETAG
    assert sent["If-Modified-Since"] == LAST_MODIFIED
    assert second.status == 304
    assert "duplicate:server-not-modified" in second.annotations
    revisit = second.revisit
    assert revisit is not None
    assert revisit.profile == "server-not-modified"
    assert revisit.refers_to_uri == base(site) + "/cached"
    assert revisit.refers_to_date == "2024-03-05T14:02:11Z"
    assert revisit.refers_to_record_id == "<urn:uuid:first>"
    assert revisit.payload_digest == first.payload_digest
    assert recording(second).response_head.startswith(b"HTTP/1.1 304")


def test_conditional_headers_can_be_switched_off(site: Site, tmp_path: Path) -> None:
    with CrawlHistory.open(tmp_path / "state") as history:
        ctx = make_ctx(tmp_path, history=history)
        proc = started(ctx, send_if_none_match=False, send_if_modified_since=False)
        try:
            first = fetch(proc, base(site) + "/cached")
            history.record_fetch(first, "<urn:uuid:first>", "2024-03-05T14:02:11Z")
            # Fetched again in the same crawl: only a forced re-fetch can be.
            second = fetch(proc, base(site) + "/cached", force_fetch=True)
        finally:
            proc.stop()
    assert second.status == 200
    assert second.revisit is None
    assert "If-None-Match" not in site.seen[1][1]


# -------------------------------------------------------------------------- headers, IP
def test_accept_language_and_from_headers_sent(site: Site, ctx: ProcessorContext) -> None:
    proc = started(ctx, accept_headers=("Accept: text/html", "Accept-Language: fr, en;q=0.5"))
    try:
        fetch(proc, base(site) + "/page")
    finally:
        proc.stop()
    headers = site.seen[0][1]
    assert headers["Accept"] == "text/html"
    assert headers["Accept-Language"] == "fr, en;q=0.5"
    assert headers["From"] == "ops@x.example"


def test_remote_ip_noted_in_server_cache(site: Site, ctx: ProcessorContext) -> None:
    proc = started(ctx)
    try:
        curi = fetch(proc, base(site) + "/page")
    finally:
        proc.stop()
    assert curi.ip_address == "127.0.0.1"
    assert ctx.servers.host_ip("127.0.0.1") == "127.0.0.1"


def test_http2_option_still_fetches_from_an_http11_server(
    site: Site, ctx: ProcessorContext
) -> None:
    proc = started(ctx, http2=True)
    try:
        curi = fetch(proc, base(site) + "/page")
    finally:
        proc.stop()
    assert (curi.status, curi.http_version) == (200, "HTTP/1.1")
