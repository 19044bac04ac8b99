"""FetchHTTP's clients: which one serves a crawl, what FetchHTTP reads of their responses, and
what their failures mean in Heritrix statuses.

:func:`make_client` picks :class:`~processors.fetch.http11_client.Http11Client` (HTTP/1.1 over
TCP or TLS, the default) or :class:`~processors.fetch.httpx_client.HttpxClient` (``http2: true``
or an HTTP ``proxy_url``; through a ``socks5://`` one, the HTTP/1.1 client), each with the TLS
context the order asks for: an archival one that trusts
anything and speaks to old servers (``verify_tls: false``, the default) or certifi's roots.
Both clients raise their library's exception classes (httpcore's or httpx's), so
:data:`FETCH_ERRORS`, :data:`BODY_ERRORS` and :func:`failure_status` cover both, and a crawl.log
reads the same whichever client fetched. Pure functions and immutable tuples: thread-safe.
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import Callable, Iterator
from typing import Protocol

import certifi
import httpcore
import httpx

from crawler import FetchStatus
from processors.fetch.fetch_http_params import FetchHTTPParams
from processors.fetch.guarded_backend import GuardedBackend
from processors.fetch.http11_client import Http11Client
from processors.fetch.httpx_client import HttpxClient
from processors.fetch.idle_bound import IdleBound
from processors.fetch.socks5_tunnel import SocksProxy, is_socks_url

_CONNECT_FAILED = (
    httpx.ConnectTimeout,
    httpx.ConnectError,
    httpx.PoolTimeout,
    httpcore.ConnectTimeout,
    httpcore.ConnectError,
)
TIMEOUTS = (httpx.TimeoutException, httpcore.TimeoutException)
"""A read past its time: -4 before the response head, ``timeTrunc`` in the body."""
_UNFETCHABLE = (
    httpx.UnsupportedProtocol,
    httpx.LocalProtocolError,
    httpx.InvalidURL,
    httpcore.UnsupportedProtocol,
    httpcore.LocalProtocolError,
)
FETCH_ERRORS = (
    httpx.HTTPError,
    httpx.InvalidURL,
    httpcore.TimeoutException,
    httpcore.NetworkError,
    httpcore.ProtocolError,
    httpcore.UnsupportedProtocol,
)
"""What sending a request may raise (:func:`failure_status` gives the URI's status)."""
BODY_ERRORS = (httpx.HTTPError, httpcore.NetworkError, httpcore.ProtocolError)
"""What reading a body may raise besides a timeout (the URI gets -3)."""
PROTOCOL_ERRORS = (httpx.RemoteProtocolError, httpcore.RemoteProtocolError)
"""A malformed response: the server broke HTTP (status line, chunking, a body shorter than its
Content-Length, an oversized head). Fewer retries than a network failure
(``frontier.retries.protocol_max_tries``)."""
_NO_RESPONSE = "Server disconnected without sending a response"
"""httpcore's (and our HTTP/1.1 client's) words for a connection closed before any byte of a
response: a network failure (a server closing idle connections, a restart), not a malformed
response."""


def is_protocol_error(exc: BaseException) -> bool:
    """Whether ``exc`` means the server sent a malformed response (:data:`PROTOCOL_ERRORS`; a
    connection closed before any response is not one)."""
    return isinstance(exc, PROTOCOL_ERRORS) and not str(exc).startswith(_NO_RESPONSE)


class FetchResponse(Protocol):
    """What FetchHTTP reads of a response, whichever client made it."""

    @property
    def status_code(self) -> int: ...
    @property
    def http_version(self) -> str: ...
    @property
    def raw_headers(self) -> list[tuple[bytes, bytes]]: ...
    @property
    def peer_ip(self) -> str | None: ...
    @property
    def request_head(self) -> bytes: ...
    @property
    def response_head(self) -> bytes: ...
    def iter_raw(self) -> Iterator[bytes]: ...
    def close(self) -> None: ...


class FetchClient(Protocol):
    """Sends a request (``headers`` after Host; a GET unless ``method`` says otherwise, with
    ``body``) and returns the response with its head read; ``request_head`` of the response is
    the request as sent, body included."""

    def send(
        self, uri: str, headers: list[tuple[bytes, bytes]], method: str = "GET", body: bytes = b""
    ) -> FetchResponse: ...
    def close(self) -> None: ...


def failure_status(exc: BaseException) -> int:
    """Heritrix status for an error raised before a response head arrived."""
    if isinstance(exc, _CONNECT_FAILED):
        return FetchStatus.CONNECT_FAILED
    if isinstance(exc, TIMEOUTS):
        return FetchStatus.TIMEOUT
    if isinstance(exc, _UNFETCHABLE):
        return FetchStatus.UNFETCHABLE_URI
    return FetchStatus.CONNECT_LOST


def make_client(
    p: FetchHTTPParams,
    backend: GuardedBackend,
    pool_size: int,
    proxy_url: str | None = None,
    resolve: Callable[[str], str | None] | None = None,
    in_rotation: Callable[[], int] | None = None,
) -> FetchClient:
    """The client for ``p`` through ``proxy_url`` (None: direct): httpx for HTTP/2 or an HTTP
    proxy, else the HTTP/1.1 client (through a SOCKS5 proxy too; ``resolve`` gives the crawl's
    address of a host for ``socks5://``), whose idle pool follows ``in_rotation``, the hosts in
    rotation (:class:`~processors.fetch.idle_bound.IdleBound`), unless ``max_connections`` is
    set."""
    read_s = min(p.read_timeout_s, p.timeout_s)
    socks = is_socks_url(proxy_url) and not p.http2
    if p.http2 or (proxy_url and not socks):
        return HttpxClient(
            backend,
            True if p.verify_tls else archival_tls_context(),
            http2=p.http2,
            proxy_url=proxy_url,
            pool_size=pool_size,
            keepalive_expiry_s=p.keepalive_expiry_s,
            connect_timeout_s=p.connect_timeout_s,
            read_timeout_s=read_s,
        )
    context = verifying_tls_context() if p.verify_tls else archival_tls_context()
    context.set_alpn_protocols(["http/1.1"])
    return Http11Client(
        backend,
        context,
        connect_timeout_s=p.connect_timeout_s,
        read_timeout_s=read_s,
        keepalive_expiry_s=p.keepalive_expiry_s,
        max_idle=IdleBound(
            pool_size, None if p.max_connections else in_rotation, p.keepalive_expiry_s
        ),
        proxy=SocksProxy.parse(proxy_url) if socks and proxy_url else None,
        resolve=resolve,
    )


def archival_tls_context() -> ssl.SSLContext:
    """Trust anything and speak to old servers too: an archive captures what is served."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with contextlib.suppress(ssl.SSLError, ValueError):
        context.set_ciphers("ALL:@SECLEVEL=0")
    with contextlib.suppress(ssl.SSLError, ValueError):
        context.minimum_version = ssl.TLSVersion.MINIMUM_SUPPORTED
    context.options |= getattr(ssl, "OP_LEGACY_SERVER_CONNECT", 0)
    return context


def verifying_tls_context() -> ssl.SSLContext:
    """Certificates checked against certifi's roots, as httpx checks them."""
    return ssl.create_default_context(cafile=certifi.where())
