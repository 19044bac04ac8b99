"""Http11Client: FetchHTTP's HTTP/1.1 client — GETs over pooled keep-alive connections, the
exchange recorded as sent and received.

Why not httpx here: per page the crawler spent more interpreter time in httpx, httpcore and h11
(request and response objects, pool bookkeeping, event machinery) than in parsing and
extracting the page; this client does the same exchange in a fraction of it. And an archive
wants the response head byte for byte as the server sent it — httpx hands over parsed headers
only. httpx stays FetchHTTP's client for what this one does not do: HTTP/2 and HTTP proxies.
Through a SOCKS5 proxy (``proxy``) each connection is a tunnel opened by
:func:`~processors.fetch.socks5_tunnel.open_tunnel`; the exchange inside is the same.

* Sockets come from a :class:`~processors.fetch.guarded_backend.GuardedBackend` (the fetch's
  total deadline, the crawl's stop grace, the host's cached IP, kernel socket timeouts); TLS
  through its ``start_tls`` with SNI. Errors are httpcore's exception classes, as with httpx,
  so statuses and ``err=`` annotations do not depend on the client: ``ConnectError`` /
  ``ConnectTimeout`` (-2), ``ReadTimeout`` (-4 before the head), ``RemoteProtocolError``,
  ``ReadError``, ``WriteError`` (-3), ``UnsupportedProtocol`` / ``LocalProtocolError`` (-7).
* One pool of idle connections per origin (scheme, host, port); an idle connection is reused
  unless it expired (``keepalive_expiry_s``) or the kernel shows the server hung up or sent
  unasked bytes; at most ``max_idle`` are kept in all (oldest closed first): a number, or a
  callable read at each check-in (:class:`~processors.fetch.idle_bound.IdleBound`: one per
  host in rotation, so a host's connection survives its politeness gap). TLS connections
  are reused alike (TLS records the server sends while one is idle, such as session tickets,
  do not count as unasked bytes), and a new TLS connection offers the origin's last session
  (:class:`~processors.fetch.tls_sessions.TlsSessions`) to skip the full handshake; a
  connection that resumed it leaves it in place until half its lifetime is over (reading a
  session back costs more than the resumed handshake). A GET that finds
  a reused connection dead before any byte of the response arrives is sent once more on a
  new connection (the server closed it while idle), as browsers do.
* Heads: :mod:`processors.fetch.http11_head`. 1xx responses are read past. The body is yielded
  as received, de-chunked, by :meth:`Http11Response.iter_raw`; a connection goes back to the
  pool only when its response was read to the end and may be kept alive.

Thread-safety: :meth:`Http11Client.send` may be called from many threads; the pool is guarded
by one lock held for list operations only (sockets are closed outside it). A response and its
connection belong to the calling thread until :meth:`Http11Response.close`.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Final

import httpcore

from processors.fetch.guarded_backend import GuardedBackend
from processors.fetch.http11_head import (
    MAX_HEAD_BYTES,
    ResponseHead,
    head_end,
    parse_response_head,
    request_head,
    split_uri,
)
from processors.fetch.http11_response import READ_BYTES, Http11Connection, Http11Response, Origin
from processors.fetch.socks5_tunnel import SocksProxy, open_tunnel
from processors.fetch.tls_sessions import TlsSessions

_LINE_END_BYTES: Final = (13, 10)
_STALE: Final = (httpcore.ReadError, httpcore.WriteError, httpcore.RemoteProtocolError)


class Http11Client:
    """HTTP/1.1 GETs over pooled connections (see the module docstring)."""

    def __init__(
        self,
        backend: GuardedBackend,
        tls_context: ssl.SSLContext,
        *,
        connect_timeout_s: float,
        read_timeout_s: float,
        keepalive_expiry_s: float,
        max_idle: int | Callable[[], int],
        tls_sessions: TlsSessions | None = None,
        proxy: SocksProxy | None = None,
        resolve: Callable[[str], str | None] | None = None,
    ) -> None:
        self._backend = backend
        self._proxy = proxy
        self._resolve = resolve
        self._tls = tls_context
        self._connect_timeout_s = connect_timeout_s
        self.read_timeout_s = read_timeout_s
        self._expiry_s = keepalive_expiry_s
        self._max_idle_of: Callable[[], int] | None = (
            None if isinstance(max_idle, int) else max_idle
        )
        self._max_idle = max(1, max_idle) if isinstance(max_idle, int) else max(1, max_idle())
        self._idle: dict[Origin, list[Http11Connection]] = {}
        # Every idle connection, in the order it went idle (oldest first): expiry and the bound
        # take from the front, without scanning the pool.
        self._by_age: OrderedDict[Http11Connection, Origin] = OrderedDict()
        self._lock = threading.Lock()
        self._closed = False
        self._next_sweep = 0.0
        self.tls_sessions = TlsSessions() if tls_sessions is None else tls_sessions

    def send(
        self, uri: str, headers: list[tuple[bytes, bytes]], method: str = "GET", body: bytes = b""
    ) -> Http11Response:
        """Send ``method`` ``uri`` with ``headers`` (after Host) and ``body`` (a POST's form;
        the caller sets its Content-Type); the response with its head read. The recorded
        request is the head and the body as sent."""
        scheme, host, port, target, host_header = split_uri(uri)
        if body or method != "GET":
            headers = [*headers, (b"Content-Length", str(len(body)).encode("ascii"))]
        sent = request_head(target, host_header, headers, method.encode("ascii")) + body
        origin = (scheme, host, port)
        while True:
            conn = self._checkout(origin)
            reused = conn is not None
            if conn is None:
                conn = self._connect(scheme, host, port)
            conn.received = False
            try:
                conn.stream.write(sent, self.read_timeout_s)
                head = self._read_head(conn)
            except _STALE:
                conn.close()
                if reused and not conn.received:
                    continue  # closed by the server while idle: once more, on a new connection
                raise
            except BaseException:
                conn.close()
                raise
            if conn.fresh:
                conn.fresh = False
                if conn.tls:  # a TLS 1.3 server's tickets came before the response
                    stream = conn.stream
                    self.tls_sessions.after_handshake(
                        (host, port),
                        conn.offered,
                        stream.tls_resumed(),
                        stream.read_tls_session,
                        time.time(),
                    )
                    conn.offered = None
            return Http11Response(self, origin, conn, head, sent)

    def _connect(self, scheme: str, host: str, port: int) -> Http11Connection:
        proxy = self._proxy
        if proxy is None:
            stream = self._backend.connect_tcp(host, port, timeout=self._connect_timeout_s)
        else:
            stream = self._backend.connect_tcp(
                proxy.host, proxy.port, timeout=self._connect_timeout_s
            )
            try:
                target = proxy.target(host, self._resolve)
                open_tunnel(stream, proxy, target, port, self._connect_timeout_s)
            except BaseException:
                stream.close()
                raise
        if scheme != "https":
            return Http11Connection(stream)
        session = self.tls_sessions.get((host, port))
        try:
            tls = stream.start_tls(
                self._tls, server_hostname=host, timeout=self._connect_timeout_s, session=session
            )
        except BaseException:
            stream.close()
            if session is not None:
                self.tls_sessions.discard((host, port))  # a fresh handshake next time
            raise
        conn = Http11Connection(tls, tls=True)
        conn.offered = session
        return conn

    def _read_head(self, conn: Http11Connection) -> ResponseHead:
        buf = conn.buf
        searched = 0
        while True:
            if buf and buf[0] in _LINE_END_BYTES:
                # Stray line ends before a status line (after a previous body) are skipped.
                stripped = buf.lstrip(b"\r\n")
                buf[:] = stripped
            end = head_end(buf, max(0, searched - 2))
            if end >= 0:
                raw = bytes(buf[:end])
                del buf[:end]
                head = parse_response_head(raw)
                if 100 <= head.status < 200 and head.status != 101:
                    searched = 0
                    continue  # informational: the final response follows
                return head
            if len(buf) > MAX_HEAD_BYTES:
                raise httpcore.RemoteProtocolError(
                    f"response head larger than {MAX_HEAD_BYTES // 1024} KiB"
                )
            searched = len(buf)
            data = conn.stream.read(READ_BYTES, self.read_timeout_s)
            if not data:
                if not buf:
                    raise httpcore.RemoteProtocolError(
                        "Server disconnected without sending a response."
                    )
                raise httpcore.RemoteProtocolError("connection closed in the response head")
            conn.received = True
            buf += data

    # ------------------------------------------------------------------ pool
    def _checkout(self, origin: Origin) -> Http11Connection | None:
        """An idle connection to ``origin`` that is still usable, or None."""
        while (found := self._pop_unexpired(origin)) is not None:
            if not found.stream.get_extra_info("is_readable"):
                return found
            found.close()  # hung up, or sent bytes nobody asked for
        return None

    def _pop_unexpired(self, origin: Origin) -> Http11Connection | None:
        """The newest idle connection to ``origin`` that has not expired (expired ones met on
        the way are closed), or None."""
        dead: list[Http11Connection] = []
        found: Http11Connection | None = None
        oldest = time.monotonic() - self._expiry_s
        with self._lock:
            conns = self._idle.get(origin)
            while conns:
                conn = conns.pop()
                del self._by_age[conn]
                if not conns:
                    del self._idle[origin]
                if conn.idle_since >= oldest:
                    found = conn
                    break
                dead.append(conn)
        for conn in dead:
            conn.close()
        return found

    def checkin(self, origin: Origin, conn: Http11Connection) -> None:
        """Keep ``conn`` (its response read to the end) for the next request to ``origin``."""
        now = time.monotonic()
        conn.idle_since = now
        if conn.tls:
            conn.stream.went_idle()
        dead: list[Http11Connection] = []
        if (bound_of := self._max_idle_of) is not None:
            self._max_idle = max(1, bound_of())
        with self._lock:
            if self._closed:
                dead.append(conn)
            else:
                self._idle.setdefault(origin, []).append(conn)
                self._by_age[conn] = origin
                if len(self._by_age) > self._max_idle or now >= self._next_sweep:
                    dead = self._sweep_locked(now)
        for old in dead:
            old.close()

    def _sweep_locked(self, now: float) -> list[Http11Connection]:
        """Expired connections, then the oldest past ``max_idle``, out of the pool (lock held).

        Costs one step per connection taken out: the oldest are at the front of ``_by_age``
        (check-ins append in time order; one whose clock reading lost a race to the lock by a
        microsecond is taken a microsecond late)."""
        if now >= self._next_sweep:
            self._next_sweep = now + self._expiry_s
        oldest = now - self._expiry_s
        by_age = self._by_age
        dead: list[Http11Connection] = []
        while by_age:
            conn, origin = next(iter(by_age.items()))
            if conn.idle_since >= oldest and len(by_age) <= self._max_idle:
                break
            del by_age[conn]
            conns = self._idle[origin]
            conns.remove(conn)
            if not conns:
                del self._idle[origin]
            dead.append(conn)
        return dead

    def idle_connections(self) -> int:
        """How many idle connections the pool holds now."""
        return len(self._by_age)

    @property
    def max_idle(self) -> int:
        """The bound on idle connections as of the last check-in."""
        return self._max_idle

    def close(self) -> None:
        """Close every idle connection; connections given back later are closed. Idempotent."""
        with self._lock:
            self._closed = True
            conns = list(self._by_age)
            self._idle.clear()
            self._by_age.clear()
        for conn in conns:
            conn.close()
