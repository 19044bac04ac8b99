"""Keep-alive over TLS as over plain HTTP, and TLS session resumption: a local server counts the
connections it accepted, the requests it served and which handshakes resumed a session."""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import httpcore
import pytest
from support.fetch_support import make_ctx, read_head, self_signed_cert

from crawler import CrawlURI, ProcessorContext
from processors.fetch import FetchHTTP, FetchHTTPParams
from processors.fetch.fetch_clients import archival_tls_context
from processors.fetch.guarded_backend import GuardedBackend
from processors.fetch.http11_client import Http11Client

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

BODY = b"<html>kept alive</html>" * 40
FETCHES = 6
VERSIONS = {"TLS 1.3": ssl.TLSVersion.TLSv1_3, "TLS 1.2": ssl.TLSVersion.TLSv1_2}


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return self_signed_cert(tmp_path_factory.mktemp("tls-reuse"))


class CountingServer:
    """HTTP/1.1 on 127.0.0.1, over TLS when given a context: answers every request of a
    connection (``close_each``: one, then closes) and counts what it accepted and served."""

    def __init__(
        self, context: ssl.SSLContext | None, close_each: bool = False, port: int = 0
    ) -> None:
        self.context = context
        self.close_each = close_each
        self.connections = 0
        self.requests = 0
        self.resumed: list[bool] = []  # per TLS connection: did its handshake resume a session
        self.tls_versions: set[str | None] = set()
        self._lock = threading.Lock()
        self.sock = socket.create_server(("127.0.0.1", port))
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.done.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            with self._lock:
                self.connections += 1
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, raw: socket.socket) -> None:
        raw.settimeout(5)
        try:
            conn: socket.socket = raw
            if self.context is not None:
                tls = self.context.wrap_socket(raw, server_side=True)
                with self._lock:
                    self.resumed.append(tls.session_reused)
                    self.tls_versions.add(tls.version())
                conn = tls
            with conn:
                while read_head(conn):
                    with self._lock:
                        self.requests += 1
                    close = b"Connection: close\r\n" if self.close_each else b""
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n%s"
                        % (len(BODY), close, BODY)
                    )
                    if self.close_each:
                        return
        except OSError:
            pass  # the client went away

    def close(self) -> None:
        self.done.set()
        self.thread.join(5)
        self.sock.close()


def server_context(
    cert: tuple[Path, Path], version: ssl.TLSVersion, resumable: bool = True
) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*cert)
    context.minimum_version = context.maximum_version = version
    if not resumable:
        context.options |= ssl.OP_NO_TICKET
        context.num_tickets = 0
    return context


@pytest.fixture
def ctx(tmp_path: Path) -> ProcessorContext:
    return make_ctx(tmp_path)


@pytest.fixture
def fetcher(ctx: ProcessorContext) -> Iterator[FetchHTTP]:
    proc = FetchHTTP("fetch_http", FetchHTTPParams(timeout_s=10, read_timeout_s=10))
    proc.start(ctx)
    yield proc
    proc.stop()


def fetch_all(fetcher: FetchHTTP, base: str, count: int = FETCHES) -> list[CrawlURI]:
    done = []
    for i in range(count):
        curi = CrawlURI(f"{base}/page{i}.html")
        fetcher.process(curi)
        done.append(curi)
    return done


def assert_all_fetched(curis: list[CrawlURI]) -> None:
    assert [c.status for c in curis] == [200] * len(curis)
    assert all(c.content_length == len(BODY) for c in curis)


def test_sequential_fetches_over_http_use_one_connection(fetcher: FetchHTTP) -> None:
    server = CountingServer(None)
    try:
        assert_all_fetched(fetch_all(fetcher, f"http://127.0.0.1:{server.port}"))
    finally:
        server.close()
    assert (server.connections, server.requests) == (1, FETCHES)


@pytest.mark.parametrize("version", VERSIONS)
def test_sequential_fetches_over_https_use_one_connection(
    fetcher: FetchHTTP, cert: tuple[Path, Path], version: str
) -> None:
    server = CountingServer(server_context(cert, VERSIONS[version]))
    try:
        assert_all_fetched(fetch_all(fetcher, f"https://localhost:{server.port}"))
    finally:
        server.close()
    assert server.tls_versions == {version.replace(" ", "v")}
    assert (server.connections, server.requests) == (1, FETCHES)


@pytest.mark.parametrize("version", VERSIONS)
def test_new_connections_resume_the_origins_tls_session(
    fetcher: FetchHTTP, cert: tuple[Path, Path], version: str
) -> None:
    server = CountingServer(server_context(cert, VERSIONS[version]), close_each=True)
    try:
        assert_all_fetched(fetch_all(fetcher, f"https://localhost:{server.port}", 3))
    finally:
        server.close()
    assert server.connections == 3
    assert server.resumed == [False, True, True]


def test_a_server_refusing_resumption_is_fetched_with_full_handshakes(
    fetcher: FetchHTTP, cert: tuple[Path, Path]
) -> None:
    context = server_context(cert, ssl.TLSVersion.TLSv1_3, resumable=False)
    server = CountingServer(context, close_each=True)
    try:
        assert_all_fetched(fetch_all(fetcher, f"https://localhost:{server.port}", 3))
    finally:
        server.close()
    assert server.resumed == [False, False, False]


def test_a_session_the_server_no_longer_knows_falls_back_to_a_full_handshake(
    fetcher: FetchHTTP, cert: tuple[Path, Path]
) -> None:
    """The origin's saved session is offered to a server restarted with new ticket keys."""
    first = CountingServer(server_context(cert, ssl.TLSVersion.TLSv1_3), close_each=True)
    try:
        assert_all_fetched(fetch_all(fetcher, f"https://localhost:{first.port}", 2))
    finally:
        first.close()
    assert first.resumed == [False, True]
    second = CountingServer(
        server_context(cert, ssl.TLSVersion.TLSv1_3), close_each=True, port=first.port
    )
    try:
        assert_all_fetched(fetch_all(fetcher, f"https://localhost:{second.port}", 2))
    finally:
        second.close()
    assert second.resumed == [False, True]


def test_httpx_client_reuses_tls_connections(
    ctx: ProcessorContext, cert: tuple[Path, Path]
) -> None:
    """``http2: true`` against an HTTP/1.1-only TLS server: httpx's pool keeps the connection."""
    server = CountingServer(server_context(cert, ssl.TLSVersion.TLSv1_3))
    proc = FetchHTTP("fetch_http", FetchHTTPParams(timeout_s=10, read_timeout_s=10, http2=True))
    proc.start(ctx)
    try:
        assert_all_fetched(fetch_all(proc, f"https://localhost:{server.port}"))
    finally:
        proc.stop()
        server.close()
    assert (server.connections, server.requests) == (1, FETCHES)


def test_a_failed_handshake_offering_a_session_forgets_it(cert: tuple[Path, Path]) -> None:
    """The server at the origin stops speaking TLS: the saved session is dropped, not offered
    again."""
    client = Http11Client(
        GuardedBackend(None, threading.Event()),
        archival_tls_context(),
        connect_timeout_s=5,
        read_timeout_s=5,
        keepalive_expiry_s=30,
        max_idle=4,
    )
    tls_server = CountingServer(server_context(cert, ssl.TLSVersion.TLSv1_3), close_each=True)
    origin = ("localhost", tls_server.port)
    try:
        response = client.send(f"https://localhost:{tls_server.port}/", [])
        assert b"".join(response.iter_raw()) == BODY
        response.close()
    finally:
        tls_server.close()
    assert client.tls_sessions.get(origin) is not None
    plain = socket.create_server(("127.0.0.1", tls_server.port))

    def answer_in_plain_text() -> None:
        conn, _ = plain.accept()
        with conn:
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=answer_in_plain_text, daemon=True)
    thread.start()
    try:
        with pytest.raises(httpcore.ConnectError):
            client.send(f"https://localhost:{tls_server.port}/", [])
    finally:
        thread.join(5)
        plain.close()
        client.close()
    assert client.tls_sessions.get(origin) is None


def tls_client() -> Http11Client:
    return Http11Client(
        GuardedBackend(None, threading.Event()),
        archival_tls_context(),
        connect_timeout_s=5,
        read_timeout_s=5,
        keepalive_expiry_s=30,
        max_idle=4,
    )


def get_each(client: Http11Client, port: int, count: int) -> list[ssl.SSLSession | None]:
    """``count`` GETs (the server closes each connection); the origin's session after each."""
    kept = []
    for _ in range(count):
        response = client.send(f"https://localhost:{port}/", [])
        assert b"".join(response.iter_raw()) == BODY
        response.close()
        kept.append(client.tls_sessions.get(("localhost", port)))
    return kept


@pytest.mark.parametrize("version", VERSIONS)
def test_a_resumed_session_is_offered_again_not_read_back(
    cert: tuple[Path, Path], version: str
) -> None:
    """Reconnects resume the session of the first handshake, which stays the one kept."""
    client = tls_client()
    server = CountingServer(server_context(cert, VERSIONS[version]), close_each=True)
    try:
        kept = get_each(client, server.port, 4)
    finally:
        server.close()
        client.close()
    assert server.resumed == [False, True, True, True]
    assert kept[0] is not None and all(s is kept[0] for s in kept)


def test_an_origin_refusing_a_session_it_took_before_has_each_new_session_kept(
    cert: tuple[Path, Path],
) -> None:
    """The server's ticket keys change after two connections (as a server with single-use
    tickets refuses a second use): the refused session is replaced, and from then on every
    connection's new session is kept, so each reconnect still resumes."""
    client = tls_client()
    server = CountingServer(server_context(cert, ssl.TLSVersion.TLSv1_3), close_each=True)
    try:
        kept = get_each(client, server.port, 2)
        server.context = server_context(cert, ssl.TLSVersion.TLSv1_3)  # new ticket keys
        kept += get_each(client, server.port, 3)
    finally:
        server.close()
        client.close()
    assert server.resumed == [False, True, False, True, True]
    assert kept[1] is kept[0]
    assert len({id(s) for s in kept[1:]}) == 4
