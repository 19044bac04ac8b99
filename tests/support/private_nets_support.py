"""Helpers of the private-network tests: a connect audit, a scripted DNS server, a counting site.

``connect_audit()`` records, through a process-wide audit hook (``socket.connect``), every
address this process connects a socket to while it is active, and refuses (``PermissionError``)
any connection to an address off loopback, so a test of the address guard never sends traffic
off the machine even if the guard were broken. ``ScriptedDNS`` answers A/AAAA queries from a
table, each name's answers in turn (the last repeats), with a TTL of 0. ``CountingSite`` is an
HTTP server on a chosen loopback address that counts the connections it accepts.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import dns.flags
import dns.message
import dns.rcode
import dns.rdatatype
import dns.rrset

_audit_lock = threading.Lock()
_audit_log: list[ConnectLog] = []
_hook_installed = False


class ConnectLog(list[tuple[str, int]]):
    """The (address, port) of each connect, in order; ``threads[i]`` names the thread that made
    the i-th (threads left running by earlier tests of the process connect too)."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: list[str] = []

    def by_threads(self, prefix: str) -> list[tuple[str, int]]:
        """The connects made by threads whose name starts with ``prefix``."""
        return [c for c, name in zip(self, self.threads, strict=True) if name.startswith(prefix)]


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event != "socket.connect" or not _audit_log:
        return
    address = args[1]
    if not isinstance(address, tuple) or len(address) < 2:
        return
    host, port = str(address[0]), int(address[1])
    thread = threading.current_thread().name
    with _audit_lock:
        for log in _audit_log:
            log.append((host, port))
            log.threads.append(thread)
    try:
        loopback = ipaddress.ip_address(host.partition("%")[0]).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise PermissionError(f"test connect audit: {host}:{port} is off loopback")


@contextmanager
def connect_audit() -> Iterator[ConnectLog]:
    """The (address, port) of every socket.connect made meanwhile; off-loopback ones refused."""
    global _hook_installed
    with _audit_lock:
        if not _hook_installed:
            sys.addaudithook(_hook)  # audit hooks cannot be removed: it idles when no log is open
            _hook_installed = True
    log = ConnectLog()
    with _audit_lock:
        _audit_log.append(log)
    try:
        yield log
    finally:
        with _audit_lock:
            _audit_log.remove(log)


class ScriptedDNS:
    """A UDP DNS server on 127.0.0.1: ``answers[name]`` is the list of addresses given in turn
    (the last one repeats); names not in it are NXDOMAIN. ``queries`` lists the names asked."""

    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = {name.lower().rstrip("."): list(a) for name, a in answers.items()}
        self.queries: list[str] = []
        self._served: dict[str, int] = {}
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.port: int = self.sock.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def nameserver(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _answer(self, name: str, rdtype: int) -> str | None:
        """The name's current address if it has the asked type (an A query moves it on)."""
        addresses = self.answers.get(name)
        if not addresses:
            return None
        turn = self._served.get(name, 0)
        address = addresses[min(turn, len(addresses) - 1)]
        is_v6 = ":" in address
        if rdtype == dns.rdatatype.A:
            self._served[name] = turn + 1
            return None if is_v6 else address
        return address if is_v6 and rdtype == dns.rdatatype.AAAA else None

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                data, peer = self.sock.recvfrom(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            query = dns.message.from_wire(data)
            reply = dns.message.make_response(query)
            question = query.question[0]
            name = question.name.to_text().lower().rstrip(".")
            self.queries.append(name)
            if name in self.answers:
                address = self._answer(name, question.rdtype)
                if address is not None:
                    kind = "AAAA" if ":" in address else "A"
                    reply.answer.append(dns.rrset.from_text(question.name, 0, "IN", kind, address))
            else:
                reply.set_rcode(dns.rcode.NXDOMAIN)
            reply.flags |= dns.flags.AA
            self.sock.sendto(reply.to_wire(), peer)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()


Page = tuple[int, dict[str, str], bytes]


class CountingSite:
    """An HTTP server on ``address`` (a loopback address) and ``port`` (0: any free one):
    ``pages(path)`` gives ``(status, headers, body)``; ``connections`` counts accepted ones,
    ``paths`` the paths requested."""

    def __init__(
        self, pages: Callable[[str], Page], address: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.connections = 0
        self.paths: list[str] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.paths.append(self.path)
                status, headers, body = pages(self.path)
                self.send_response(status)
                for name, value in {"Content-Type": "text/html", **headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def verify_request(self, request: Any, client_address: Any) -> bool:
                site.connections += 1
                return True

            def handle_error(self, request: Any, client_address: Any) -> None:
                if not isinstance(sys.exc_info()[1], ConnectionError):  # a crawler hanging up
                    super().handle_error(request, client_address)

        self._server = Server((address, port), Handler)
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
