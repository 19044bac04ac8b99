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
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import httpcore
from httpcore import NetworkBackend, NetworkStream, SyncBackend

from crawler.crawler_error import CrawlerError
from crawler.servers import ServerCache
from processors.fetch.guarded_stream import GuardedStream

__all__ = ["CrawlStoppingError", "GuardedBackend", "GuardedStream", "fetch_deadline"]

_local = threading.local()


class CrawlStoppingError(CrawlerError):
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
    ) -> GuardedStream:
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
