"""GuardedStream on real loopback sockets: timeouts, and telling a reusable idle connection from
one the server hung up on or sent unrequested bytes over."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import httpcore
import pytest

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
