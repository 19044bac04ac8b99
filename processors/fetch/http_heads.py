"""Heads rebuilt from httpx's parsed messages (its path: HTTP/2, proxies), and small response
facts every FetchHTTP path uses (Content-Length, error names).

httpx hands over parsed messages; the WARC needs the heads as bytes. The request head is rebuilt
as h11 writes it for HTTP/1.1; the response head keeps the server's header names, values and
order, with ``Transfer-Encoding`` renamed because the stored body is de-chunked. (The HTTP/1.1
client records both heads as they went over the wire.)
"""

from __future__ import annotations

import ssl

import httpx

from processors.fetch.http11_head import RENAMED_TRANSFER_ENCODING


def request_head(request: httpx.Request) -> bytes:
    """The request line and headers as h11 writes them for HTTP/1.1."""
    parts = [request.method.encode("ascii"), b" ", request.url.raw_path, b" HTTP/1.1\r\n"]
    for name, value in request.headers.raw:
        parts += (name, b": ", value, b"\r\n")
    parts.append(b"\r\n")
    return b"".join(parts)


def response_head(response: httpx.Response) -> bytes:
    """Status line and raw headers, Transfer-Encoding renamed since the body is de-chunked."""
    reason = response.extensions.get("reason_phrase", b"")
    if not isinstance(reason, bytes):
        reason = str(reason).encode("latin-1", "replace")
    version = response.http_version.encode("ascii", "replace")
    parts = [version, b" ", str(response.status_code).encode("ascii"), b" ", reason, b"\r\n"]
    for name, value in response.headers.raw:
        if name.lower() == b"transfer-encoding":
            name = RENAMED_TRANSFER_ENCODING
        parts += (name, b": ", value, b"\r\n")
    parts.append(b"\r\n")
    return b"".join(parts)


def peer_ip(response: httpx.Response) -> str | None:
    """The address of the socket the response came over (the proxy's, through a proxy)."""
    stream = response.extensions.get("network_stream")
    if stream is None:
        return None
    try:
        addr = stream.get_extra_info("server_addr")
    except Exception:  # noqa: BLE001 - best effort; some streams know no peer
        return None
    if isinstance(addr, tuple) and addr:
        return str(addr[0])
    return None


def content_length(value: str | None) -> int:
    """The Content-Length header as an int, -1 when absent or malformed."""
    if value is None:
        return -1
    try:
        length = int(value.split(",")[0].strip())
    except ValueError:
        return -1
    return length if length >= 0 else -1


def error_name(exc: BaseException) -> str:
    """The most telling class name for ``exc``: a TLS error behind httpx's wrapper, if any."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            break
        if isinstance(seen, ssl.SSLError):
            return type(seen).__name__
        seen = seen.__cause__ or seen.__context__
    return type(exc).__name__
