"""Http11Response: one HTTP/1.1 response of :class:`~processors.fetch.http11_client.Http11Client`
whose head was read, and the connection it came over (:class:`Http11Connection`).

The body is yielded as received, transfer coding removed, by :meth:`Http11Response.iter_raw`,
framed as the head says (:mod:`processors.fetch.http11_head`): by Content-Length, chunked
(extensions ignored, trailers read past and bounded), or until the server closes. A short body
or a broken chunk is ``httpcore.RemoteProtocolError``; a read past the fetch's time is
``httpcore.ReadTimeout`` (the guarded stream's). :meth:`Http11Response.close` gives the
connection back to its pool only when the body was read to the end, the response allows
keep-alive and no unasked bytes followed; otherwise it closes it.

Not thread-safe: a response and its connection belong to the thread that sent the request.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, Final, Protocol

import httpcore

from processors.fetch.http11_head import (
    CHUNKED,
    LENGTH,
    MAX_HEAD_BYTES,
    NO_BODY,
    ResponseHead,
    chunk_size,
)
from processors.fetch.native_tls_session import TlsSession

READ_BYTES: Final = 65536
"""Bytes asked of the socket per read."""
_MAX_LINE_BYTES: Final = 4096

Origin = tuple[str, str, int]
"""(scheme, host, port) of a connection."""


class ConnectionPool(Protocol):
    """Where a response gives its connection back (the client)."""

    read_timeout_s: float

    def checkin(self, origin: Origin, conn: Http11Connection) -> None: ...


class Http11Connection:
    """One open connection: its stream, bytes read but not yet used, and when it went idle;
    ``tls``: over TLS, ``fresh``: no response read on it yet, ``offered``: the TLS session its
    handshake offered (until its first response)."""

    __slots__ = ("buf", "fresh", "idle_since", "offered", "peer_ip", "received", "stream", "tls")

    def __init__(self, stream: Any, tls: bool = False) -> None:
        self.stream = stream
        self.tls = tls
        self.fresh = True
        self.buf = bytearray()
        self.idle_since = 0.0
        self.peer_ip: str | None = None
        self.received = False  # any byte of a response on this connection's current exchange
        self.offered: TlsSession | None = None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.stream.close()


class Http11Response:
    """A response whose head was read; the body is read with :meth:`iter_raw`.

    ``head`` is the raw response head (Transfer-Encoding renamed), ``request_head`` the bytes
    sent. Not thread-safe: one thread reads it; :meth:`close` must be called (idempotent).
    """

    __slots__ = (
        "_client",
        "_closed",
        "_complete",
        "_conn",
        "_origin",
        "_read_timeout",
        "head",
        "request_head",
    )

    def __init__(
        self,
        client: ConnectionPool,
        origin: Origin,
        conn: Http11Connection,
        head: ResponseHead,
        sent: bytes,
    ) -> None:
        self._client = client
        self._origin = origin
        self._conn = conn
        self._read_timeout = client.read_timeout_s
        self._closed = False
        self._complete = head.framing == NO_BODY
        self.head = head
        self.request_head = sent

    @property
    def status_code(self) -> int:
        return self.head.status

    @property
    def http_version(self) -> str:
        return self.head.http_version

    @property
    def raw_headers(self) -> list[tuple[bytes, bytes]]:
        return self.head.headers

    @property
    def response_head(self) -> bytes:
        return self.head.raw

    @property
    def peer_ip(self) -> str | None:
        conn = self._conn
        if conn.peer_ip is None:
            addr = conn.stream.get_extra_info("server_addr")
            if isinstance(addr, tuple) and addr:
                conn.peer_ip = str(addr[0])
        return conn.peer_ip

    def iter_raw(self) -> Iterator[bytes]:
        """The body as received, transfer coding removed; raises httpcore's errors."""
        head = self.head
        if head.framing == NO_BODY:
            return
        conn = self._conn
        buf = conn.buf
        read = conn.stream.read
        timeout = self._read_timeout
        if head.framing == LENGTH:
            yield from self._counted(head.length, conn, read, timeout, True)
        elif head.framing == CHUNKED:
            while size := chunk_size(self._line(conn)):
                yield from self._counted(size, conn, read, timeout, False)
                if self._line(conn).strip(b"\r\n"):
                    raise httpcore.RemoteProtocolError("chunk data longer than its size")
            trailer_bytes = 0
            while line := self._line(conn).strip(b"\r\n"):
                trailer_bytes += len(line)
                if trailer_bytes > MAX_HEAD_BYTES:
                    raise httpcore.RemoteProtocolError("chunked trailer section too large")
        else:
            if buf:
                yield bytes(buf)
                buf.clear()
            while data := read(READ_BYTES, timeout):
                yield data
        self._complete = True

    @staticmethod
    def _counted(
        length: int, conn: Http11Connection, read: Any, timeout: float, whole: bool
    ) -> Iterator[bytes]:
        buf = conn.buf
        left = length
        if buf and left:
            if len(buf) <= left:
                piece = bytes(buf)
                buf.clear()
            else:
                piece = bytes(buf[:left])
                del buf[:left]
            left -= len(piece)
            yield piece
        while left > 0:
            data = read(min(left, READ_BYTES), timeout)
            if not data:
                what = f"received {length - left} bytes, expected {length}" if whole else "chunk"
                raise httpcore.RemoteProtocolError(
                    f"peer closed connection without sending complete message body: {what}"
                )
            left -= len(data)
            yield data

    def _line(self, conn: Http11Connection) -> bytes:
        """The next line of a chunked body (with its end), read as needed."""
        buf = conn.buf
        while (end := buf.find(b"\n")) < 0:
            if len(buf) > _MAX_LINE_BYTES:
                raise httpcore.RemoteProtocolError("chunk line too long")
            data = conn.stream.read(READ_BYTES, self._read_timeout)
            if not data:
                raise httpcore.RemoteProtocolError(
                    "peer closed connection without sending complete message body: "
                    "incomplete chunked read"
                )
            buf += data
        line = bytes(buf[: end + 1])
        del buf[: end + 1]
        return line

    def close(self) -> None:
        """Give the connection back to the pool if the exchange ended cleanly, else close it."""
        if self._closed:
            return
        self._closed = True
        conn = self._conn
        if self._complete and self.head.keep_alive and not conn.buf and self.head.status != 101:
            self._client.checkin(self._origin, conn)
        else:
            conn.close()
