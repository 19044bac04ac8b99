"""HttpxClient: FetchHTTP's client for what :mod:`~processors.fetch.http11_client` does not do —
HTTP/2 over TLS (``http2: true``) and requests through a proxy (``proxy_url``).

An ``httpx.HTTPTransport`` per origin (:class:`~processors.fetch.origin_pools.OriginPools`), or
one through a proxy, its sockets from a
:class:`~processors.fetch.guarded_backend.GuardedBackend` (set on httpcore's pool before the
first connection: httpx has no hook for it). Requests go straight to the transport, not through
``httpx.Client.send``: even with redirects off that builds the next request of every 3xx and
raises on a malformed Location, losing a response the crawl must record. Responses are wrapped
in :class:`HttpxResponse`, the same shape as
:class:`~processors.fetch.http11_client.Http11Response`; the heads it records are rebuilt from
httpx's parsed headers (server's names, values and order kept). Errors are httpx's.

Thread-safety: httpx's transports are thread-safe; a response belongs to one thread.
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import Iterator
from typing import Any

import httpx

from processors.fetch.guarded_backend import GuardedBackend
from processors.fetch.http_heads import peer_ip, request_head, response_head
from processors.fetch.origin_pools import OriginPools


class HttpxResponse:
    """An httpx response in the shape FetchHTTP reads (see Http11Response)."""

    __slots__ = ("_response", "request_head", "response_head")

    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        request = response.request
        self.request_head = request_head(request) + (
            request.content if request.method != "GET" else b""
        )
        self.response_head = response_head(response)

    @property
    def status_code(self) -> int:
        return self._response.status_code

    @property
    def http_version(self) -> str:
        return self._response.http_version

    @property
    def raw_headers(self) -> list[tuple[bytes, bytes]]:
        return self._response.headers.raw

    @property
    def peer_ip(self) -> str | None:
        return peer_ip(self._response)

    def iter_raw(self) -> Iterator[bytes]:
        return self._response.iter_raw()

    def close(self) -> None:
        self._response.close()


class HttpxClient:
    """GETs through httpx (HTTP/2, proxies); see the module docstring."""

    def __init__(
        self,
        backend: GuardedBackend,
        tls: ssl.SSLContext | bool,
        *,
        http2: bool,
        proxy_url: str | None,
        pool_size: int,
        keepalive_expiry_s: float,
        connect_timeout_s: float,
        read_timeout_s: float,
    ) -> None:
        self._extensions = {
            "timeout": httpx.Timeout(
                connect=connect_timeout_s,
                read=read_timeout_s,
                write=read_timeout_s,
                pool=connect_timeout_s,
            ).as_dict()
        }

        def make_transport() -> httpx.HTTPTransport:
            transport = httpx.HTTPTransport(
                verify=tls,
                http1=True,
                http2=http2,
                limits=httpx.Limits(
                    max_connections=pool_size,
                    max_keepalive_connections=pool_size,
                    keepalive_expiry=keepalive_expiry_s,
                ),
                proxy=proxy_url,
                trust_env=False,
            )
            connection_pool: Any = getattr(transport, "_pool", None)
            if connection_pool is None or not hasattr(connection_pool, "_network_backend"):
                raise RuntimeError("unsupported httpx/httpcore version")
            connection_pool._network_backend = backend
            return transport

        # Through a proxy every request goes to one place: one pool. Else one per origin.
        self._transport: httpx.BaseTransport = (
            make_transport() if proxy_url else OriginPools(make_transport)
        )
        if not proxy_url:
            make_transport().close()  # fail now, not at the first fetch, on an unknown httpcore

    def send(
        self, uri: str, headers: list[tuple[bytes, bytes]], method: str = "GET", body: bytes = b""
    ) -> HttpxResponse:
        """Send ``method`` ``uri`` (with ``body``, e.g. a POST's form); raises httpx's errors
        (InvalidURL, TransportError, ...)."""
        request = httpx.Request(
            method,
            uri,
            headers=headers,
            content=body if body or method != "GET" else None,
            extensions=self._extensions,
        )
        response = self._transport.handle_request(request)
        response.request = request
        return HttpxResponse(response)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._transport.close()
