"""A SOCKS5 proxy on loopback for tests (RFC 1928 CONNECT, RFC 1929 user/password).

``Socks5Server(login=("u", "p"))`` listens on 127.0.0.1 (any free port); ``url`` is its
``socks5h://`` address. ``connects`` lists ``(host, port)`` of every CONNECT it carried out, and
``refused_logins`` counts failed logins. Use it as a context manager.
"""

from __future__ import annotations

import select
import socket
import socketserver
import struct
import threading
from types import TracebackType


class Socks5Server:
    """See the module docstring."""

    def __init__(self, login: tuple[str, str] | None = None) -> None:
        self.connects: list[tuple[str, int]] = []
        self.refused_logins = 0
        lock = threading.Lock()
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                sock: socket.socket = self.request
                sock.settimeout(10)
                version, count = _read(sock, 2)
                methods = _read(sock, count)
                want = 2 if login else 0
                if version != 5 or want not in methods:
                    sock.sendall(b"\x05\xff")
                    return
                sock.sendall(bytes([5, want]))
                if login:
                    _, ulen = _read(sock, 2)
                    user = _read(sock, ulen).decode()
                    (plen,) = _read(sock, 1)
                    password = _read(sock, plen).decode()
                    ok = (user, password) == login
                    sock.sendall(b"\x01\x00" if ok else b"\x01\x01")
                    if not ok:
                        with lock:
                            outer.refused_logins += 1
                        return
                _, command, _, atype = _read(sock, 4)
                if atype == 1:
                    host = socket.inet_ntoa(_read(sock, 4))
                elif atype == 3:
                    (length,) = _read(sock, 1)
                    host = _read(sock, length).decode()
                else:
                    host = socket.inet_ntop(socket.AF_INET6, _read(sock, 16))
                (port,) = struct.unpack("!H", _read(sock, 2))
                if command != 1:
                    sock.sendall(b"\x05\x07\x00\x01" + bytes(6))
                    return
                try:
                    upstream = socket.create_connection((host, port), timeout=10)
                except OSError:
                    sock.sendall(b"\x05\x05\x00\x01" + bytes(6))
                    return
                with lock:
                    outer.connects.append((host, port))
                sock.sendall(b"\x05\x00\x00\x01" + bytes(6))
                _relay(sock, upstream)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def url(self, scheme: str = "socks5h", login: str = "") -> str:
        """The proxy's URL (``login``: ``user:password@``)."""
        return f"{scheme}://{login}127.0.0.1:{self.port}"

    def __enter__(self) -> Socks5Server:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()


def _read(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("client went away")
        data += chunk
    return data


def _relay(a: socket.socket, b: socket.socket) -> None:
    try:
        while True:
            ready, _, _ = select.select([a, b], [], [], 10)
            if not ready:
                return
            for src in ready:
                data = src.recv(65536)
                if not data:
                    return
                (b if src is a else a).sendall(data)
    except OSError:
        return
    finally:
        b.close()
