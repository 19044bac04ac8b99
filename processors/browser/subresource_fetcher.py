"""SubresourceFetcher: a browser page's requests, fetched by the crawler's own FetchHTTP.

Each request becomes a CrawlURI child of the page (hop ``E``, via the page), processed inline
rather than queued: robots.txt is obeyed (under ``robots.policy: obey`` a server's robots.txt
is fetched first, itself recorded and logged as a ``P`` child; a URI it disallows is aborted in
the browser and logged -9998), the URI is claimed in the uniq filter (``ctx.claim_uri``) so
the HTTP path never fetches it again, FetchHTTP fetches it (its client, connection pool,
server cap, cookie jar and timeouts), then ``ctx.finish_inline`` writes its WARC records and
its crawl.log line (annotated ``browser``). A URI the crawl has seen already (fetched before,
or queued) is fetched for the browser but neither recorded nor logged again, so every
resource is in the WARC once. The browser gets the body decoded from its content-encoding.

Reads ``ctx.order.robots``, ``ctx.servers``; writes nothing on the page's CrawlURI.
Thread-safe: called from the pool's fetch threads; robots.txt fetches are serialized per server.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from crawler import CrawlURI, FetchStatus, Processor, ProcessorContext
from crawler.robots import ROBOTS_PATH
from crawler.urls import UriError, scheme_authority, server_key
from processors.browser.page_visit import Served
from processors.cookies.cookie_store import REQUEST_COOKIE

BROWSER_NOTE = "browser"
MAX_DECODED_BYTES = 64 * 1024 * 1024


class SubresourceFetcher:
    """Fetches, records and logs one request of a browser page (see the module docstring)."""

    def __init__(self, ctx: ProcessorContext, http: Processor[Any], user_agent: str) -> None:
        self._ctx = ctx
        self._http = http
        self._user_agent = user_agent
        self._robots_locks: dict[str, threading.Lock] = {}
        self._locks_lock = threading.Lock()
        self._count_lock = threading.Lock()
        self.recorded = 0
        self.repeated = 0
        self.robots_blocked = 0

    def for_page(self, page: CrawlURI) -> Callable[[str, str | None], Served | None]:
        """The fetch function a PageJob calls for ``page``'s requests."""

        def fetch(url: str, cookie: str | None) -> Served | None:
            return self.fetch(page, url, cookie)

        return fetch

    def fetch(self, page: CrawlURI, url: str, cookie: str | None = None) -> Served | None:
        """What the browser gets for ``url`` (None: abort the request); ``cookie`` is the
        ``Cookie`` header the browser would send, merged over the crawl's jar's."""
        ctx = self._ctx
        child = page.create_child(url, "E", "browser")
        child.thread_number = page.thread_number
        child.annotate(BROWSER_NOTE)
        if cookie:
            child.data[REQUEST_COOKIE] = cookie
        if ctx.order.robots.policy == "obey" and not self._robots_allow(page, url):
            child.status = FetchStatus.ROBOTS_PRECLUDED
            self._count("robots_blocked")
            if self._claim(child):
                self._finish(child)
            return None
        if not self._claim(child):
            self._count("repeated")
            self._http.process(child)
            try:
                return _served(child)
            finally:
                child.close_recording()
        self._http.process(child)
        try:
            served = _served(child)
        finally:
            self._count("recorded")
            self._finish(child)
        return served

    def _robots_allow(self, page: CrawlURI, url: str) -> bool:
        ctx = self._ctx
        try:
            server = server_key(url)
            robots_uri = scheme_authority(url) + ROBOTS_PATH
        except (UriError, ValueError):
            return False
        servers = ctx.servers
        validity = ctx.order.robots.validity_s
        if not servers.is_robots_valid(server, ctx.clock.time(), validity):
            with self._locks_lock:
                lock = self._robots_locks.setdefault(server, threading.Lock())
            with lock:
                if not servers.is_robots_valid(server, ctx.clock.time(), validity):
                    robots = page.create_child(robots_uri, "P", "browser")
                    robots.thread_number = page.thread_number
                    robots.annotate(BROWSER_NOTE)
                    self._http.process(robots)  # FetchHTTP feeds ctx.servers.update_robots
                    if self._claim(robots):
                        self._finish(robots)
                    else:
                        robots.close_recording()
        return servers.allowed(url, self._user_agent, server)

    def _claim(self, curi: CrawlURI) -> bool:
        claim = self._ctx.claim_uri
        return True if claim is None else claim(curi)

    def _finish(self, curi: CrawlURI) -> None:
        finish = self._ctx.finish_inline
        if finish is None:
            curi.close_recording()
        else:
            finish(curi)

    def _count(self, name: str) -> None:
        with self._count_lock:
            setattr(self, name, getattr(self, name) + 1)


def _served(curi: CrawlURI) -> Served | None:
    rec = curi.recording
    if curi.status <= 0 or rec is None:
        return None
    body = rec.decoded_body(curi.header("content-encoding"), MAX_DECODED_BYTES)
    return Served(curi.http_status, list(curi.response_headers), body)
