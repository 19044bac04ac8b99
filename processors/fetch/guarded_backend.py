"""GuardedBackend: httpcore's socket layer bounded by each fetch's deadline and the crawl's stop.

httpx only bounds each single read (``read_timeout_s``), so a server trickling its header block
one byte at a time could hold a ToeThread forever. Every socket operation of a fetch goes through
this backend, which shortens each read, write, connect and TLS handshake to what is left of the
fetch's total budget (set per thread with :func:`fetch_deadline`): past it a read raises
``httpcore.ReadTimeout`` (before the response head: status -4; in the body: ``timeTrunc``).

Once the crawl is stopping (``ctx.stopping``) every fetch gets at most ``stop_grace_s`` more,
then :class:`CrawlStoppingError` is raised, so a slow download cannot hold up the end of the
crawl; waits are cut into ``poll_s`` slices so a stall notices the stop quickly.

When the crawl resolves names itself (an enabled FetchDNS, ``ServerCache.resolver_active``), a
connection goes to the host's cached IP — the address the ``dns:`` record archived — while TLS
still uses the host name for SNI and certificate checks.

Thread-safety: the deadline is thread-local (a fetch runs on one ToeThread); the backend itself
is immutable apart from the first-seen stop time (a benign race). Heritrix counterpart: the
socket timeouts and ``timeoutSeconds`` checks of ``FetchHTTP``'s recorder, and its connecting
to ``CrawlHost``'s IP.
"""

from __future__ import annotations

import ipaddress
import math
import socket
import struct
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from ssl import SSLContext
from typing import Any

import httpcore
from httpcore import NetworkBackend, NetworkStream, SyncBackend
from httpcore._backends.sync import SyncStream

from crawler.servers import ServerCache

_local = threading.local()

# Linux: kernel socket timeouts and TCP_INFO (state is byte 0; tcpi_bytes_received, a u64, sits
# at offset 128 of struct tcp_info since Linux 4.1: shorter answers fall back to poll).
_KERNEL_TIMEOUTS = sys.platform.startswith("linux") and hasattr(socket, "TCP_INFO")
_TCP_INFO = getattr(socket, "TCP_INFO", 11)
_TCP_ESTABLISHED = 1
_BYTES_RECEIVED = 128
_TCP_INFO_LEN = 136


class CrawlStoppingError(Exception):
    """The crawl is stopping and the fetch used up its grace period."""


@contextmanager
def fetch_deadline(deadline_monotonic_s: float) -> Iterator[None]:
    """Bound every socket operation of the current thread until ``deadline_monotonic_s``."""
    _local.deadline = deadline_monotonic_s
    try:
        yield
    finally:
        _local.deadline = math.inf


def _is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


class GuardedBackend(NetworkBackend):
    """A :class:`httpcore.NetworkBackend` enforcing deadlines, the stop grace and cached IPs."""

    def __init__(
        self,
        servers: ServerCache | None,
        stopping: threading.Event,
        stop_grace_s: float = 2.0,
        poll_s: float = 0.5,
    ) -> None:
        self._inner = SyncBackend()
        self._servers = servers
        self._stopping = stopping
        self._stop_grace_s = stop_grace_s
        self._poll_s = poll_s
        self._stop_seen_s: float | None = None

    def remaining_s(self) -> tuple[float, bool]:
        """Seconds left to the current fetch, and whether the crawl's stop sets that limit."""
        deadline = getattr(_local, "deadline", math.inf)
        if self._stopping.is_set():
            now = time.monotonic()
            if self._stop_seen_s is None:
                self._stop_seen_s = now
            stop_deadline = self._stop_seen_s + self._stop_grace_s
            if stop_deadline < deadline:
                return stop_deadline - now, True
            return deadline - now, False
        if deadline == math.inf:
            return math.inf, False
        return deadline - time.monotonic(), False

    def clamp(self, timeout: float | None, error: type[Exception]) -> float:
        """``timeout`` cut to the time left; raises ``error`` (CrawlStoppingError) if none."""
        left, stopping = self.remaining_s()
        if left <= 0:
            if stopping:
                raise CrawlStoppingError("crawl stopping")
            raise error("fetch deadline passed")
        return left if timeout is None else min(timeout, left)

    def read(
        self, stream: Any, max_bytes: int, timeout: float | None, *, raw: bool = False
    ) -> bytes:
        """Read from ``stream`` within ``timeout``, the deadline and the stop, in poll slices
        (``raw``: a :class:`GuardedStream`'s own socket read)."""
        budget = math.inf if timeout is None else timeout
        read = stream.raw_read if raw else stream.read
        while True:
            wait = min(self.clamp(budget, httpcore.ReadTimeout), self._poll_s)
            began = time.monotonic()
            try:
                data: bytes = read(max_bytes, wait)
                return data
            except httpcore.ReadTimeout:
                budget -= time.monotonic() - began
                if budget <= 0:
                    raise

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> NetworkStream:
        target = host
        servers = self._servers
        if servers is not None and servers.resolver_active and not _is_ip_literal(host):
            target = servers.host_ip(host) or host
        stream = self._inner.connect_tcp(
            target,
            port,
            timeout=self.clamp(timeout, httpcore.ConnectTimeout),
            local_address=local_address,
            socket_options=socket_options,
        )
        return GuardedStream(stream, self)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> NetworkStream:
        stream = self._inner.connect_unix_socket(
            path,
            timeout=self.clamp(timeout, httpcore.ConnectTimeout),
            socket_options=socket_options,
        )
        return GuardedStream(stream, self)

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class GuardedStream(NetworkStream):
    """A socket stream whose every operation is bounded by its :class:`GuardedBackend`.

    Over httpcore's plain socket stream it reads and writes the socket itself, setting the
    timeout only when it changes (httpcore sets it before every call). Each system call that
    releases the interpreter lets another thread take it and costs two thread switches, so on
    Linux the socket is left in blocking mode with kernel timeouts (``SO_RCVTIMEO`` and
    ``SO_SNDTIMEO``, set without releasing it): a ``recv`` is one system call instead of
    ``poll`` + ``recv``. Asked whether an idle connection is readable (the server hung up or sent
    bytes nobody asked for), it compares the kernel's TCP state and byte count (``TCP_INFO``)
    with what was read instead of calling ``poll``. Elsewhere, and over TLS, Python's socket
    timeouts and httpcore's checks are used.
    """

    __slots__ = ("_backend", "_inner", "_peer", "_received", "_send_timeout", "_sock", "_timeout")

    def __init__(self, inner: NetworkStream, backend: GuardedBackend) -> None:
        self._inner = inner
        self._backend = backend
        sock = getattr(inner, "_sock", None) if type(inner) is SyncStream else None
        self._sock: socket.socket | None = sock if isinstance(sock, socket.socket) else None
        self._timeout: float | None = -1.0
        self._send_timeout = -1.0
        self._peer: Any = None
        self._received = 0
        if self._sock is not None and _KERNEL_TIMEOUTS:
            self._sock.settimeout(None)

    def _set_timeout(self, timeout: float, reading: bool) -> None:
        """Bound the next recv (``reading``) or send by ``timeout`` seconds.

        With kernel timeouts the receive and send limits are separate options, each set only
        when its value changes; otherwise the one Python socket timeout serves both.
        """
        if not _KERNEL_TIMEOUTS:
            if timeout != self._timeout:
                assert self._sock is not None
                self._sock.settimeout(timeout)
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
        try:
            self._set_timeout(limit, False)
            view = memoryview(buffer)
            while view:
                view = view[sock.send(view) :]
        except (TimeoutError, BlockingIOError) as exc:
            raise httpcore.WriteTimeout(exc) from exc
        except OSError as exc:
            raise httpcore.WriteError(exc) from exc

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> NetworkStream:
        stream = self._inner.start_tls(
            ssl_context, server_hostname, self._backend.clamp(timeout, httpcore.ConnectTimeout)
        )
        return GuardedStream(stream, self._backend)

    def get_extra_info(self, info: str) -> Any:
        if info == "server_addr":  # asked once per response: the peer never changes
            if self._peer is None:
                self._peer = self._inner.get_extra_info(info)
            return self._peer
        if info == "is_readable" and _KERNEL_TIMEOUTS and self._sock is not None:
            try:
                tcp = self._sock.getsockopt(socket.IPPROTO_TCP, _TCP_INFO, _TCP_INFO_LEN)
            except OSError:
                return True  # closed: the next read would return b""
            if len(tcp) >= _TCP_INFO_LEN:
                received = int.from_bytes(tcp[_BYTES_RECEIVED:_TCP_INFO_LEN], sys.byteorder)
                return tcp[0] != _TCP_ESTABLISHED or received != self._received
        return self._inner.get_extra_info(info)


def _timeval(seconds: float) -> bytes:
    """``struct timeval`` for a socket timeout; never zero, which the kernel reads as "none"."""
    whole = int(seconds)
    micros = int((seconds - whole) * 1_000_000)
    if whole <= 0 and micros <= 0:
        micros = 1
    return struct.pack("@ll", whole, micros)
