"""GuardedStream on real loopback sockets: timeouts, and telling a reusable idle connection from
one the server hung up on or sent unrequested bytes over."""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
import time
from collections.abc import Iterator

import httpcore
import pytest
from support.fetch_support import self_signed_cert

from processors.fetch.fetch_clients import archival_tls_context
from processors.fetch.guarded_backend import GuardedBackend, GuardedStream, fetch_deadline

pytestmark = pytest.mark.integration


@pytest.fixture
def pair() -> Iterator[tuple[GuardedStream, socket.socket]]:
    """A guarded client stream and the server's end of the same TCP connection."""
    listener = socket.create_server(("127.0.0.1", 0))
    backend = GuardedBackend(None, threading.Event())
    stream = backend.connect_tcp("127.0.0.1", listener.getsockname()[1], timeout=5)
    server, _ = listener.accept()
    listener.close()
    assert isinstance(stream, GuardedStream)
    yield stream, server
    stream.close()
    server.close()


def _settle() -> None:
    time.sleep(0.05)  # let loopback deliver anything the other end may have sent


def _becomes_readable(stream: GuardedStream, timeout_s: float = 30.0) -> bool:
    """Whether the stream turns readable before ``timeout_s`` (loopback delivers at once on
    an idle machine, later on a loaded one)."""
    deadline = time.monotonic() + timeout_s
    while not stream.get_extra_info("is_readable"):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_idle_connection_after_a_whole_response_is_not_readable(
    pair: tuple[GuardedStream, socket.socket],
) -> None:
    stream, server = pair
    stream.write(b"GET / HTTP/1.1\r\n\r\n", timeout=5)
    assert server.recv(100).startswith(b"GET /")
    server.sendall(b"x" * 5000)
    got = b""
    while len(got) < 5000:
        got += stream.read(65536, timeout=5)
    _settle()
    assert stream.get_extra_info("is_readable") is False


def test_unrequested_bytes_make_an_idle_connection_readable(
    pair: tuple[GuardedStream, socket.socket],
) -> None:
    stream, server = pair
    server.sendall(b"HTTP/1.1 200 OK\r\n")  # nothing asked for it: the connection is unusable
    assert _becomes_readable(stream)


def test_server_hang_up_makes_an_idle_connection_readable(
    pair: tuple[GuardedStream, socket.socket],
) -> None:
    stream, server = pair
    server.shutdown(socket.SHUT_WR)
    assert _becomes_readable(stream)
    assert stream.read(100, timeout=5) == b""


def test_read_times_out_and_the_connection_still_works(
    pair: tuple[GuardedStream, socket.socket],
) -> None:
    stream, server = pair
    began = time.monotonic()
    with pytest.raises(httpcore.ReadTimeout):
        stream.read(100, timeout=0.2)
    assert 0.15 <= time.monotonic() - began < 15  # late on a loaded machine, never early
    server.sendall(b"late")
    assert stream.read(100, timeout=5) == b"late"


def test_fetch_deadline_cuts_a_longer_read_timeout(
    pair: tuple[GuardedStream, socket.socket],
) -> None:
    stream, _server = pair
    began = time.monotonic()
    with fetch_deadline(time.monotonic() + 0.3), pytest.raises(httpcore.ReadTimeout):
        stream.read(100, timeout=30)
    assert time.monotonic() - began < 15  # the deadline, not the 30 s read timeout


def test_write_times_out_when_the_peer_never_reads(
    pair: tuple[GuardedStream, socket.socket],
) -> None:
    stream, _server = pair
    with pytest.raises(httpcore.WriteTimeout):
        for _ in range(10_000):  # fills both kernels' buffers, then the send blocks
            stream.write(b"y" * 65536, timeout=0.2)


# ------------------------------------------------------------------ over TLS
@pytest.fixture(scope="module")
def server_tls(tmp_path_factory: pytest.TempPathFactory) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*self_signed_cert(tmp_path_factory.mktemp("guarded-tls")))
    return context  # TLS 1.3: session tickets follow the handshake


@pytest.fixture
def tls_pair(server_tls: ssl.SSLContext) -> Iterator[tuple[GuardedStream, ssl.SSLSocket]]:
    """A guarded client stream after its TLS handshake, and the server's TLS end."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[ssl.SSLSocket] = []

    def accept() -> None:
        conn, _ = listener.accept()
        conn.settimeout(5)
        accepted.append(server_tls.wrap_socket(conn, server_side=True))

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    backend = GuardedBackend(None, threading.Event())
    plain = backend.connect_tcp("127.0.0.1", listener.getsockname()[1], timeout=5)
    stream = plain.start_tls(archival_tls_context(), server_hostname="localhost", timeout=5)
    thread.join(5)
    listener.close()
    assert isinstance(stream, GuardedStream)
    yield stream, accepted[0]
    stream.close()
    accepted[0].close()


def _exchange(stream: GuardedStream, server: ssl.SSLSocket, size: int = 50_000) -> None:
    """One request and its whole response, then the connection marked idle."""
    stream.write(b"GET / HTTP/1.1\r\n\r\n", timeout=5)
    assert server.recv(100).startswith(b"GET /")
    server.sendall(b"x" * size)
    got = 0
    while got < size:
        got += len(stream.read(65536, timeout=5))
    stream.went_idle()


def test_tls_idle_connection_after_tickets_and_responses_is_not_readable(
    tls_pair: tuple[GuardedStream, ssl.SSLSocket],
) -> None:
    stream, server = tls_pair
    _settle()  # the server's session tickets are in the client's kernel, unread
    assert stream.get_extra_info("is_readable") is False
    for _ in range(3):
        _exchange(stream, server)
        _settle()
        assert stream.get_extra_info("is_readable") is False


def test_tls_unrequested_bytes_make_an_idle_connection_readable(
    tls_pair: tuple[GuardedStream, ssl.SSLSocket],
) -> None:
    stream, server = tls_pair
    _exchange(stream, server)
    server.sendall(b"HTTP/1.1 200 OK\r\n")
    _settle()
    assert stream.get_extra_info("is_readable") is True


def test_tls_server_hang_up_makes_an_idle_connection_readable(
    tls_pair: tuple[GuardedStream, ssl.SSLSocket],
) -> None:
    stream, server = tls_pair
    _exchange(stream, server)
    server.settimeout(0)
    with contextlib.suppress(ssl.SSLWantReadError):  # not waiting for the client's reply
        server.unwrap()  # close_notify: a TLS close the TCP connection outlives
    _settle()
    assert stream.get_extra_info("is_readable") is True


def test_tls_server_closing_the_socket_makes_an_idle_connection_readable(
    tls_pair: tuple[GuardedStream, ssl.SSLSocket],
) -> None:
    stream, server = tls_pair
    _exchange(stream, server)
    server.close()
    _settle()
    assert stream.get_extra_info("is_readable") is True


def test_tls_read_times_out_and_the_connection_still_works(
    tls_pair: tuple[GuardedStream, ssl.SSLSocket],
) -> None:
    stream, server = tls_pair
    began = time.monotonic()
    with pytest.raises(httpcore.ReadTimeout):
        stream.read(100, timeout=0.2)
    assert time.monotonic() - began < 3
    server.sendall(b"late")
    assert stream.read(100, timeout=5) == b"late"


def test_tls_write_times_out_when_the_peer_never_reads(
    tls_pair: tuple[GuardedStream, ssl.SSLSocket],
) -> None:
    stream, _server = tls_pair
    with pytest.raises(httpcore.ReadTimeout):
        stream.read(100, timeout=0.1)  # the socket's timeout is now a read slice
    began = time.monotonic()
    with pytest.raises(httpcore.WriteTimeout):
        for _ in range(10_000):  # fills both kernels' buffers, then the send blocks
            stream.write(b"y" * 65536, timeout=0.3)
    assert time.monotonic() - began < 10
