"""FetchHTTP's HTTP/1.1 client against scripted servers: what it records, how it frames bodies,
when it reuses a connection and when it does not."""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.fetch_support import RawServer, fetch, make_ctx, read_head

from crawler import CrawlURI, ProcessorContext, Recording
from processors.fetch import FetchHTTP, FetchHTTPParams
from processors.fetch.guarded_backend import GuardedBackend
from processors.fetch.http11_client import Http11Client

pytestmark = pytest.mark.integration


@pytest.fixture
def ctx(tmp_path: Path) -> ProcessorContext:
    return make_ctx(tmp_path)


@pytest.fixture
def fetcher(ctx: ProcessorContext) -> Iterator[FetchHTTP]:
    proc = FetchHTTP("fetch_http", FetchHTTPParams(timeout_s=5, read_timeout_s=5))
    proc.start(ctx)
    yield proc
    proc.stop()


def body_of(curi: CrawlURI) -> bytes:
    assert isinstance(curi.recording, Recording)
    return curi.recording.body_bytes()


def answer_each_request(responses: list[bytes], close_after: bool = False) -> Any:
    """A handler answering successive requests on one connection with ``responses``."""

    def handle(conn: socket.socket, _first: bytes) -> None:
        for i, response in enumerate(responses):
            if i:
                head = read_head(conn)
                if not head:
                    return
            conn.sendall(response)
        if close_after:
            conn.shutdown(socket.SHUT_WR)

    return handle


def test_response_head_recorded_as_received_and_chunked_body_dechunked(
    fetcher: FetchHTTP,
) -> None:
    head = (
        b"HTTP/1.1 200 Very Well\r\nServer:odd-spacing  \r\nTransfer-Encoding: chunked\r\n"
        b"X-Folded: a\r\n\tb\r\nConnection: close\r\n\r\n"
    )
    chunks = b"5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n"
    with RawServer(answer_each_request([head + chunks])) as server:
        curi = fetch(fetcher, server.base + "/page")
    assert curi.status == 200
    assert body_of(curi) == b"hello, world"
    rec = curi.recording
    assert isinstance(rec, Recording)
    assert rec.response_head == head.replace(b"Transfer-Encoding", b"X-Crawler-Transfer-Encoding")
    assert curi.header("x-folded") == "a b"
    assert rec.request_head.startswith(b"GET /page HTTP/1.1\r\nHost: 127.0.0.1:")
    assert rec.request_head.endswith(b"\r\n\r\n")


def test_informational_responses_are_read_past(fetcher: FetchHTTP) -> None:
    final = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
    early = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n"
    with RawServer(answer_each_request([early + final])) as server:
        curi = fetch(fetcher, server.base + "/")
    assert curi.status == 200
    assert body_of(curi) == b"ok"
    assert isinstance(curi.recording, Recording)
    assert curi.recording.response_head.startswith(b"HTTP/1.1 200 OK\r\n")


def test_http10_body_read_until_close(fetcher: FetchHTTP) -> None:
    response = b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n" + b"x" * 100_000
    with RawServer(answer_each_request([response], close_after=True)) as server:
        curi = fetch(fetcher, server.base + "/")
    assert curi.status == 200
    assert curi.http_version == "HTTP/1.0"
    assert body_of(curi) == b"x" * 100_000


def test_conflicting_lengths_are_minus_3(fetcher: FetchHTTP) -> None:
    response = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc"
    with RawServer(answer_each_request([response], close_after=True)) as server:
        curi = fetch(fetcher, server.base + "/")
    assert curi.status == -3
    assert "err=RemoteProtocolError" in curi.annotations


def test_a_connection_the_server_closed_while_idle_is_replaced_not_failed(
    fetcher: FetchHTTP,
) -> None:
    """The server keeps the connection alive, then drops it without a word: the next fetch is
    sent again on a new connection instead of failing with -3."""
    ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    connections = []

    def handle(conn: socket.socket, _first: bytes) -> None:
        connections.append(conn)
        conn.sendall(ok)
        if len(connections) == 1:
            read_head(conn)  # the second request arrives, and the connection is dropped
            conn.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
            )
            return

    with RawServer(handle) as server:
        first = fetch(fetcher, server.base + "/1")
        second = fetch(fetcher, server.base + "/2")
    assert (first.status, second.status) == (200, 200)
    assert len(server.heads) == 2
    assert server.heads[1].startswith(b"GET /2 ")


def test_keep_alive_connection_reused_only_after_a_clean_response(fetcher: FetchHTTP) -> None:
    clean = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    extra = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA"
    with RawServer(answer_each_request([clean, extra, clean])) as server:
        statuses = [fetch(fetcher, f"{server.base}/{i}").status for i in range(4)]
    assert statuses == [200, 200, 200, 200]
    # Requests 1 and 2 shared a connection; bytes past the second body spoiled it, so the third
    # went on a new connection (whose first answer is `clean`), and the fourth reused that one.
    assert len(server.heads) == 2


OK_2 = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


@contextlib.contextmanager
def _pool(
    servers: int, answers: int, max_idle: int, keepalive_expiry_s: float
) -> Iterator[tuple[Http11Client, list[RawServer]]]:
    """A client whose pool keeps ``max_idle`` connections, and ``servers`` raw servers that
    each answer ``answers`` requests per connection with ``ok``; all closed after."""
    raw = [RawServer(answer_each_request([OK_2] * answers)) for _ in range(servers)]
    client = Http11Client(
        GuardedBackend(None, threading.Event()),
        ssl.create_default_context(),
        connect_timeout_s=5,
        read_timeout_s=5,
        keepalive_expiry_s=keepalive_expiry_s,
        max_idle=max_idle,
    )
    try:
        for server in raw:
            server.__enter__()
        yield client, raw
    finally:
        client.close()
        for server in raw:
            server.__exit__(None, None, None)


def _get(client: Http11Client, server: RawServer) -> None:
    response = client.send(server.base + "/", [])
    assert b"".join(response.iter_raw()) == b"ok"
    response.close()


def test_pool_keeps_at_most_max_idle_connections(ctx: ProcessorContext) -> None:
    with _pool(5, 1, max_idle=3, keepalive_expiry_s=60) as (client, servers):
        for server in servers:
            _get(client, server)
        assert client.idle_connections() == 3
    assert client.idle_connections() == 0


def test_a_full_pool_closes_its_oldest_idle_connection_first(ctx: ProcessorContext) -> None:
    with _pool(3, 2, max_idle=2, keepalive_expiry_s=60) as (client, servers):
        oldest, middle, newest = servers
        for server in servers:
            _get(client, server)
        assert client.idle_connections() == 2
        _get(client, newest)  # kept: reused
        _get(client, middle)  # kept: reused
        _get(client, oldest)  # closed when the third went idle: a new connection
        assert [s.accepted for s in servers] == [2, 1, 1]
        assert len(oldest.heads) == 2 and len(middle.heads) == 1 and len(newest.heads) == 1


def test_a_check_in_closes_the_connections_that_expired_while_idle(
    ctx: ProcessorContext,
) -> None:
    with _pool(3, 2, max_idle=10, keepalive_expiry_s=1.0) as (client, servers):
        _get(client, servers[0])
        _get(client, servers[1])
        assert client.idle_connections() == 2
        time.sleep(1.3)
        _get(client, servers[2])  # its check-in sweeps the two that expired
        assert client.idle_connections() == 1
        _get(client, servers[2])
        assert servers[2].accepted == 1


def test_expired_idle_connection_is_not_reused(ctx: ProcessorContext) -> None:
    ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    proc = FetchHTTP("fetch_http", FetchHTTPParams(keepalive_expiry_s=0.05))
    proc.start(ctx)
    try:
        with RawServer(answer_each_request([ok, ok])) as server:
            assert fetch(proc, server.base + "/1").status == 200
            time.sleep(0.2)
            assert fetch(proc, server.base + "/2").status == 200
        assert len(server.heads) == 2  # two connections
    finally:
        proc.stop()
