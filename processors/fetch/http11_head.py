"""HTTP/1.1 message heads for :class:`~processors.fetch.http11_client.Http11Client`: the request
head as sent, the response head as received, and how the response body is framed.

The crawler is a client talking to servers it does not control, and an archive wants what they
sent: parsing is lenient where leniency cannot change the framing of the body (a header line
without a colon is kept in the raw head but yields no header; an obsolete folded line continues
the previous value; bare LF line ends are accepted) and strict where it can (a malformed status
line, conflicting or invalid ``Content-Length`` values, a head larger than
:data:`MAX_HEAD_BYTES`: :class:`httpcore.RemoteProtocolError`, crawl status -3). Framing
follows RFC 9112 §6.3. Pure functions, thread-safe.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final
from urllib.parse import quote, urlsplit

import httpcore

MAX_HEAD_BYTES: Final = 64 * 1024
"""Largest response head accepted (status line + headers); past it the fetch fails with -3."""

RENAMED_TRANSFER_ENCODING: Final = b"X-Crawler-Transfer-Encoding"
"""What ``Transfer-Encoding`` becomes in the recorded head: the stored body is de-chunked."""

_DEFAULT_PORTS: Final = {"http": 80, "https": 443}
_TARGET_SAFE: Final = "!$&'()*+,/:;=?@[]~%"

NO_BODY: Final = 0
LENGTH: Final = 1
CHUNKED: Final = 2
UNTIL_CLOSE: Final = 3


@dataclass(frozen=True, slots=True)
class ResponseHead:
    """A parsed response head. ``raw`` is the head as received (Transfer-Encoding renamed)."""

    http_version: str
    status: int
    reason: bytes
    headers: list[tuple[bytes, bytes]]
    raw: bytes
    framing: int
    length: int
    keep_alive: bool


def request_head(
    target: bytes, host: bytes, headers: list[tuple[bytes, bytes]], method: bytes = b"GET"
) -> bytes:
    """``METHOD target HTTP/1.1`` with ``Host`` first, then ``headers`` in order."""
    parts = [method, b" ", target, b" HTTP/1.1\r\nHost: ", host, b"\r\n"]
    for name, value in headers:
        parts += (name, b": ", value, b"\r\n")
    parts.append(b"\r\n")
    return b"".join(parts)


def head_end(buf: bytes | bytearray, start: int = 0) -> int:
    """Index just past the blank line ending a head in ``buf`` (searching from ``start``), or -1.

    A head ends at the first empty line, CRLF or bare LF.
    """
    crlf = buf.find(b"\n\r\n", start)
    if crlf < 0:
        lf = buf.find(b"\n\n", start)
        return -1 if lf < 0 else lf + 2
    # A bare-LF blank line counts only before the CRLF one (the body may hold either).
    lf = buf.find(b"\n\n", start, crlf + 1)
    return lf + 2 if lf >= 0 else crlf + 3


def parse_response_head(raw: bytes, head_request: bool = False) -> ResponseHead:
    """Parse a whole head (``raw`` ends with its blank line); raises RemoteProtocolError."""
    lines = raw.split(b"\n")
    status_line = lines[0].rstrip(b"\r")
    version, _, rest = status_line.partition(b" ")
    code, _, reason = rest.lstrip(b" ").partition(b" ")
    if version[:5] != b"HTTP/" or len(code) != 3 or not code.isdigit() or not version.isascii():
        raise httpcore.RemoteProtocolError(f"malformed status line {status_line[:80]!r}")
    headers: list[tuple[bytes, bytes]] = []
    renamed = False
    for line in lines[1:]:
        line = line.rstrip(b"\r")
        if not line:
            continue
        if line[:1] in (b" ", b"\t"):
            if headers:  # obs-fold: the line continues the previous value
                name, value = headers[-1]
                headers[-1] = (name, (value + b" " + line.strip(b" \t")).strip(b" \t"))
            continue
        name, sep, value = line.partition(b":")
        name = name.strip(b" \t")
        if not sep or not name:
            continue
        if not renamed and name.lower() == b"transfer-encoding":
            renamed = True
        headers.append((name, value.strip(b" \t")))
    status = int(code)
    http_version = version.decode("ascii")
    framing, length, keep_alive = _framing(http_version, status, headers, head_request)
    if renamed:
        raw = _rename_transfer_encoding(raw)
    return ResponseHead(http_version, status, reason, headers, raw, framing, length, keep_alive)


def _framing(
    version: str, status: int, headers: list[tuple[bytes, bytes]], head_request: bool
) -> tuple[int, int, bool]:
    """(framing, content length, keep-alive) of a response (RFC 9112 §6.3, §9.3)."""
    transfer_coding: bytes | None = None
    lengths: set[bytes] = set()
    connection = b""
    for name, value in headers:
        key = name.lower()
        if key == b"content-length":
            lengths.update(v.strip() for v in value.split(b","))
        elif key == b"transfer-encoding":
            transfer_coding = value.rsplit(b",", 1)[-1].strip().lower()
        elif key == b"connection":
            connection += b"," + value.lower()
    tokens = {t.strip() for t in connection.split(b",")}
    keep_alive = (b"close" not in tokens) if version != "HTTP/1.0" else (b"keep-alive" in tokens)
    if head_request or status in (204, 304) or 100 <= status < 200:
        return NO_BODY, 0, keep_alive
    if transfer_coding is not None:
        if transfer_coding == b"chunked":
            # A Content-Length beside Transfer-Encoding is ignored, and the connection is not
            # trusted for another request (RFC 9112 §6.3, point 3).
            return CHUNKED, -1, keep_alive and not lengths
        return UNTIL_CLOSE, -1, False
    if lengths:
        if len(lengths) != 1:
            raise httpcore.RemoteProtocolError("conflicting Content-Length values")
        (text,) = lengths
        if not text.isdigit() or len(text) > 18:
            raise httpcore.RemoteProtocolError(f"invalid Content-Length {text[:40]!r}")
        return LENGTH, int(text), keep_alive
    return UNTIL_CLOSE, -1, False


def _rename_transfer_encoding(raw: bytes) -> bytes:
    """``raw`` with each Transfer-Encoding header's name renamed, all else byte for byte."""
    out = []
    for line in raw.split(b"\n"):
        name, sep, rest = line.partition(b":")
        if sep and name.strip(b" \t").lower() == b"transfer-encoding":
            line = RENAMED_TRANSFER_ENCODING + b":" + rest
        out.append(line)
    return b"\n".join(out)


def chunk_size(line: bytes) -> int:
    """The size of a chunk from its size line (extensions ignored); RemoteProtocolError if bad."""
    text = line.split(b";", 1)[0].strip(b" \t\r\n")
    if not text or len(text) > 16 or text.strip(_HEX_DIGITS):
        raise httpcore.RemoteProtocolError(f"malformed chunk size line {line[:40]!r}")
    return int(text, 16)


_HEX_DIGITS: Final = b"0123456789abcdefABCDEF"


def split_uri(uri: str) -> tuple[str, str, int, bytes, bytes]:
    """(scheme, host, port, request target, Host header) of an http(s) URI.

    Raises httpcore.UnsupportedProtocol for another scheme and httpcore.LocalProtocolError for
    a URI that cannot be requested (no host, a bad port, a host IDNA cannot encode).
    """
    try:
        parts = urlsplit(uri)
        port_number = parts.port
    except ValueError as exc:
        raise httpcore.LocalProtocolError(f"invalid URI: {exc}") from exc
    scheme = parts.scheme.lower()
    default = _DEFAULT_PORTS.get(scheme)
    if default is None:
        raise httpcore.UnsupportedProtocol(f"scheme {scheme!r} is not http or https")
    host = parts.hostname or ""
    if not host:
        raise httpcore.LocalProtocolError("URI without a host")
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError as exc:
            raise httpcore.LocalProtocolError(f"host cannot be encoded: {exc}") from exc
    port = port_number if port_number is not None else default
    target = parts.path or "/"
    if parts.query or "?" in uri.partition("#")[0]:
        target += "?" + parts.query
    if not target.isascii() or not target.isprintable() or " " in target:
        target = quote(target, safe=_TARGET_SAFE)
    shown = f"[{host}]" if ":" in host else host
    if port != default:
        shown += f":{port}"
    return scheme, host, port, target.encode("ascii"), shown.encode("ascii")
