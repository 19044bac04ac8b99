"""HTTP/1.1 heads: request bytes, lenient header parsing, strict body framing."""

from __future__ import annotations

import httpcore
import pytest

from processors.fetch.http11_head import (
    CHUNKED,
    LENGTH,
    NO_BODY,
    UNTIL_CLOSE,
    chunk_size,
    head_end,
    parse_response_head,
    request_head,
    split_uri,
)


def test_request_head_puts_host_first() -> None:
    head = request_head(b"/a?b=1", b"example.org:8080", [(b"User-Agent", b"ua"), (b"X", b"y")])
    assert head == (
        b"GET /a?b=1 HTTP/1.1\r\nHost: example.org:8080\r\nUser-Agent: ua\r\nX: y\r\n\r\n"
    )


IDN = "xn--bcher-kva.example"
OK = b"HTTP/1.1 200 OK\r\n"
OK10 = b"HTTP/1.0 200 OK\r\n"


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("http://Example.org/p?q=1#frag", ("http", "example.org", 80, b"/p?q=1", b"example.org")),
        ("https://h:8443", ("https", "h", 8443, b"/", b"h:8443")),
        ("http://h/p?", ("http", "h", 80, b"/p?", b"h")),
        ("http://[::1]:81/x", ("http", "::1", 81, b"/x", b"[::1]:81")),
        ("http://h/a b/é", ("http", "h", 80, b"/a%20b/%C3%A9", b"h")),
        ("http://bücher.example/", ("http", IDN, 80, b"/", IDN.encode())),
    ],
)  # fmt: skip
def test_split_uri(uri: str, expected: tuple[str, str, int, bytes, bytes]) -> None:
    assert split_uri(uri) == expected


@pytest.mark.parametrize(
    ("uri", "error"),
    [
        ("ftp://h/", httpcore.UnsupportedProtocol),
        ("http:///nohost", httpcore.LocalProtocolError),
        ("http://h:99999/", httpcore.LocalProtocolError),
        ("http://[::1/", httpcore.LocalProtocolError),
    ],
)
def test_split_uri_refuses_what_cannot_be_requested(uri: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        split_uri(uri)


def test_head_end_finds_crlf_and_bare_lf_blank_lines() -> None:
    assert head_end(b"HTTP/1.1 200 OK\r\nA: b\r\n\r\nbody") == 25
    assert head_end(b"HTTP/1.1 200 OK\nA: b\n\nbody") == 22
    assert head_end(b"HTTP/1.1 200 OK\r\nA: b\r\n") == -1


def test_raw_head_kept_byte_for_byte_and_headers_parsed_leniently() -> None:
    raw = (
        b"HTTP/1.1 200 Fine Thanks\r\nContent-Type:text/html\r\nX-Folded: one\r\n  two\r\n"
        b"this line has no colon\r\nContent-Length: 5\r\n\r\n"
    )
    head = parse_response_head(raw)
    assert head.raw == raw
    assert (head.http_version, head.status, head.reason) == ("HTTP/1.1", 200, b"Fine Thanks")
    assert head.headers == [
        (b"Content-Type", b"text/html"),
        (b"X-Folded", b"one two"),
        (b"Content-Length", b"5"),
    ]
    assert (head.framing, head.length, head.keep_alive) == (LENGTH, 5, True)


def test_transfer_encoding_renamed_in_the_recorded_head_only() -> None:
    raw = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nX: y\r\n\r\n"
    head = parse_response_head(raw)
    assert head.framing == CHUNKED
    assert head.raw == b"HTTP/1.1 200 OK\r\nX-Crawler-Transfer-Encoding: chunked\r\nX: y\r\n\r\n"
    assert head.headers[0] == (b"transfer-encoding", b"chunked")


@pytest.mark.parametrize(
    ("raw", "framing", "length", "keep_alive"),
    [
        (b"HTTP/1.1 204 No Content\r\nContent-Length: 9\r\n\r\n", NO_BODY, 0, True),
        (b"HTTP/1.1 304 Not Modified\r\n\r\n", NO_BODY, 0, True),
        (b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\n", LENGTH, 3, False),
        (b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\n", LENGTH, 3, False),
        (OK10 + b"Connection: Keep-Alive\r\nContent-Length: 3\r\n\r\n", LENGTH, 3, True),
        (b"HTTP/1.1 200 OK\r\n\r\n", UNTIL_CLOSE, -1, False),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", UNTIL_CLOSE, -1, False),
        (OK + b"Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", CHUNKED, -1, False),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\n\r\n", LENGTH, 3, True),
    ],
)  # fmt: skip
def test_framing(raw: bytes, framing: int, length: int, keep_alive: bool) -> None:
    head = parse_response_head(raw)
    assert (head.framing, head.length, head.keep_alive) == (framing, length, keep_alive)


@pytest.mark.parametrize(
    "raw",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\n",
        b"HTTP/1.1 2000 OK\r\n\r\n",
        b"ICY 200 OK\r\n\r\n",
        b"<html>not a response</html>\r\n\r\n",
    ],
)
def test_ambiguous_or_broken_heads_are_protocol_errors(raw: bytes) -> None:
    with pytest.raises(httpcore.RemoteProtocolError):
        parse_response_head(raw)


def test_chunk_sizes() -> None:
    assert chunk_size(b"1a\r\n") == 26
    assert chunk_size(b"10;name=value\r\n") == 16
    assert chunk_size(b"0\r\n") == 0
    for bad in (b"\r\n", b"-1\r\n", b"1_0\r\n", b"0x10\r\n", b"z\r\n", b"1" * 17 + b"\r\n"):
        with pytest.raises(httpcore.RemoteProtocolError):
            chunk_size(bad)
