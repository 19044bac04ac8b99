"""Many HTTPS hosts on loopback: one listening socket per address 127.0.0.2, 127.0.0.3, ...

Each address is a host of its own to a client (its own origin, its own pooled connections).
The server answers every request of a connection with a small page and counts, per host, the
connections accepted and those still open, so a test sees which connections a client kept.
"""

from __future__ import annotations

import selectors
import socket
import ssl
import threading
from pathlib import Path

from support.fetch_support import read_head

PAGE = b"<html>host in rotation</html>"


class TlsHosts:
    """``count`` HTTPS hosts on 127.0.0.2 onwards, served until :meth:`close`."""

    def __init__(self, cert: tuple[Path, Path], count: int) -> None:
        self._context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._context.load_cert_chain(*cert)
        self._lock = threading.Lock()
        self.accepted: dict[str, int] = {}
        """Per host address: connections accepted."""
        self.open: dict[str, int] = {}
        """Per host address: connections open now."""
        self.requests = 0
        self._done = threading.Event()
        self._selector = selectors.DefaultSelector()
        self.bases: list[str] = []
        for i in range(count):
            address = f"127.0.0.{2 + i}"
            sock = socket.create_server((address, 0))
            sock.setblocking(False)
            self._selector.register(sock, selectors.EVENT_READ, address)
            self.bases.append(f"https://{address}:{sock.getsockname()[1]}")
            self.accepted[address] = self.open[address] = 0
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._done.is_set():
            for key, _ in self._selector.select(0.1):
                listener: socket.socket = key.fileobj  # type: ignore[assignment]
                try:
                    conn, _ = listener.accept()
                except OSError:
                    continue
                with self._lock:
                    self.accepted[key.data] += 1
                    self.open[key.data] += 1
                threading.Thread(target=self._serve, args=(conn, key.data), daemon=True).start()

    def _serve(self, raw: socket.socket, address: str) -> None:
        raw.setblocking(True)
        raw.settimeout(10)
        try:
            with self._context.wrap_socket(raw, server_side=True) as conn:
                while read_head(conn) and not self._done.is_set():
                    with self._lock:
                        self.requests += 1
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(PAGE), PAGE)
                    )
        except OSError:
            pass  # the client closed the connection (or the handshake failed)
        finally:
            raw.close()
            with self._lock:
                self.open[address] -= 1

    def connections(self) -> int:
        """Connections accepted in all."""
        with self._lock:
            return sum(self.accepted.values())

    def open_connections(self) -> int:
        """Connections open now."""
        with self._lock:
            return sum(self.open.values())

    def close(self) -> None:
        self._done.set()
        self._thread.join(5)
        for key in list(self._selector.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]
        self._selector.close()
