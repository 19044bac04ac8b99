"""``HostileSite``: a misbehaving website on several ports of 127.0.0.1, for hardening tests.

Every way a web server can hurt a crawler that the crawler must turn into a status code, an
annotation or a logged error — never a crash, a lost thread, unbounded memory or a crawl that
never ends. The start page ``main:/`` links to every case; ``cases`` lists them with what the
crawl.log should say. Hosts (one port each; a host name here is the server's role):

* ``main`` — the cases of :data:`MAIN_CASES` (bombs, monsters, stalls, cuts, traps, odd links);
* ``refused`` (:attr:`HostileSite.refused_base`) — a port nobody listens on;
* ``busy`` — ``/busy.html`` answers 429 ``Retry-After: RETRY_AFTER_S``, always;
* ``busy-long`` — ``/busy.html`` answers 503 ``Retry-After: 86400`` (a crawl must cap it);
* ``robots-huge`` / ``-garbage`` / ``-5xx`` / ``-redirect`` / ``-cut`` — a robots.txt that is
  several MiB (its last rule past the size cap), binary noise, a 500, a 301, or a connection
  cut mid-headers; each host also serves ``/private/p.html`` and ``/late/p.html``.

Run ``python -m crawler.demo.hostile_site`` to serve it alone (ports printed). Thread-safe:
the request log (:attr:`HostileSite.log`) may be read while serving.
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import threading
from types import TracebackType
from urllib.parse import quote

from crawler.demo import hostile_pages as pages
from crawler.demo.hostile_server import Exchange, Handler, RawHTTPServer, RequestLog

RETRY_AFTER_S = 1
LONG_RETRY_AFTER_S = 86400
ROBOTS_HOSTS = ("robots-huge", "robots-garbage", "robots-5xx", "robots-redirect", "robots-cut")
HOSTS = ("main", "busy", "busy-long", *ROBOTS_HOSTS)
NON_ASCII_TARGET = "/" + quote("ж".encode(), safe="") + ".html"
"""Where the link of ``/charset-missing.html`` leads once its ``<meta>`` charset is applied."""

MAIN_CASES: dict[str, str] = {
    "/big.html": "6 MiB of malformed HTML (unclosed tags), its last link at the very end",
    "/many-links.html": "8000 links: more than max_outlinks (dol:)",
    "/deep.html": "100,000 nested unclosed <div>s, a link at the bottom",
    "/deep-small.html": "25,000 nested <div>s: small enough for a tree parser, quadratic in it",
    "/binary.html": "2 MiB of random bytes served as text/html",
    "/charset-wrong.html": "windows-1251 bytes labelled utf-8 in the header",
    "/charset-missing.html": "no charset in the header, windows-1251 declared in a <meta>",
    "/charset-bogus.html": "an unknown charset in the header",
    "/bomb-gzip.html": "1 GiB of zeros as Content-Encoding: gzip (1 MB on the wire)",
    "/bomb-gzip2.html": "1 GiB of zeros as Content-Encoding: gzip, gzip (2 KB)",
    "/bomb-br.html": "1 GiB of zeros as Content-Encoding: br",
    "/silent.html": "the request read, never answered",
    "/stall.html": "64 KiB of a declared 1 MiB body, then silence",
    "/drip.html": "a body sent one byte at a time, slower than any total timeout",
    "/cut-headers.html": "the connection reset in the middle of the response head",
    "/huge-headers.html": "a 256 KiB response head",
    "/short-body.html": "a body shorter than its Content-Length, then the connection closed",
    "/r/1": "an endless redirect chain /r/1 -> /r/2 -> ...",
    "/bad-location.html": "a redirect to a malformed URI",
    "/long-location.html": "a redirect to a URI of 5000 characters",
    "/flaky-500.html": "500 on the first request, 200 after",
    "/flaky-drop.html": "the first connection closed without a response, 200 after",
    "/calendar?month=0": "a calendar trap: each month links to the next and the previous",
    "/odd-links.html": "javascript:, mailto:, data:, malformed and over-long URIs",
}


class HostileSite:
    """The hostile site (see the module docstring). Use as a context manager."""

    def __init__(
        self,
        *,
        big_html_bytes: int = 6 * pages.MIB,
        huge_robots_bytes: int = 3 * pages.MIB,
        drip_interval_s: float = 0.05,
        first_port: int = 0,
    ) -> None:
        self.big_html_bytes = big_html_bytes
        self.huge_robots_bytes = huge_robots_bytes
        self.drip_interval_s = drip_interval_s
        self.log = RequestLog()
        self.closing = threading.Event()
        handlers: dict[str, Handler] = {"main": self._main, "busy": self._busy}
        handlers["busy-long"] = self._busy_long
        # Bound and never listening: connections are refused, and no other server (another
        # test's, in a loaded suite) can take the port while the site holds it.
        self._refused = _refusing_socket()
        self.refused_base = f"http://127.0.0.1:{self._refused.getsockname()[1]}"
        self.servers: dict[str, RawHTTPServer] = {}
        for i, name in enumerate(HOSTS):
            handler = handlers.get(name, self._robots_host)
            port = first_port + i if first_port else 0
            self.servers[name] = RawHTTPServer(name, handler, self.log, self.closing, port)
        html = self._html
        self._routes: dict[str, Handler] = {
            "/": self._start_page,
            "/robots.txt": lambda ex: ex.respond(404, b"no robots here"),
            "/big.html": lambda ex: html(ex, pages.big_html(big_html_bytes, "/big-end.html", 3000)),
            "/many-links.html": lambda ex: html(ex, pages.many_links_page(8000)),
            "/deep.html": lambda ex: html(ex, pages.deep_html(100_000, "div", "/deep-end.html")),
            "/deep-small.html": lambda ex: html(
                ex, pages.deep_html(25_000, "div", "/deep-small-end.html")
            ),
            "/binary.html": lambda ex: html(ex, pages.binary_junk(2 * pages.MIB)),
            "/charset-wrong.html": lambda ex: html(
                ex, pages.charset_page("wrong", "/ж-wrong.html", "cp1251", None), "utf-8"
            ),
            "/charset-missing.html": lambda ex: html(
                ex, pages.charset_page("missing", "/ж.html", "cp1251", "windows-1251"), None
            ),
            "/charset-bogus.html": lambda ex: html(
                ex, pages.page("bogus", pages.links(["/charset-bogus-end.html"])), "x-bogus-42"
            ),
            "/bomb-gzip.html": lambda ex: self._bomb(ex, pages.gzip_bomb(), "gzip"),
            "/bomb-gzip2.html": lambda ex: self._bomb(ex, pages.double_gzip_bomb(), "gzip, gzip"),
            "/bomb-br.html": lambda ex: self._bomb(ex, pages.brotli_bomb(), "br"),
            "/silent.html": self._silent,
            "/bad-location.html": lambda ex: ex.respond(302, b"", "Location: http://[::1/x"),
            "/long-location.html": lambda ex: ex.respond(
                302, b"", "Location: /long-target?" + "z" * 5000
            ),
            "/stall.html": self._stall,
            "/drip.html": self._drip,
            "/cut-headers.html": self._cut_headers,
            "/huge-headers.html": self._huge_headers,
            "/short-body.html": self._short_body,
            "/flaky-500.html": self._flaky_500,
            "/flaky-drop.html": self._flaky_drop,
            "/odd-links.html": lambda ex: html(
                ex, pages.odd_links_page(3000, "/odd-links-end.html")
            ),
        }

    # ------------------------------------------------------------ lifecycle
    def __enter__(self) -> HostileSite:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def start(self) -> None:
        """Build the expensive bodies first (so no request waits for them), then listen."""
        pages.gzip_bomb()
        pages.double_gzip_bomb()
        pages.brotli_bomb()
        for server in self.servers.values():
            server.start()

    def close(self) -> None:
        """Release stalled handlers and stop every server."""
        self.closing.set()
        for server in self.servers.values():
            server.close()
        self._refused.close()

    # --------------------------------------------------------------- urls
    def url(self, host: str, target: str = "/") -> str:
        """Absolute URL of ``target`` on ``host`` (one of :data:`HOSTS`)."""
        return self.servers[host].base + target

    @property
    def seed(self) -> str:
        """The start page, linking to every case."""
        return self.url("main", "/")

    @property
    def seed_lines(self) -> list[str]:
        """Seed-list lines for a crawl of the whole site: the start page, and a ``+`` scope
        directive (a SURT prefix, not a seed) for each other host."""
        others = [self.url(name, "/") for name in HOSTS if name != "main"]
        return [self.seed] + ["+" + base for base in [*others, self.refused_base + "/"]]

    def hits(self, host: str, target: str) -> int:
        """How many times ``target`` was requested from ``host``."""
        return self.log.hits(host, target)

    # ------------------------------------------------------------- main
    def _main(self, ex: Exchange) -> None:
        route = self._routes.get(ex.target) or self._routes.get(ex.path)
        if route is not None:
            route(ex)
        elif ex.path.startswith("/r/") and ex.path[3:].isdigit():
            ex.respond(302, b"", f"Location: /r/{int(ex.path[3:]) + 1}")
        elif ex.path == "/calendar":
            month = ex.query.removeprefix("month=")
            number = int(month) if month.lstrip("-").isdigit() else 0
            self._html(ex, pages.calendar_page(number))
        elif ex.path.endswith(("-end.html", NON_ASCII_TARGET)):
            self._html(ex, pages.page("end", "reached"))
        else:
            ex.respond(404, pages.page("not found", ""), "Content-Type: text/html")

    def _start_page(self, ex: Exchange) -> None:
        targets = [*MAIN_CASES, self.refused_base + "/refused.html"]
        targets += [self.url("busy", "/busy.html"), self.url("busy", "/calm.html")]
        targets += [self.url("busy-long", "/busy.html"), self.url("busy-long", "/calm.html")]
        for host in ROBOTS_HOSTS:
            targets += [self.url(host, "/private/p.html"), self.url(host, "/late/p.html")]
        self._html(ex, pages.page("hostile site", pages.links(targets)))

    @staticmethod
    def _html(ex: Exchange, body: bytes, charset: str | None = None) -> None:
        content_type = "text/html" + (f"; charset={charset}" if charset else "")
        ex.respond(200, body, f"Content-Type: {content_type}")

    @staticmethod
    def _bomb(ex: Exchange, body: bytes, coding: str) -> None:
        ex.respond(200, body, "Content-Type: text/html", f"Content-Encoding: {coding}")

    @staticmethod
    def _silent(ex: Exchange) -> None:
        ex.closing.wait(60)

    def _stall(self, ex: Exchange) -> None:
        head = ex.head(200, "Content-Type: text/html", f"Content-Length: {pages.MIB}")
        ex.conn.sendall(head + b"<html><body>" + b" " * (65536 - 12))
        ex.closing.wait(60)

    def _drip(self, ex: Exchange) -> None:
        body = pages.page("drip", "x" * 4096)
        ex.conn.sendall(ex.head(200, "Content-Type: text/html", f"Content-Length: {len(body)}"))
        ex.drip(body, self.drip_interval_s)

    @staticmethod
    def _cut_headers(ex: Exchange) -> None:
        ex.conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/ht")
        ex.reset()

    @staticmethod
    def _huge_headers(ex: Exchange) -> None:
        filler = tuple(f"X-Filler-{i}: {'y' * 1000}" for i in range(256))
        ex.respond(200, pages.page("huge headers", ""), "Content-Type: text/html", *filler)

    @staticmethod
    def _short_body(ex: Exchange) -> None:
        head = ex.head(200, "Content-Type: text/html", "Content-Length: 100000")
        ex.conn.sendall(head + pages.page("short", "cut"))

    @staticmethod
    def _flaky_500(ex: Exchange) -> None:
        if ex.hits == 1:
            ex.respond(500, b"try again later", "Content-Type: text/plain")
        else:
            ex.respond(200, pages.page("flaky", "fine now"), "Content-Type: text/html")

    @staticmethod
    def _flaky_drop(ex: Exchange) -> None:
        if ex.hits > 1:
            ex.respond(200, pages.page("flaky", "fine now"), "Content-Type: text/html")

    # ------------------------------------------------------- other hosts
    @staticmethod
    def _busy(ex: Exchange) -> None:
        if ex.path == "/busy.html":
            ex.respond(429, b"slow down", f"Retry-After: {RETRY_AFTER_S}")
        elif ex.path == "/calm.html":
            ex.respond(200, pages.page("calm", ""), "Content-Type: text/html")
        else:
            ex.respond(404, b"")

    @staticmethod
    def _busy_long(ex: Exchange) -> None:
        if ex.path == "/busy.html":
            ex.respond(503, b"come back tomorrow", f"Retry-After: {LONG_RETRY_AFTER_S}")
        elif ex.path == "/calm.html":
            ex.respond(200, pages.page("calm", ""), "Content-Type: text/html")
        else:
            ex.respond(404, b"")

    def _robots_host(self, ex: Exchange) -> None:
        if ex.path == "/robots.txt":
            self._robots(ex)
        elif ex.path == "/robots-real.txt":
            ex.respond(200, b"User-agent: *\nDisallow: /\n", "Content-Type: text/plain")
        elif ex.path in ("/private/p.html", "/late/p.html"):
            ex.respond(200, pages.page(ex.path, ""), "Content-Type: text/html")
        else:
            ex.respond(404, b"")

    def _robots(self, ex: Exchange) -> None:
        kind = ex.host.removeprefix("robots-")
        if kind == "huge":
            body = pages.huge_robots(self.huge_robots_bytes, "/private", "/late")
            ex.respond(200, body, "Content-Type: text/plain")
        elif kind == "garbage":
            ex.respond(200, pages.garbage_robots(65536), "Content-Type: text/plain")
        elif kind == "5xx":
            ex.respond(500, b"robots backend down", "Content-Type: text/plain")
        elif kind == "redirect":
            ex.respond(301, b"", "Location: /robots-real.txt")
        else:
            self._cut_headers(ex)


def _refusing_socket() -> socket.socket:
    """A TCP socket bound to a free port of 127.0.0.1 that never listens: connections to the
    port are refused for as long as it stays open, and nothing else can bind the port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    return sock


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve the hostile test site on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=9000, help="first port (one per host)")
    args = parser.parse_args()
    with HostileSite(first_port=args.port) as site:
        for name in HOSTS:
            print(f"{name:16} {site.url(name)}")
        print(f"start page: {site.seed}  (Ctrl-C to stop)")
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
