"""One page in the browser: PageJob in, PageOutcome out (:meth:`BrowserTab.visit`).

A :class:`BrowserTab` is one browser context holding one page, opened once and then reused
for page after page (a new context and renderer per page cost more than the page itself).
Between two visits the tab goes back to ``about:blank``, so nothing of a page runs on into the
next. Every request the page makes is intercepted: the page's own document is answered with
the bytes the crawler's HTTP fetch already got (``PageJob.document``), every other http(s) GET
with what ``PageJob.fetch(url, cookie, deadline)`` returns (called on a worker thread with the
``Cookie`` header the browser would send and the page's deadline on ``time.monotonic()``: it
waits for the server's gate no longer, fetches through the crawler's HTTP client, records and
logs), a request of a method in ``PageJob.sender.methods`` (a POST) with what
``PageJob.sender.send`` returns for it and its body, anything else is aborted. The main frame
may not navigate away, pop-ups are closed, dialogs dismissed, downloads refused, websockets
closed; each such event is noted (``browser:<event>``). Behaviours then run within the page's
deadline, and the rendered DOM's links are read.

Cookies: the tab's context keeps the cookies its pages set (by ``Set-Cookie`` or by script);
before a visit it is given the crawl's cookies for the page (``PageJob.cookies_in``: a login's
session reaches the page's scripts), after it the context's cookies that changed are handed to
``PageJob.cookies_out`` (script-set cookies reach the crawl's jar, so later HTTP fetches send
them).

Runs on the pool's event loop; the blocking ``fetch`` goes to the given executor. A tab serves
one visit at a time; after a visit it goes back to ``about:blank`` in the background, and its
owner awaits :meth:`BrowserTab.settle` before the next. One that failed (crash, deadline, closed
page) reports ``broken`` and is closed by its owner instead of reused.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Protocol

from processors.browser.behaviours import CLICK_MORE_JS, FITS_JS, LINKS_JS, SCROLL_JS
from processors.browser.page_extras import Capture, PageExtras

_DROP_HEADERS = frozenset({"content-encoding", "transfer-encoding", "content-length", "connection"})

BrowserCookie = dict[str, Any]
"""A cookie as Playwright's ``context.cookies()``/``add_cookies`` exchange it."""


@dataclass(slots=True)
class Served:
    """What the browser is given for one request: status, headers and the decoded body."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes


class RequestSender(Protocol):
    """Answers a page's requests other than GET (:mod:`processors.browser.post_capture`)."""

    methods: frozenset[str]

    def send(
        self,
        url: str,
        method: str,
        body: bytes | None,
        headers: dict[str, str],
        deadline_s: float,
    ) -> Served | None:
        """What the browser gets (None: abort) for a request with these ``body`` and
        ``headers`` (names in lower case); called on a worker thread."""
        ...


def _no_cookies(_uri: str) -> list[BrowserCookie]:
    return []


def _drop_cookies(_cookies: list[BrowserCookie]) -> None:
    return None


@dataclass(slots=True)
class PageJob:
    """A page to load: its URI, its document as fetched, and how to fetch everything else.

    ``fetch(url, cookie, deadline)`` answers a GET (None: abort it), ``sender`` the methods it
    lists (None: only GETs are answered); ``cookies_in(uri)`` lists the crawl's cookies for the
    page, ``cookies_out(cookies)`` takes the ones it changed."""

    uri: str
    document: Served
    fetch: Callable[[str, str | None, float], Served | None]
    user_agent: str
    budget_s: float
    behaviours: bool = True
    max_scrolls: int = 20
    max_clicks: int = 10
    idle_ms: int = 400
    extras: PageExtras = field(default_factory=PageExtras)
    cookies_in: Callable[[str], list[BrowserCookie]] = _no_cookies
    cookies_out: Callable[[list[BrowserCookie]], None] = _drop_cookies
    sender: RequestSender | None = None


@dataclass(slots=True)
class PageOutcome:
    """What the browser made of a page."""

    links: list[tuple[str, str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    captures: list[Capture] = field(default_factory=list)
    requests: int = 0
    scrolls: int = 0
    clicks: int = 0

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


def _headers(served: Served) -> dict[str, str]:
    merged: dict[str, str] = {}
    for name, value in served.headers:
        key = name.lower()
        if key in _DROP_HEADERS:
            continue
        merged[key] = f"{merged[key]}\n{value}" if key == "set-cookie" and key in merged else value
    return merged


def _cookie_key(cookie: BrowserCookie) -> tuple[str, str, str]:
    return (str(cookie.get("name")), str(cookie.get("domain")), str(cookie.get("path")))


class _Traffic:
    """Requests in flight, for "the network is idle"."""

    def __init__(self) -> None:
        self.inflight = 0
        self.last_change = time.monotonic()

    def begin(self) -> None:
        self.inflight += 1
        self.last_change = time.monotonic()

    def end(self) -> None:
        self.inflight -= 1
        self.last_change = time.monotonic()

    async def idle(self, idle_s: float, deadline: float) -> bool:
        """Wait until no request was in flight for ``idle_s``; False if ``deadline`` came first."""
        while time.monotonic() < deadline:
            if self.inflight <= 0 and time.monotonic() - self.last_change >= idle_s:
                return True
            await asyncio.sleep(0.05)
        return False


@dataclass(slots=True)
class _Visit:
    """The page a tab is loading now."""

    job: PageJob
    outcome: PageOutcome
    executor: Executor
    deadline: float
    traffic: _Traffic = field(default_factory=_Traffic)
    document_served: bool = False


class BrowserTab:
    """A browser context with one page, reused visit after visit (see the module docstring)."""

    def __init__(self, context: Any, page: Any) -> None:
        self.context = context
        self.page = page
        self.broken = False
        self.visits = 0
        self._visit: _Visit | None = None
        self._cookies: dict[tuple[str, str, str], str] = {}  # what the context holds: values
        self._pending: set[asyncio.Future[Any]] = set()
        self._settling: asyncio.Future[None] | None = None

    @classmethod
    async def open(
        cls, browser: Any, user_agent: str, storage_state: dict[str, Any] | None = None
    ) -> BrowserTab:
        """A new tab in ``browser`` (a Playwright Browser), its handlers installed, holding
        ``storage_state`` (a saved profile's cookies and localStorage) if given."""
        context = await browser.new_context(
            storage_state=storage_state,
            user_agent=user_agent,
            viewport={"width": 1280, "height": 900},
            accept_downloads=False,
            service_workers="block",
            ignore_https_errors=True,
        )
        try:
            page = await context.new_page()
            tab = cls(context, page)
            # Set up together: each is a round trip to the browser.
            await asyncio.gather(
                context.route("**/*", tab._route), context.route_web_socket("**/*", tab._socket)
            )
        except BaseException:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(context.close(), 5)
            raise
        context.on("page", tab._popup)
        page.on("dialog", tab._dialog)
        page.on("crash", tab._crash)
        page.on("download", lambda _d: tab._note("browser:downloadRefused"))
        return tab

    async def close(self) -> None:
        """Close the tab's context (never raises)."""
        self.broken = True
        settling, self._settling = self._settling, None
        if settling is not None:
            settling.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.context.close(), 5)

    # ---------------------------------------------------------------- events
    def _note(self, text: str) -> None:
        visit = self._visit
        if visit is not None:
            visit.outcome.note(text)

    def _later(self, awaitable: Any) -> None:
        task = asyncio.ensure_future(awaitable)
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    def _popup(self, other: Any) -> None:
        if other is not self.page:
            self._note("browser:popupClosed")
            self._later(other.close())

    def _dialog(self, dialog: Any) -> None:
        self._note("browser:dialogDismissed")
        self._later(dialog.dismiss())

    def _crash(self, _page: Any) -> None:
        self.broken = True
        self._note("browser:crash")

    async def _socket(self, ws: Any) -> None:
        self._note("browser:websocketClosed")
        with contextlib.suppress(Exception):
            await ws.close()

    async def _route(self, route: Any) -> None:
        visit = self._visit
        request = route.request
        url = request.url
        if visit is None:  # between visits: nothing of an old page is fetched
            with contextlib.suppress(Exception):
                await route.abort("blockedbyclient")
            return
        job, outcome = visit.job, visit.outcome
        if request.is_navigation_request() and request.frame == self.page.main_frame:
            if url == job.uri and not visit.document_served:
                visit.document_served = True
                doc = job.document
                await route.fulfill(status=doc.status, headers=_headers(doc), body=doc.body)
                return
            outcome.note("browser:navigationBlocked")
            await route.abort("blockedbyclient")
            return
        method, sender = request.method, job.sender
        if not url.startswith(("http://", "https://")) or (
            method != "GET" and (sender is None or method not in sender.methods)
        ):
            outcome.note("browser:nonGetBlocked")
            await route.abort("blockedbyclient")
            return
        traffic = visit.traffic
        traffic.begin()
        outcome.requests += 1
        try:
            headers = request.headers
            if method == "GET" or sender is None:
                call = functools.partial(job.fetch, url, headers.get("cookie"), visit.deadline)
            else:
                body = request.post_data_buffer
                call = functools.partial(sender.send, url, method, body, headers, visit.deadline)
            loop = asyncio.get_running_loop()
            served = await loop.run_in_executor(visit.executor, call)
            if served is None:
                await route.abort("blockedbyclient")
            else:
                await route.fulfill(
                    status=served.status, headers=_headers(served), body=served.body
                )
        except Exception:  # noqa: BLE001 - a closed page or context: nothing to answer
            with contextlib.suppress(Exception):
                await route.abort("failed")
        finally:
            traffic.end()

    # ----------------------------------------------------------------- visit
    async def visit(self, job: PageJob, executor: Executor, outcome: PageOutcome) -> PageOutcome:
        """Load ``job``, filling ``outcome`` as it goes (so a caller that cancels at the deadline
        keeps what was found). Sets :attr:`broken` when the tab must not serve again."""
        deadline = time.monotonic() + job.budget_s
        visit = _Visit(job, outcome, executor, deadline)
        self._visit = visit
        self.visits += 1
        page = self.page
        try:
            await self._cookies_in(job)
            remaining_ms = max(1.0, (deadline - time.monotonic()) * 1000 * 0.7)
            try:
                await page.goto(job.uri, wait_until="load", timeout=remaining_ms)
            except Exception as exc:  # noqa: BLE001 - a page that never loads is still read
                timed_out = "Timeout" in type(exc).__name__
                outcome.note("browser:loadTimeout" if timed_out else "browser:loadError")
            if self.broken or page.is_closed():
                self.broken = True
                return outcome
            # Quiet is counted from the load event: scripts get idle_ms to start their requests.
            traffic = visit.traffic
            traffic.last_change = max(traffic.last_change, time.monotonic())
            idle_s = job.idle_ms / 1000.0
            work_deadline = deadline - min(2.0, job.budget_s * 0.15)
            if not await traffic.idle(idle_s, work_deadline):
                outcome.note("browser:neverIdle")
            if job.behaviours:
                await _behave(page, job, traffic, idle_s, work_deadline, outcome)
            raw = await page.evaluate(LINKS_JS)
            outcome.links = [(str(u), str(h), str(c)) for u, h, c in raw]
            outcome.captures = await job.extras.capture(page, job.uri, deadline, outcome.note)
            await self._cookies_out(job)
            return outcome
        except BaseException:
            self.broken = True
            raise
        finally:
            self._visit = None  # from here on the page's requests are refused
            if not self.broken:
                # Off the page's path: the tab settles while its slot serves another page.
                self._settling = asyncio.ensure_future(self._blank())

    async def settle(self) -> bool:
        """Wait until the last page has left the tab; False if the tab must not serve again."""
        settling, self._settling = self._settling, None
        if settling is not None:
            await settling
        return not self.broken

    async def _blank(self) -> None:
        """Back to ``about:blank``: the page's scripts, timers and requests end here."""
        try:
            await asyncio.wait_for(self.page.goto("about:blank"), 5)
        except Exception:  # noqa: BLE001 - a tab that cannot leave its page is not reused
            self.broken = True

    async def _cookies_in(self, job: PageJob) -> None:
        known = self._cookies
        fresh = [c for c in job.cookies_in(job.uri) if known.get(_cookie_key(c)) != c["value"]]
        if fresh:
            await self.context.add_cookies(fresh)
            for c in fresh:
                known[_cookie_key(c)] = str(c["value"])

    async def _cookies_out(self, job: PageJob) -> None:
        changed: list[BrowserCookie] = []
        for raw in await self.context.cookies():
            cookie = dict(raw)
            key, value = _cookie_key(cookie), str(cookie.get("value"))
            if self._cookies.get(key) != value:
                self._cookies[key] = value
                changed.append(cookie)
        if changed:
            job.cookies_out(changed)


async def _behave(
    page: Any, job: PageJob, traffic: _Traffic, idle_s: float, deadline: float, out: PageOutcome
) -> None:
    """Play media and open what opens in place; scroll until the page stops growing, click
    "more" buttons, wait for the network; then the custom behaviours."""

    async def idle(until: float) -> bool:
        return await traffic.idle(idle_s, until)

    await job.extras.open_up(page, idle, deadline, out.note)
    height = -1
    while time.monotonic() < deadline:
        grew = False
        fits = bool(await page.evaluate(FITS_JS))
        while not fits and out.scrolls < job.max_scrolls and time.monotonic() < deadline:
            new_height = int(await page.evaluate(SCROLL_JS))
            out.scrolls += 1
            await asyncio.sleep(0.05)
            await traffic.idle(idle_s, deadline)
            new_height = int(await page.evaluate(SCROLL_JS))
            if new_height <= height:
                break
            height = new_height
            grew = True
        if out.scrolls >= job.max_scrolls:
            out.note("browser:scrollLimit")
        if out.clicks >= job.max_clicks or time.monotonic() >= deadline:
            break
        if not await page.evaluate(CLICK_MORE_JS):
            if not grew:
                break
            continue
        out.clicks += 1
        await asyncio.sleep(0.05)
        await traffic.idle(idle_s, deadline)
    await job.extras.run_custom(page, idle, deadline, out.note)
    if time.monotonic() >= deadline:
        out.note("browser:behaviourTimeout")
