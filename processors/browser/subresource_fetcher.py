"""SubresourceFetcher: a browser page's requests, fetched by the crawler's own FetchHTTP.

Each request becomes a CrawlURI child of the page (hop ``E``, via the page), processed inline
rather than queued: robots.txt is obeyed (under ``robots.policy: obey`` a server's robots.txt is
fetched first, itself recorded and logged as a ``P`` child, unless another worker of the crawl
fetched it already (``ServerCache.adopt_shared``); the fetch is claimed crawl-wide as the HTTP
path's prerequisite is (``ServerCache.claim_prerequisite``), so while a queue of this process or
another worker fetches it, the page waits for that outcome instead of fetching it again; a URI it
disallows is aborted in the browser and logged -9998), the URI is claimed in the uniq filter
(``ctx.claim_uri``) so the HTTP path never fetches it again, FetchHTTP fetches it (its client,
connection pool, cookie jar and timeouts), then ``ctx.finish_inline`` writes its WARC records and
its crawl.log line (annotated ``browser``, or the fetcher's ``note``: ``media`` for yt-dlp's
fetches). A URI the crawl has seen already (fetched before, or queued) is fetched for the browser
but neither recorded nor logged again, so every resource is in the WARC once. The browser gets the
body decoded from its content-encoding.

Politeness: every fetch here (robots.txt too) passes the frontier's server gate
(``ctx.inline_gate``, :mod:`crawler.frontier.politeness.inline_gate`): it waits for a slot of the
server's ``host_max_connections`` and for the server's next start (``host_min_interval_ms``, the
adaptive pace, a Retry-After or bandwidth hold), and gives the slot back after, its answer pacing
the server like any fetch (a 429/503 lengthens the pace, a Retry-After holds the server for every
queue and page). Sub-resources of the page's own server take turns on the slot the page's
ToeThread holds (no deadlock at ``host_max_connections: 1``), more at once only as the cap
allows. The queue's per-URI delay (``delay_factor`` x duration, ``min_delay_ms``) is *not*
applied between the sub-resources of a page: a page load is one visit, as in a reader's
browser, and the page's queue waits after the whole visit (FetchBrowser adds the browser time
to the page's fetch duration). The wait is bounded by what is left of the page's budget and by
``browser.subresource_timeout_s``; past it the request is aborted and the URI logged
``-5005`` (``FetchStatus.BLOCKED_BY_SERVER_GATE``) with the annotation ``serverGateTimeout``
(claimed like any sub-resource: it is not fetched again). Sub-resources are not retried.

A request to a host whose address is known (an IP literal, a looked-up IP) and not one the
crawl may reach (``ctx.addresses``, :mod:`crawler.netguard`) is aborted and logged ``-5006``
(``nonPublicAddress:<reason>:<address>``) before its robots.txt is asked for; one whose address
is not known yet is refused, alike, by FetchHTTP's connection check. The page's own navigation
is the crawler's HTTP fetch of the page (checked like any fetch), and every request of the page
is intercepted, so Chromium itself connects nowhere.

Before anything else, a request a block rule matches (``browser.block``, ``block_lists``:
:class:`~processors.browser.block_rules.BrowserBlockRules`) is aborted and, the first time its
URL is seen, logged ``-5007`` (``browser:blocked:<rule>``). A request of another method than GET
(:mod:`processors.browser.post_capture`: a POST) takes the same path with its body as a hop
``S`` (a submission, as a form's: not accepted as an embed), must be in the crawl's scope too
(else -5000), is annotated ``method:<METHOD>`` and is claimed under its method, URL and body
digest, not its URL.

Reads ``ctx.order.robots``, ``ctx.order.browser.subresource_timeout_s``, ``ctx.scope``,
``ctx.servers``;
writes nothing on the page's CrawlURI. Thread-safe: called from the pool's fetch threads;
robots.txt fetches are serialized per server.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from crawler import CrawlURI, DecideResult, FetchStatus, Hop, Processor, ProcessorContext
from crawler.frontier import InlinePass, InlineVisit
from crawler.robots import ROBOTS_PATH
from crawler.urls import UriError, host_port, scheme_authority, server_key
from processors.browser.block_rules import BrowserBlockRules
from processors.browser.page_visit import Served
from processors.browser.post_capture import METHOD_NOTE, BrowserRequest, PostCapture, claim_uri
from processors.cookies.cookie_store import REQUEST_COOKIE
from processors.login.form_login import REQUEST

BROWSER_NOTE = "browser"
GATE_TIMEOUT_NOTE = "serverGateTimeout"
MAX_DECODED_BYTES = 64 * 1024 * 1024
ROBOTS_POLL_S = 0.25
"""How often a page waiting for a robots.txt fetch another claimed looks for its outcome."""
_UNGATED = InlineVisit(None)


class PageFetchers(NamedTuple):
    """What a PageJob calls for one page: ``fetch`` its GETs, ``posts`` its other requests."""

    fetch: Callable[[str, str | None, float], Served | None]
    posts: PostCapture


class SubresourceFetcher:
    """Fetches, records and logs one request of a browser page (see the module docstring)."""

    def __init__(
        self,
        ctx: ProcessorContext,
        http: Processor[Any],
        user_agent: str,
        note: str = BROWSER_NOTE,
        blocks: BrowserBlockRules | None = None,
        methods: frozenset[str] = frozenset(),
    ) -> None:
        """``note`` is the annotation (and link context) of the URIs fetched: ``browser``, or
        ``media`` for yt-dlp's fetches."""
        self._ctx = ctx
        self._note = note
        self._http = http
        self._user_agent = user_agent
        self.blocks = blocks if blocks is not None else BrowserBlockRules()
        self._methods = methods
        self._robots_locks: dict[str, threading.Lock] = {}
        self._locks_lock = threading.Lock()
        self._count_lock = threading.Lock()
        self.recorded = 0
        self.repeated = 0
        self.robots_blocked = 0
        self.gate_timeouts = 0
        self.address_refusals = 0
        self.blocked = 0
        self.sent = 0  # requests other than GET recorded
        self.out_of_scope = 0  # requests other than GET the scope refused
        self.resent = 0  # answered from the same page visit's first answer

    def for_page(self, page: CrawlURI) -> PageFetchers:
        """What a PageJob calls for ``page``'s requests (with the browser's ``Cookie`` header
        and the page's deadline, ``time.monotonic()``): GETs and, for the order's
        ``capture_methods``, other methods (:class:`PostCapture`)."""
        gate = self._ctx.inline_gate
        visit = gate.visit(page) if gate is not None else _UNGATED

        def fetch(url: str, cookie: str | None, deadline_s: float) -> Served | None:
            return self.fetch(page, url, deadline_s, visit, cookie)

        def send(
            url: str, request: BrowserRequest, cookie: str | None, deadline_s: float
        ) -> Served | None:
            return self.fetch(page, url, deadline_s, visit, cookie, request)

        return PageFetchers(fetch, PostCapture(send, self._methods))

    def page_done(self, fetchers: PageFetchers) -> None:
        """Count what ``fetchers``' page answered from its own earlier requests."""
        if fetchers.posts.repeats:
            self._count("resent", fetchers.posts.repeats)

    def fetch(
        self,
        page: CrawlURI,
        url: str,
        deadline_s: float = math.inf,
        visit: InlineVisit = _UNGATED,
        cookie: str | None = None,
        request: BrowserRequest | None = None,
    ) -> Served | None:
        """What the browser gets for ``url`` (None: abort the request). Waits for the server's
        gate until ``deadline_s`` at most (and ``browser.subresource_timeout_s``); ``cookie``
        is the ``Cookie`` header the browser would send, merged over the crawl's jar's;
        ``request``: a method other than GET, with its body (:mod:`.post_capture`)."""
        ctx = self._ctx
        until_s = min(deadline_s, time.monotonic() + ctx.order.browser.subresource_timeout_s)
        # A POST is a submission (hop S, as a form's): its scope is the pages', not an embed's.
        child = page.create_child(url, "E" if request is None else Hop.SUBMIT, self._note)
        child.thread_number = page.thread_number
        child.annotate(self._note)
        if request is not None:
            child.annotate(METHOD_NOTE + request.method)
            child.data[REQUEST] = request.as_data()
        if cookie:
            child.data[REQUEST_COOKIE] = cookie
        rule = self.blocks.match(url) if self.blocks else None
        if rule is not None:
            child.status = FetchStatus.BLOCKED_BY_BROWSER_RULE
            child.annotate(self.blocks.annotation(rule))
            self._count("blocked")
            claimed = self._claim(child, request)
            self.blocks.note(rule, new_url=claimed)
            if claimed:
                self._finish(child)
            return None
        note = self._address_refusal(url)
        if note is not None:
            child.status = FetchStatus.BLOCKED_BY_ADDRESS
            child.annotate(note)
            self._count("address_refusals")
            if self._claim(child, request):
                self._finish(child)
            return None
        if request is not None and ctx.scope.decide(child) is not DecideResult.ACCEPT:
            child.status = FetchStatus.OUT_OF_SCOPE
            self._count("out_of_scope")
            if self._claim(child, request):
                self._finish(child)
            return None
        allowed: bool | None = True
        if ctx.order.robots.policy == "obey":
            allowed = self._robots_allow(page, url, visit, until_s)
        if not allowed:
            if allowed is None:
                self._gate_timeout(child)
            else:
                child.status = FetchStatus.ROBOTS_PRECLUDED
                self._count("robots_blocked")
            if self._claim(child, request):
                self._finish(child)
            return None
        claimed = self._claim(child, request)
        ticket = self._enter(visit, url, until_s)
        if ticket is None:
            self._gate_timeout(child)
            if claimed:
                self._finish(child)
            return None
        try:
            self._http.process(child)
        finally:
            self._leave(ticket, child)
        if not claimed:
            self._count("repeated")
            try:
                return _served(child)
            finally:
                child.close_recording()
        try:
            served = _served(child)
        finally:
            self._count("recorded" if request is None else "sent")
            self._finish(child)
        return served

    def _robots_allow(
        self, page: CrawlURI, url: str, visit: InlineVisit, until_s: float
    ) -> bool | None:
        """Whether robots.txt lets us fetch ``url``, fetching it first if need be; None if the
        server's gate did not admit that fetch in time."""
        ctx = self._ctx
        try:
            server = server_key(url)
            robots_uri = scheme_authority(url) + ROBOTS_PATH
        except (UriError, ValueError):
            return False
        servers = ctx.servers
        validity = ctx.order.robots.validity_s
        valid = servers.is_robots_valid(server, ctx.clock.time(), validity)
        if not valid and servers.adopt_shared(["robots:" + server]):  # another worker's fetch
            valid = servers.is_robots_valid(server, ctx.clock.time(), validity)
        if not valid:
            with self._locks_lock:
                lock = self._robots_locks.setdefault(server, threading.Lock())
            if not lock.acquire(timeout=max(0.0, min(until_s - time.monotonic(), 3600.0))):
                return None
            try:
                turn = self._robots_turn(server, until_s)
                if turn is None:
                    return None
                if turn:
                    robots = page.create_child(robots_uri, "P", "browser")
                    robots.thread_number = page.thread_number
                    robots.annotate(self._note)
                    ticket = self._enter(visit, robots_uri, until_s)
                    if ticket is None:
                        servers.release_prerequisite("robots:" + server)
                        return None
                    try:
                        self._http.process(robots)  # FetchHTTP feeds ctx.servers.update_robots
                    finally:
                        self._leave(ticket, robots)
                    if self._claim(robots):
                        self._finish(robots)
                    else:
                        robots.close_recording()
            finally:
                lock.release()
        return servers.allowed(url, self._user_agent, server)

    def _robots_turn(self, server: str, until_s: float) -> bool | None:
        """Whether this page is to fetch ``server``'s robots.txt (the per-server lock held):
        False once valid rules are known, True once it holds the crawl-wide claim
        (``ServerCache.claim_prerequisite``, the claim the HTTP path's prerequisites take). While
        another fetch holds the claim (a queue of this process, or another worker), waits for
        its outcome, looking every :data:`ROBOTS_POLL_S` (here, then in the share); None if
        ``until_s`` or the crawl's end comes first."""
        ctx = self._ctx
        servers = ctx.servers
        validity = ctx.order.robots.validity_s
        key = "robots:" + server
        hold_s = ctx.order.browser.subresource_timeout_s
        while True:
            if servers.is_robots_valid(server, ctx.clock.time(), validity):
                return False
            if servers.claim_prerequisite(key, ctx.clock.time(), hold_s):
                return True
            wait_s = min(ROBOTS_POLL_S, until_s - time.monotonic())
            if wait_s <= 0 or ctx.stopping.wait(wait_s):
                return None
            servers.adopt_shared([key])

    def _address_refusal(self, url: str) -> str | None:
        policy = self._ctx.addresses
        if policy is None:
            return None
        try:
            host, port = host_port(url)
        except (UriError, ValueError):
            return None
        return policy.known_refusal(host, port, self._ctx.servers)

    def _enter(self, visit: InlineVisit, url: str, until_s: float) -> InlinePass | None:
        gate = self._ctx.inline_gate
        if gate is None:
            return InlinePass(visit, None)
        return gate.enter(visit, url, until_s)

    def _leave(self, ticket: InlinePass, curi: CrawlURI) -> None:
        gate = self._ctx.inline_gate
        if gate is not None and ticket.server is not None:
            gate.leave(ticket, curi)

    def _gate_timeout(self, child: CrawlURI) -> None:
        child.status = FetchStatus.BLOCKED_BY_SERVER_GATE
        child.annotate(GATE_TIMEOUT_NOTE)
        self._count("gate_timeouts")

    def _claim(self, curi: CrawlURI, request: BrowserRequest | None = None) -> bool:
        claim = self._ctx.claim_uri
        if claim is None:
            return True
        if request is None:
            return claim(curi)
        known_as = CrawlURI(claim_uri(curi.uri, request))
        claimed = claim(known_as)
        curi.canonical = known_as.canonical
        return claimed

    def _finish(self, curi: CrawlURI) -> None:
        finish = self._ctx.finish_inline
        if finish is None:
            curi.close_recording()
        else:
            finish(curi)

    def _count(self, name: str, n: int = 1) -> None:
        with self._count_lock:
            setattr(self, name, getattr(self, name) + n)


def _served(curi: CrawlURI) -> Served | None:
    rec = curi.recording
    if curi.status <= 0 or rec is None:
        return None
    body = rec.decoded_body(curi.header("content-encoding"), MAX_DECODED_BYTES)
    return Served(curi.http_status, list(curi.response_headers), body)
