"""``SampleSite``: the generated demo website served on several ports of 127.0.0.1.

Used by ``crawler demo`` and by the end-to-end tests, which compare what a crawl fetched
(``request_log``, ``counts()``) with the ground truth (``expected_urls()``). One
``ThreadingHTTPServer`` per port (HTTP/1.1 keep-alive, a daemon thread per connection, nothing
logged to stderr); each response is a precomputed byte string plus a cached ``Date`` line, so the
handler stays cheap. ``request_log`` and ``counts()`` are safe to call from any thread while
serving; ``settle()`` waits until the requests of a client that went away (a killed crawler) are
all answered and logged, so a test compares counts without guessing how long that takes. Run
``python -m crawler.demo.sample_site --ports 8000,8001,8002`` to serve it alone.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import signal
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from email.utils import formatdate, parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, NamedTuple, cast

from crawler.demo.site_content import Resource, SiteContent
from crawler.demo.site_generator import generate_site

DEFAULT_PORTS = (8000, 8001, 8002)
_SERVER_HEADER = b"Server: crawler-sample-site/1.0\r\n"


class LoggedRequest(NamedTuple):
    """One request the site answered; ``host`` is ``127.0.0.1:PORT``, ``path`` has the query."""

    host: str
    method: str
    path: str
    status: int


class _Route(NamedTuple):
    status: int
    status_line: bytes
    head: bytes  # header lines after Date, without the blank line
    body: bytes
    etag: str = ""
    modified_s: float = 0.0
    validators: bytes = b""  # the ETag and Last-Modified header lines


_NOT_MODIFIED = b"HTTP/1.1 304 Not Modified\r\n"
_GENERATED_AT_S = 1_700_000_000.0
"""Last-Modified of the generated content (a fixed date: the content is a pure function)."""


def _route(resource: Resource, modified_s: float = _GENERATED_AT_S) -> _Route:
    reason = {200: "OK", 301: "Moved Permanently", 302: "Found", 404: "Not Found"}
    head = _SERVER_HEADER + f"Content-Type: {resource.content_type}\r\n".encode()
    if resource.location is not None:
        head += f"Location: {resource.location}\r\n".encode()
    head += f"Content-Length: {len(resource.body)}\r\n".encode()
    status_line = f"HTTP/1.1 {resource.status} {reason[resource.status]}\r\n".encode()
    etag = '"' + hashlib.sha1(resource.body).hexdigest()[:20] + '"'
    validators = f"ETag: {etag}\r\nLast-Modified: {formatdate(modified_s, usegmt=True)}\r\n"
    return _Route(
        resource.status, status_line, head, resource.body, etag, modified_s, validators.encode()
    )


def _not_modified(route: _Route, if_none_match: str | None, if_modified_since: str | None) -> bool:
    """Whether a conditional GET of ``route`` gets a 304 (If-None-Match decides when sent)."""
    if if_none_match is not None:
        tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
        return route.etag in tags or "*" in tags
    if if_modified_since is not None:
        with contextlib.suppress(TypeError, ValueError, IndexError):
            return route.modified_s <= parsedate_to_datetime(if_modified_since).timestamp()
    return False


class _HostServer(ThreadingHTTPServer):
    daemon_threads = True
    # Crawlers open many short connections at once; the default backlog of 5 drops SYNs.
    request_queue_size = 128

    def __init__(self, site: SampleSite, port: int) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.site = site
        self.host_port = f"127.0.0.1:{self.server_address[1]}"
        self.routes: dict[str, _Route] = {}
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        # accepted connections whose handler has not ended, and the markers settle() awaits
        self.open_connections = 0
        self.markers: set[object] = set()
        self.changed = threading.Condition()

    def handle_error(self, request: object, client_address: object) -> None:
        """Clients that vanish mid-response are routine for a crawler test; stay quiet."""

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.changed:
            self.open_connections += 1
            self.markers.discard(client_address)
            self.changed.notify_all()
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._ended()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._ended()

    def _ended(self) -> None:
        with self.changed:
            self.open_connections -= 1
            self.changed.notify_all()

    def settle(self, deadline: float) -> None:
        """Wait until every connection made to this port before the call was accepted, served
        and closed. A marker connection goes through the accept queue (first in, first out)
        behind any connection still waiting there; once it is accepted, no handler open means
        nothing is left. Raises TimeoutError at ``deadline`` (``time.monotonic()``)."""
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as marker:
            marker.bind(("127.0.0.1", 0))
            address = marker.getsockname()
            with self.changed:
                self.markers.add(address)  # before connecting: the accept may come at once
            marker.settimeout(10)
            marker.connect(self.server_address[:2])
        with self.changed:
            while address in self.markers or self.open_connections > 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{self.host_port}: {self.open_connections} still open")
                self.changed.wait(min(left, 1.0))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "crawler-sample-site/1.0"
    disable_nagle_algorithm = True
    timeout = 60  # an idle keep-alive connection holds a thread; release it eventually

    def setup(self) -> None:
        super().setup()
        server = cast(_HostServer, self.server)
        with server.connections_lock:
            server.connections.add(self.connection)

    def finish(self) -> None:
        server = cast(_HostServer, self.server)
        with server.connections_lock:
            server.connections.discard(self.connection)
        super().finish()

    def do_GET(self) -> None:
        self._respond(with_body=True)

    def do_HEAD(self) -> None:
        self._respond(with_body=False)

    def _respond(self, with_body: bool) -> None:
        server = cast(_HostServer, self.server)
        site = server.site
        path = self.path
        if not path.startswith("/"):  # absolute-form request target (RFC 9112 3.2.2)
            path = "/" + path.split("://", 1)[-1].partition("/")[2]
        route = server.routes.get(path) or site.not_found_route
        if site.latency_s > 0:
            time.sleep(site.latency_s)
        closing = b"Connection: close\r\n" if self.close_connection else b""
        if site.validators and route.status == 200:
            if _not_modified(
                route, self.headers.get("If-None-Match"), self.headers.get("If-Modified-Since")
            ):
                site.record(LoggedRequest(server.host_port, self.command, path, 304))
                head = _NOT_MODIFIED + site.date_line() + _SERVER_HEADER + route.validators
                self.wfile.write(head + closing + b"\r\n")
                return
            head = route.status_line + site.date_line() + route.head + route.validators
        else:
            head = route.status_line + site.date_line() + route.head
        site.record(LoggedRequest(server.host_port, self.command, path, route.status))
        head += closing + b"\r\n"
        self.wfile.write(head + route.body if with_body else head)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """Errors answered by the base class (400, 414, 501) still belong in the request log."""
        server = cast(_HostServer, self.server)
        path = getattr(self, "path", "") or ""
        method = getattr(self, "command", "") or ""
        status = int(code) if isinstance(code, int) else 0
        server.site.record(LoggedRequest(server.host_port, method, path, status))

    def log_message(self, format: str, *args: object) -> None:
        """Silence the per-request stderr line."""


class SampleSite:
    """The sample site on ``ports`` of 127.0.0.1 (0 = any free port); the first is the main host.

    ``start()`` binds every port, generates the content for the bound ports (deterministic for
    a given ``pages_per_host`` and ``seed``; only absolute links carry the port numbers) and
    serves each port from its own daemon thread. ``latency_s`` delays every response. With
    ``validators``, every 200 carries an ``ETag`` (from its body) and a ``Last-Modified`` (a
    fixed date; the time of :meth:`change` for a changed page), and a conditional GET that
    matches them gets a 304 (logged with status 304), as a recrawl wants.
    Usable as a context manager; ``stop()`` is idempotent and also closes open connections.
    """

    def __init__(
        self,
        ports: Sequence[int] = (0, 0, 0),
        pages_per_host: int = 100,
        latency_s: float = 0.0,
        seed: int = 0,
        validators: bool = False,
    ) -> None:
        if not ports:
            raise ValueError("the sample site needs at least one port")
        self.ports = tuple(ports)
        self.pages_per_host = pages_per_host
        self.latency_s = latency_s
        self.seed = seed
        self.validators = validators
        self._servers: list[_HostServer] = []
        self._threads: list[threading.Thread] = []
        self._log: list[LoggedRequest] = []
        self._log_lock = threading.Lock()
        self._date_second = -1
        self._date = b""
        self._content: SiteContent | None = None
        self.not_found_route = _Route(404, b"", b"", b"")

    @property
    def content(self) -> SiteContent:
        """The generated site (only after ``start()``)."""
        if self._content is None:
            raise RuntimeError("SampleSite is not started")
        return self._content

    @property
    def base_urls(self) -> list[str]:
        """Each host's home page, ``http://127.0.0.1:PORT/``, main host first."""
        return [origin + "/" for origin in self.content.origins]

    @property
    def hosts(self) -> list[str]:
        """Each host as ``127.0.0.1:PORT``, main host first."""
        return [origin.split("://", 1)[1] for origin in self.content.origins]

    def start(self) -> list[str]:
        """Bind, generate, serve; returns ``base_urls``. ``OSError`` if a port is taken."""
        if self._servers:
            return self.base_urls
        try:
            for port in self.ports:
                self._servers.append(_HostServer(self, port))
        except OSError:
            self._close_servers()
            raise
        origins = tuple(f"http://{server.host_port}" for server in self._servers)
        try:
            self._content = generate_site(origins, self.pages_per_host, self.seed)
        except ValueError:
            self._close_servers()
            raise
        self.not_found_route = _route(self._content.not_found)
        for server, origin in zip(self._servers, origins, strict=True):
            server.routes = {path: _route(r) for path, r in self._content.hosts[origin].items()}
            thread = threading.Thread(
                target=server.serve_forever,
                kwargs={"poll_interval": 0.1},
                name=f"sample-site-{server.host_port}",
                daemon=True,
            )
            thread.start()
            self._threads.append(thread)
        return self.base_urls

    def stop(self) -> None:
        """Stop serving, close every listening socket and client connection. Idempotent."""
        # shutdown() waits up to one poll interval per server: wait for all of them at once.
        stoppers = [threading.Thread(target=s.shutdown) for s in self._servers if self._threads]
        for stopper in stoppers:
            stopper.start()
        for stopper in stoppers:
            stopper.join()
        for server in self._servers:
            with server.connections_lock:
                for connection in list(server.connections):
                    with contextlib.suppress(OSError):
                        connection.shutdown(socket.SHUT_RDWR)
        for thread in self._threads:
            thread.join(timeout=5)
        self._threads.clear()
        self._close_servers()

    def _close_servers(self) -> None:
        for server in self._servers:
            server.server_close()
        self._servers.clear()

    def __enter__(self) -> SampleSite:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def change(self, url: str, body: bytes) -> None:
        """Serve ``body`` at ``url`` (a page of the site) from now on, with the same status and
        Content-Type: the site as a recrawl finds it after an edit. ``KeyError`` if ``url`` is
        not one of the site's pages."""
        for server, origin in zip(self._servers, self.content.origins, strict=True):
            if url.startswith(origin + "/"):
                path = url[len(origin) :]
                resource = self.content.hosts[origin][path]
                changed = dataclasses.replace(resource, body=body)
                server.routes[path] = _route(changed, max(time.time(), _GENERATED_AT_S + 1))
                return
        raise KeyError(url)

    def add(self, url: str, body: bytes, content_type: str = "text/html") -> None:
        """Serve a new page ``body`` at ``url`` (on one of the site's hosts) from now on; it is
        not in ``content`` (nor in ``expected_urls()``). ``KeyError`` for another host."""
        for server, origin in zip(self._servers, self.content.origins, strict=True):
            if url.startswith(origin + "/"):
                page = Resource(200, content_type, body)
                server.routes[url[len(origin) :]] = _route(page, time.time())
                return
        raise KeyError(url)

    def remove(self, url: str) -> None:
        """Answer 404 at ``url`` from now on: a page the site no longer has. ``KeyError`` if
        ``url`` is not one of the site's pages."""
        for server, origin in zip(self._servers, self.content.origins, strict=True):
            if url.startswith(origin + "/"):
                path = url[len(origin) :]
                self.content.hosts[origin][path]
                server.routes[path] = self.not_found_route
                return
        raise KeyError(url)

    def settle(self, timeout_s: float = 60.0) -> None:
        """Wait until every request sent to the site so far has been answered and logged and
        every connection closed: after a client was killed, say, its last requests may still
        be queued or in progress here. Only meaningful while no client is connected (a live
        crawler keeps connections open). Raises TimeoutError after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        for server in self._servers:
            server.settle(deadline)

    def record(self, entry: LoggedRequest) -> None:
        with self._log_lock:
            self._log.append(entry)

    def date_line(self) -> bytes:
        """The ``Date:`` header line, formatted at most once a second."""
        now = int(time.time())
        if now != self._date_second:
            self._date = f"Date: {formatdate(now, usegmt=True)}\r\n".encode()
            self._date_second = now
        return self._date

    @property
    def request_log(self) -> list[LoggedRequest]:
        """A snapshot of every request answered so far, in arrival order."""
        with self._log_lock:
            return list(self._log)

    def clear_log(self) -> None:
        """Forget the requests answered so far (e.g. after a warm-up)."""
        with self._log_lock:
            self._log.clear()

    def counts(self, methods: Iterable[str] = ("GET",)) -> Counter[str]:
        """How many times each full URL (``http://127.0.0.1:PORT/path?query``) was requested."""
        wanted = set(methods)
        with self._log_lock:
            return Counter(f"http://{e.host}{e.path}" for e in self._log if e.method in wanted)

    def expected_urls(
        self,
        obey_robots: bool = True,
        *,
        hosts: Iterable[str] | None = None,
        include_robots_txt: bool = True,
    ) -> set[str]:
        """The URLs a complete crawl from the main host's ``/`` fetches; see
        ``SiteContent.expected_urls`` for the exact rules."""
        return self.content.expected_urls(
            obey_robots, hosts=hosts, include_robots_txt=include_robots_txt
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Serve the sample site until interrupted (Ctrl-C)."""
    parser = argparse.ArgumentParser(description="Serve the crawler's sample site on 127.0.0.1.")
    parser.add_argument(
        "--ports",
        default=",".join(map(str, DEFAULT_PORTS)),
        help="comma-separated ports, the main host first (0 = any free port)",
    )
    parser.add_argument("--pages-per-host", type=int, default=100)
    parser.add_argument("--latency-s", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        ports = [int(p) for p in args.ports.split(",") if p.strip()]
    except ValueError:
        parser.error(f"--ports must be comma-separated integers, got {args.ports!r}")
    site = SampleSite(ports, args.pages_per_host, args.latency_s, args.seed)
    try:
        urls = site.start()
    except (OSError, ValueError) as exc:
        parser.exit(1, f"cannot start the sample site: {exc}\n")
    stop = threading.Event()
    # A benchmark stops the server with terminate(); shut down as cleanly as on Ctrl-C.
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
    try:  # from the first line printed: a caller may interrupt as soon as it reads the URLs
        print("Serving the sample site (Ctrl-C to stop):", flush=True)
        for url in urls:
            print(f"  {url}", flush=True)
        print(f"{len(site.expected_urls())} URLs expected from a robots-obeying crawl", flush=True)
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        site.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
