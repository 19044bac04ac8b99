"""FetchHTTP over TLS: a self-signed certificate with and without verification, and HTTP/2."""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import h2.config
import h2.connection
import h2.events
import pytest
from support.fetch_support import make_ctx, read_head, self_signed_cert

from crawler import CrawlURI, ProcessorContext, Recording
from processors.fetch import FetchHTTP, FetchHTTPParams

pytestmark = pytest.mark.integration

BODY = b"served over tls"


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return self_signed_cert(tmp_path_factory.mktemp("tls"))


class TlsServer:
    """HTTPS on 127.0.0.1: HTTP/2 when the client offers h2 by ALPN, else HTTP/1.1."""

    def __init__(self, cert: tuple[Path, Path]) -> None:
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(*cert)
        self.context.set_alpn_protocols(["h2", "http/1.1"])
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.protocols: list[str | None] = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.done.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(5)
            with self.context.wrap_socket(conn, server_side=True) as tls:
                self.protocols.append(tls.selected_alpn_protocol())
                if tls.selected_alpn_protocol() == "h2":
                    self._h2(tls)
                else:
                    read_head(tls)
                    tls.sendall(
                        b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                        % (len(BODY), BODY)
                    )
        except (OSError, ssl.SSLError):
            pass  # the client refused our certificate

    @staticmethod
    def _h2(tls: ssl.SSLSocket) -> None:
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
        conn.initiate_connection()
        tls.sendall(conn.data_to_send())
        while data := tls.recv(65535):
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.RequestReceived):
                    headers = [(":status", "200"), ("content-length", str(len(BODY)))]
                    conn.send_headers(event.stream_id, headers)
                    conn.send_data(event.stream_id, BODY, end_stream=True)
            tls.sendall(conn.data_to_send())

    def close(self) -> None:
        self.done.set()
        self.thread.join(5)
        self.sock.close()


@pytest.fixture
def server(cert: tuple[Path, Path]) -> Iterator[TlsServer]:
    srv = TlsServer(cert)
    yield srv
    srv.close()


@pytest.fixture
def ctx(tmp_path: Path) -> ProcessorContext:
    return make_ctx(tmp_path)


def fetch(ctx: ProcessorContext, uri: str, **params: Any) -> CrawlURI:
    proc = FetchHTTP("fetch_http", FetchHTTPParams(**params))
    proc.start(ctx)
    try:
        curi = CrawlURI(uri)
        proc.process(curi)
        return curi
    finally:
        proc.stop()


def test_self_signed_certificate_fetched_without_verification(
    server: TlsServer, ctx: ProcessorContext
) -> None:
    curi = fetch(ctx, f"https://localhost:{server.port}/")
    assert (curi.status, curi.http_version) == (200, "HTTP/1.1")
    assert isinstance(curi.recording, Recording)
    assert curi.recording.body_bytes() == BODY
    assert curi.ip_address == "127.0.0.1"


def test_self_signed_certificate_refused_with_verification(
    server: TlsServer, ctx: ProcessorContext
) -> None:
    curi = fetch(ctx, f"https://localhost:{server.port}/", verify_tls=True)
    assert curi.status == -2
    assert "err=SSLCertVerificationError" in curi.annotations
    assert curi.recording is None


def test_http2_negotiated_over_tls(server: TlsServer, ctx: ProcessorContext) -> None:
    curi = fetch(ctx, f"https://127.0.0.1:{server.port}/h2", http2=True)
    assert (curi.status, curi.http_version) == (200, "HTTP/2")
    assert server.protocols == ["h2"]
    assert isinstance(curi.recording, Recording)
    assert curi.recording.body_bytes() == BODY
    assert curi.recording.response_head.startswith(b"HTTP/2 200")


def test_http1_only_by_default(server: TlsServer, ctx: ProcessorContext) -> None:
    assert fetch(ctx, f"https://127.0.0.1:{server.port}/").status == 200
    assert server.protocols == ["http/1.1"]


def test_http2_connection_reused_for_later_fetches(
    server: TlsServer, ctx: ProcessorContext
) -> None:
    proc = FetchHTTP("fetch_http", FetchHTTPParams(http2=True))
    proc.start(ctx)
    try:
        for i in range(4):
            curi = CrawlURI(f"https://127.0.0.1:{server.port}/h2/{i}")
            proc.process(curi)
            assert (curi.status, curi.http_version) == (200, "HTTP/2")
    finally:
        proc.stop()
    assert server.protocols == ["h2"]  # one TLS connection
