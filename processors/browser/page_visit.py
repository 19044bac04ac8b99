"""One page in the browser: PageJob in, PageOutcome out (:func:`visit_page`).

The page gets its own browser context (no cookies or storage shared between pages). Every
request it makes is intercepted: the page's own document is answered with the bytes the
crawler's HTTP fetch already got (``PageJob.document``), every other http(s) GET with what
``PageJob.fetch(url, deadline)`` returns (called on a worker thread, with the page's deadline
on ``time.monotonic()``: it waits for the server's gate no longer, fetches through the
crawler's HTTP client, records and logs), anything else is aborted. The main frame may not
navigate away, pop-ups are closed, dialogs dismissed, downloads refused, websockets closed;
each such event is noted (``browser:<event>``). Behaviours then run within the page's
deadline, and the rendered DOM's links are read.

Runs on the pool's event loop; the blocking ``fetch`` goes to the given executor.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

from processors.browser.behaviours import CLICK_MORE_JS, FITS_JS, LINKS_JS, SCROLL_JS

_DROP_HEADERS = frozenset({"content-encoding", "transfer-encoding", "content-length", "connection"})


@dataclass(slots=True)
class Served:
    """What the browser is given for one request: status, headers and the decoded body."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes


@dataclass(slots=True)
class PageJob:
    """A page to load: its URI, its document as fetched, and how to fetch everything else."""

    uri: str
    document: Served
    fetch: Callable[[str, float], Served | None]
    user_agent: str
    budget_s: float
    behaviours: bool = True
    max_scrolls: int = 20
    max_clicks: int = 10
    idle_ms: int = 400
    screenshot: bool = False


@dataclass(slots=True)
class PageOutcome:
    """What the browser made of a page."""

    links: list[tuple[str, str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    screenshot: bytes | None = None
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


async def visit_page(
    browser: Any, job: PageJob, executor: Executor, outcome: PageOutcome
) -> PageOutcome:
    """Load ``job`` in a fresh context of ``browser``, filling ``outcome`` as it goes (so a
    caller that cancels at the deadline keeps what was found)."""
    deadline = time.monotonic() + job.budget_s
    loop = asyncio.get_running_loop()
    traffic = _Traffic()
    context = await browser.new_context(
        user_agent=job.user_agent,
        viewport={"width": 1280, "height": 900},
        accept_downloads=False,
        service_workers="block",
        ignore_https_errors=True,
    )
    try:
        page = await context.new_page()
        main_frame = page.main_frame
        document_served = False

        async def route(route: Any) -> None:
            nonlocal document_served
            request = route.request
            url = request.url
            if request.is_navigation_request() and request.frame == main_frame:
                if url == job.uri and not document_served:
                    document_served = True
                    doc = job.document
                    await route.fulfill(status=doc.status, headers=_headers(doc), body=doc.body)
                    return
                outcome.note("browser:navigationBlocked")
                await route.abort("blockedbyclient")
                return
            if request.method != "GET" or not url.startswith(("http://", "https://")):
                outcome.note("browser:nonGetBlocked")
                await route.abort("blockedbyclient")
                return
            traffic.begin()
            outcome.requests += 1
            try:
                served = await loop.run_in_executor(executor, job.fetch, url, deadline)
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

        async def websocket(ws: Any) -> None:
            outcome.note("browser:websocketClosed")
            with contextlib.suppress(Exception):
                await ws.close()

        pending: set[asyncio.Future[Any]] = set()

        def later(awaitable: Any) -> None:
            task = asyncio.ensure_future(awaitable)
            pending.add(task)
            task.add_done_callback(pending.discard)

        def popup(other: Any) -> None:
            if other is not page:
                outcome.note("browser:popupClosed")
                later(other.close())

        def dialog(d: Any) -> None:
            outcome.note("browser:dialogDismissed")
            later(d.dismiss())

        # Set up together: each is a round trip to the browser.
        await asyncio.gather(
            context.route("**/*", route), context.route_web_socket("**/*", websocket)
        )
        context.on("page", popup)
        page.on("dialog", dialog)
        page.on("crash", lambda _p: outcome.note("browser:crash"))
        page.on("download", lambda _d: outcome.note("browser:downloadRefused"))

        remaining_ms = max(1.0, (deadline - time.monotonic()) * 1000 * 0.7)
        try:
            await page.goto(job.uri, wait_until="load", timeout=remaining_ms)
        except Exception as exc:  # noqa: BLE001 - a page that never loads is still read
            timed_out = "Timeout" in type(exc).__name__
            outcome.note("browser:loadTimeout" if timed_out else "browser:loadError")
        if "browser:crash" in outcome.notes:
            return outcome
        # Quiet is counted from the load event: scripts get idle_ms to start their requests.
        traffic.last_change = max(traffic.last_change, time.monotonic())
        idle_s = job.idle_ms / 1000.0
        work_deadline = deadline - min(2.0, job.budget_s * 0.15)
        if not await traffic.idle(idle_s, work_deadline):
            outcome.note("browser:neverIdle")
        if job.behaviours:
            await _behave(page, job, traffic, idle_s, work_deadline, outcome)
        raw = await page.evaluate(LINKS_JS)
        outcome.links = [(str(u), str(h), str(c)) for u, h, c in raw]
        if job.screenshot and time.monotonic() < deadline:
            outcome.screenshot = await page.screenshot(
                type="png", timeout=max(1.0, (deadline - time.monotonic()) * 1000)
            )
        return outcome
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(context.close(), 5)


async def _behave(
    page: Any, job: PageJob, traffic: _Traffic, idle_s: float, deadline: float, out: PageOutcome
) -> None:
    """Scroll until the page stops growing, click "more" buttons, wait for the network."""
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
    if time.monotonic() >= deadline:
        out.note("browser:behaviourTimeout")
