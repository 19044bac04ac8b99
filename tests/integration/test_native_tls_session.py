"""TLS sessions kept by OpenSSL where reading Python's ``SSLSocket.session`` leaks a copy
(CPython 3.11, 3.12 before 3.12.8): reading them grows nothing, and they resume handshakes
against a real local TLS server, in their own context only."""

from __future__ import annotations

import gc
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.fetch_support import self_signed_cert

from crawler.memory.glibc_malloc import GlibcMalloc
from processors.fetch import native_tls_session
from processors.fetch.native_tls_session import NativeTlsSession

pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(60),
    pytest.mark.skipif(
        native_tls_session._LIB is None, reason="this Python's SSLSocket.session does not leak"
    ),
]


def heap_in_use() -> int:
    """Bytes glibc's malloc has handed out and not had back (all arenas)."""
    glibc = GlibcMalloc.load()
    usage = glibc.usage() if glibc is not None else None
    assert usage is not None, "glibc with mallinfo2 is needed to measure the heap"
    return usage.in_use


class EchoServer:
    """TLS 1.3 on 127.0.0.1: each connection reads a line, answers ``ok`` and closes; records
    whether each handshake resumed a session."""

    def __init__(self, cert: tuple[Path, Path]) -> None:
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(*cert)
        self.resumed: list[bool] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                raw, _ = self.sock.accept()
            except OSError:
                return
            try:
                with self.context.wrap_socket(raw, server_side=True) as tls:
                    self.resumed.append(tls.session_reused)
                    tls.recv(16)
                    tls.sendall(b"ok")
            except OSError:
                pass


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EchoServer]:
    made = EchoServer(self_signed_cert(tmp_path_factory.mktemp("native-tls")))
    yield made
    made.sock.close()


def client_context() -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def connect(
    server: EchoServer, context: ssl.SSLContext, session: NativeTlsSession | None
) -> tuple[ssl.SSLSocket, bool]:
    """A connection that offered ``session`` (if any) and whether the offer was taken."""
    tls = context.wrap_socket(
        socket.create_connection(("127.0.0.1", server.port), timeout=5),
        server_hostname="localhost",
        do_handshake_on_connect=False,
    )
    offered = session is not None and native_tls_session.offer(tls, session)
    tls.do_handshake()
    tls.sendall(b"hi\n")
    assert tls.recv(16) == b"ok"  # the server's session tickets have arrived by now
    return tls, offered


def test_reading_a_session_again_and_again_grows_nothing(server: EchoServer) -> None:
    tls, _ = connect(server, client_context(), None)
    with tls:
        sessions = [native_tls_session.read(tls) for _ in range(100)]  # warm up
        del sessions
        gc.collect()
        before = heap_in_use()
        for _ in range(2000):
            session = native_tls_session.read(tls)
            assert session is not None and session.timeout > 0
        del session
        gc.collect()
        grown = heap_in_use() - before
    # Python's own getter leaks ~5 KB a read here (10 MB for 2,000 reads).
    assert grown < 1_000_000, grown


def test_a_kept_session_resumes_later_connections_in_its_own_context(server: EchoServer) -> None:
    context = client_context()
    first, _ = connect(server, context, None)
    session = native_tls_session.read(first)
    first.close()  # closed without a TLS shutdown, as the crawler closes connections
    assert session is not None
    resumed = []
    for _ in range(3):
        tls, offered = connect(server, context, session)
        assert offered
        resumed.append(tls.session_reused)
        tls.close()
    assert resumed == [True, True, True]
    # another context (other certificate checks) is never offered it: a full handshake
    other, offered = connect(server, client_context(), session)
    assert not offered and not other.session_reused
    other.close()
