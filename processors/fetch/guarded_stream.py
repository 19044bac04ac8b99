"""GuardedStream: one socket of a fetch, every operation bounded by its
:class:`~processors.fetch.guarded_backend.GuardedBackend` (the fetch's deadline, the crawl's
stop), and able to tell a reusable idle keep-alive connection from a dead one — over TCP and
over TLS alike (see the class docstring).

Thread-safety: a stream belongs to the thread using its connection (a pool hands it over).
"""

from __future__ import annotations

import contextlib
import math
import socket
import ssl
import struct
import sys
import time
from typing import Any, Protocol

import httpcore
from httpcore import NetworkStream
from httpcore._backends.sync import SyncStream

from processors.fetch import native_tls_session
from processors.fetch.native_tls_session import (
    PYTHON_SESSION_LEAKS,
    NativeTlsSession,
    TlsSession,
)

# Linux: kernel socket timeouts and TCP_INFO (state is byte 0; tcpi_bytes_received, a u64, sits
# at offset 128 of struct tcp_info since Linux 4.1: shorter answers fall back to poll).
_KERNEL_TIMEOUTS = sys.platform.startswith("linux") and hasattr(socket, "TCP_INFO")
_TCP_INFO = getattr(socket, "TCP_INFO", 11)
_TCP_ESTABLISHED = 1
_BYTES_RECEIVED = 128
_TCP_INFO_LEN = 136


class StreamGuard(Protocol):
    """What a stream asks of its backend: bounded reads and the time left."""

    def read(
        self, stream: Any, max_bytes: int, timeout: float | None, *, raw: bool = False
    ) -> bytes: ...

    def clamp(self, timeout: float | None, error: type[Exception]) -> float: ...


class GuardedStream(NetworkStream):
    """A socket stream whose every operation is bounded by its :class:`GuardedBackend`.

    Over httpcore's plain socket stream it reads and writes the socket itself, setting the
    timeout only when it changes (httpcore sets it before every call). Each system call that
    releases the interpreter lets another thread take it and costs two thread switches, so on
    Linux the socket is left in blocking mode with kernel timeouts (``SO_RCVTIMEO`` and
    ``SO_SNDTIMEO``, set without releasing it): a ``recv`` is one system call instead of
    ``poll`` + ``recv``. Asked whether an idle connection is readable (the server hung up or sent
    bytes nobody asked for), it compares the kernel's TCP state and byte count (``TCP_INFO``)
    with what was read instead of calling ``poll``. Elsewhere Python's socket timeouts and
    httpcore's checks are used.

    Over TLS (an ``ssl.SSLSocket``, made by :meth:`start_tls`, which can offer a saved session)
    reads and writes use Python's socket timeouts: OpenSSL retries a read that a kernel timeout
    cut, so it would never time out. What the kernel received there counts TLS records, not the
    bytes read, so an idle TLS connection is judged by :meth:`went_idle`'s mark instead: bytes
    past it are drained without waiting — TLS records only (a TLS 1.3 session ticket, a key
    update) leave the connection usable, application data or a close do not.
    """

    __slots__ = (
        "_backend",
        "_idle_mark",
        "_inner",
        "_kernel",
        "_peer",
        "_received",
        "_send_timeout",
        "_sock",
        "_timeout",
        "_tls",
    )

    def __init__(self, inner: NetworkStream, backend: StreamGuard) -> None:
        self._inner = inner
        self._backend = backend
        sock = getattr(inner, "_sock", None) if type(inner) is SyncStream else None
        self._sock: socket.socket | None = sock if isinstance(sock, socket.socket) else None
        self._tls: ssl.SSLSocket | None = sock if isinstance(sock, ssl.SSLSocket) else None
        self._kernel = _KERNEL_TIMEOUTS and self._sock is not None and self._tls is None
        self._timeout: float | None = -1.0
        self._send_timeout = -1.0
        self._peer: Any = None
        self._received = 0
        self._idle_mark = -1  # TLS: the kernel's received byte count when last known idle
        if self._kernel:
            assert self._sock is not None
            self._sock.settimeout(None)

    def _set_timeout(self, timeout: float, reading: bool) -> None:
        """Bound the next recv (``reading``) or send by ``timeout`` seconds.

        With kernel timeouts the receive and send limits are separate options, each set only
        when its value changes; otherwise the one Python socket timeout serves both.
        """
        if not self._kernel:
            if timeout != self._timeout:
                assert self._sock is not None
                self._sock.settimeout(None if timeout == math.inf else timeout)
                self._timeout = timeout
            return
        if (self._timeout if reading else self._send_timeout) != timeout:
            assert self._sock is not None
            option = socket.SO_RCVTIMEO if reading else socket.SO_SNDTIMEO
            self._sock.setsockopt(socket.SOL_SOCKET, option, _timeval(timeout))
            if reading:
                self._timeout = timeout
            else:
                self._send_timeout = timeout

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._sock is None:
            return self._backend.read(self._inner, max_bytes, timeout)
        return self._backend.read(self, max_bytes, timeout, raw=True)

    def raw_read(self, max_bytes: int, timeout: float) -> bytes:
        """One ``recv`` within ``timeout`` (httpcore's exceptions), for the backend's loop."""
        try:
            self._set_timeout(timeout, True)
            assert self._sock is not None
            data = self._sock.recv(max_bytes)
        except (TimeoutError, BlockingIOError) as exc:  # BlockingIOError: SO_RCVTIMEO ran out
            raise httpcore.ReadTimeout(exc) from exc
        except OSError as exc:
            raise httpcore.ReadError(exc) from exc
        self._received += len(data)
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        limit = self._backend.clamp(timeout, httpcore.WriteTimeout)
        sock = self._sock
        if sock is None:
            self._inner.write(buffer, limit)
            return
        # Over TLS the one Python timeout is left at the reads' (shorter) slice when it is set,
        # and a send it cuts is repeated (as OpenSSL asks: same bytes) until ``limit``: two
        # fewer system calls per request than switching it to the write's and back.
        slices = self._tls is not None and 0 < (self._timeout or 0) <= limit
        if slices:
            deadline = time.monotonic() + limit
        try:
            if not slices:
                self._set_timeout(limit, False)
            view = memoryview(buffer)
            while view:
                try:
                    view = view[sock.send(view) :]
                except TimeoutError:
                    if not slices or time.monotonic() >= deadline:
                        raise
        except (TimeoutError, BlockingIOError) as exc:
            raise httpcore.WriteTimeout(exc) from exc
        except OSError as exc:
            raise httpcore.WriteError(exc) from exc

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
        session: TlsSession | None = None,
    ) -> NetworkStream:
        """TLS over this stream (SNI ``server_hostname``), offering ``session`` to resume;
        errors are httpcore's ``ConnectTimeout`` / ``ConnectError``, the stream then closed."""
        limit = self._backend.clamp(timeout, httpcore.ConnectTimeout)
        sock = self._sock
        if sock is None or self._tls is not None:  # not a plain socket: httpcore's own way
            return GuardedStream(
                self._inner.start_tls(ssl_context, server_hostname, limit), self._backend
            )
        try:
            sock.settimeout(None if limit == math.inf else limit)
            if isinstance(session, NativeTlsSession):
                tls = ssl_context.wrap_socket(
                    sock, server_hostname=server_hostname, do_handshake_on_connect=False
                )
                native_tls_session.offer(tls, session)  # if refused: a full handshake
                tls.do_handshake()
            else:
                tls = ssl_context.wrap_socket(
                    sock, server_hostname=server_hostname, session=session
                )
        except BaseException as exc:
            self._inner.close()
            if isinstance(exc, TimeoutError):
                raise httpcore.ConnectTimeout(exc) from exc
            if isinstance(exc, OSError):
                raise httpcore.ConnectError(exc) from exc
            raise
        return GuardedStream(SyncStream(tls), self._backend)

    def tls_session(self) -> tuple[TlsSession | None, bool]:
        """The TLS session (to offer on a later connection) and whether this one resumed."""
        return self.read_tls_session(), self.tls_resumed()

    def read_tls_session(self) -> TlsSession | None:
        """A copy of the TLS session (None over plain TCP). Costly: Python serializes the
        session and parses it back, the server's certificate included. Where reading
        ``SSLSocket.session`` leaks that copy (CPython 3.11, 3.12 before 3.12.8), a copy made by
        OpenSSL instead (:mod:`~processors.fetch.native_tls_session`)."""
        if self._tls is None:
            return None
        if PYTHON_SESSION_LEAKS:
            return native_tls_session.read(self._tls)
        return self._tls.session

    def tls_resumed(self) -> bool:
        """Whether this TLS connection's handshake resumed a session (cheap)."""
        return self._tls is not None and bool(self._tls.session_reused)

    def went_idle(self) -> None:
        """Mark a TLS connection idle (its response read to the end): bytes the kernel
        receives past this point are looked at by the next ``is_readable``."""
        if self._tls is not None and _KERNEL_TIMEOUTS:
            self._idle_mark = _tcp_received(self._tls)

    def get_extra_info(self, info: str) -> Any:
        if info == "server_addr":  # asked once per response: the peer never changes
            if self._peer is None:
                self._peer = self._inner.get_extra_info(info)
            return self._peer
        if info == "is_readable" and self._tls is not None:
            return self._tls_readable(self._tls)
        if info == "is_readable" and self._kernel and self._sock is not None:
            try:
                tcp = self._sock.getsockopt(socket.IPPROTO_TCP, _TCP_INFO, _TCP_INFO_LEN)
            except OSError:
                return True  # closed: the next read would return b""
            if len(tcp) >= _TCP_INFO_LEN:
                received = int.from_bytes(tcp[_BYTES_RECEIVED:_TCP_INFO_LEN], sys.byteorder)
                return tcp[0] != _TCP_ESTABLISHED or received != self._received
        return self._inner.get_extra_info(info)

    def _tls_readable(self, tls: ssl.SSLSocket) -> bool:
        """Whether an idle TLS connection is unusable: closed, or application data waiting."""
        if tls.pending():
            return True
        received = -1
        if _KERNEL_TIMEOUTS:
            received = _tcp_received(tls)
            if received == -2:
                return True  # hung up
            if received >= 0 and received == self._idle_mark:
                return False  # nothing arrived since the last response ended
        previous = tls.gettimeout()
        try:
            tls.settimeout(0.0)
            tls.recv(1)
        except ssl.SSLWantReadError:
            self._idle_mark = received
            return False  # TLS records only, or nothing
        except OSError:
            return True
        finally:
            with contextlib.suppress(OSError):
                tls.settimeout(previous)
        return True  # b"": closed; else bytes nobody asked for


def _tcp_received(sock: socket.socket) -> int:
    """Bytes the kernel received on ``sock`` (TCP_INFO); -2 if the connection is no longer
    established (or the socket closed), -1 if the kernel does not say."""
    try:
        tcp = sock.getsockopt(socket.IPPROTO_TCP, _TCP_INFO, _TCP_INFO_LEN)
    except OSError:
        return -2
    if tcp[0] != _TCP_ESTABLISHED:
        return -2
    if len(tcp) < _TCP_INFO_LEN:
        return -1
    return int.from_bytes(tcp[_BYTES_RECEIVED:_TCP_INFO_LEN], sys.byteorder)


def _timeval(seconds: float) -> bytes:
    """``struct timeval`` for a socket timeout; never zero, which the kernel reads as "none"."""
    whole = int(seconds)
    micros = int((seconds - whole) * 1_000_000)
    if whole <= 0 and micros <= 0:
        micros = 1
    return struct.pack("@ll", whole, micros)
