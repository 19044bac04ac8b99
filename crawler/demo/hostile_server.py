"""RawHTTPServer: a raw-socket HTTP/1.x server on 127.0.0.1 that may break the protocol on purpose.

Used by :class:`crawler.demo.hostile_site.HostileSite`. One accept thread per listening socket
and one daemon thread per connection; each connection carries one request (every response says
``Connection: close``), so a handler may stall, drip, cut or reset its connection without
disturbing others. ``closing`` is set by :meth:`RawHTTPServer.close`: handlers that wait or drip
must watch it, so closing never takes longer than a poll interval. Every request is appended to
the shared :class:`RequestLog` (thread-safe) before its handler runs.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import formatdate

MAX_HEAD_BYTES = 65536
"""A request head longer than this is answered 431 (the crawler's own URIs stay under 2083)."""
REASONS = {
    200: "OK",
    301: "Moved Permanently",
    302: "Found",
    404: "Not Found",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


@dataclass(frozen=True, slots=True)
class HostileRequest:
    """One request received: which host (by name), its port, the target, when (monotonic s)."""

    host: str
    port: int
    target: str
    at_s: float


class RequestLog:
    """Every request of every host, in arrival order. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: list[HostileRequest] = []
        self._hits: dict[tuple[str, str], int] = {}

    def add(self, request: HostileRequest) -> int:
        """Record ``request``; return how many times its (host, target) was asked, this one
        included."""
        key = (request.host, request.target)
        with self._lock:
            self._requests.append(request)
            hits = self._hits.get(key, 0) + 1
            self._hits[key] = hits
        return hits

    def all(self) -> list[HostileRequest]:
        """A copy of the log."""
        with self._lock:
            return list(self._requests)

    def hits(self, host: str, target: str) -> int:
        """How many times ``target`` of ``host`` was requested."""
        with self._lock:
            return self._hits.get((host, target), 0)


@dataclass(slots=True)
class Exchange:
    """One request being answered: its parsed target, the connection, how often it was asked."""

    conn: socket.socket
    host: str
    target: str
    hits: int
    closing: threading.Event

    @property
    def path(self) -> str:
        return self.target.partition("?")[0]

    @property
    def query(self) -> str:
        return self.target.partition("?")[2]

    def respond(self, status: int, body: bytes, *headers: str) -> None:
        """Send a complete response: status line, ``headers``, Content-Length, the body."""
        self.conn.sendall(self.head(status, *headers, f"Content-Length: {len(body)}") + body)

    def head(self, status: int, *headers: str) -> bytes:
        """A response head (through the blank line) with Date and ``Connection: close``."""
        lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Whatever')}"]
        lines.append("Date: " + formatdate(usegmt=True))
        lines.extend(headers)
        lines.append("Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def reset(self) -> None:
        """Make the coming close() send a TCP RST instead of a FIN (SO_LINGER 0)."""
        self.conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    def drip(self, data: bytes, interval_s: float, step_bytes: int = 1) -> None:
        """Send ``data`` ``step_bytes`` at a time, one step per ``interval_s``, until it is all
        sent, the peer goes away or the server closes."""
        for i in range(0, len(data), step_bytes):
            if self.closing.wait(interval_s):
                return
            self.conn.sendall(data[i : i + step_bytes])


Handler = Callable[[Exchange], None]


class RawHTTPServer:
    """Listens on one 127.0.0.1 port (0: a free one) as host ``name``; ``handler`` answers."""

    def __init__(
        self,
        name: str,
        handler: Handler,
        log: RequestLog,
        closing: threading.Event,
        port: int = 0,
    ) -> None:
        self.name = name
        self.handler = handler
        self.log = log
        self.closing = closing
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", port))
        self._sock.listen(128)
        self._sock.settimeout(0.1)
        self.port: int = self._sock.getsockname()[1]
        self._threads: list[threading.Thread] = []
        self._threads_lock = threading.Lock()
        self._accept = threading.Thread(target=self._serve, name=f"hostile-{name}", daemon=True)

    @property
    def base(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self._accept.start()

    def close(self) -> None:
        """Stop accepting and wait (briefly) for the connection threads; idempotent."""
        self.closing.set()
        if self._accept.is_alive():
            self._accept.join(5)
        self._sock.close()
        with self._threads_lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(2)

    def _serve(self) -> None:
        while not self.closing.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            thread = threading.Thread(target=self._one, args=(conn,), daemon=True)
            with self._threads_lock:
                self._threads = [t for t in self._threads if t.is_alive()]
                self._threads.append(thread)
            thread.start()

    def _one(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            conn.settimeout(30)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            head = _read_head(conn)
            if head is None:
                return
            if len(head) > MAX_HEAD_BYTES:
                conn.sendall(b"HTTP/1.1 431 Too Large\r\nContent-Length: 0\r\n\r\n")
                return
            target = _target(head)
            request = HostileRequest(self.name, self.port, target, time.monotonic())
            hits = self.log.add(request)
            self.handler(Exchange(conn, self.name, target, hits, self.closing))


def _read_head(conn: socket.socket) -> bytes | None:
    data = b""
    while b"\r\n\r\n" not in data:
        part = conn.recv(16384)
        if not part:
            return None
        data += part
        if len(data) > MAX_HEAD_BYTES:
            break
    return data


def _target(head: bytes) -> str:
    """The request target of ``GET <target> HTTP/1.1``, path-only even in absolute form."""
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split(" ")
    target = parts[1] if len(parts) >= 2 else "/"
    if not target.startswith("/"):
        target = "/" + target.split("://", 1)[-1].partition("/")[2]
    return target
