"""BrowserPool: headless Chromium processes shared by every ToeThread.

One background thread runs an asyncio loop with Playwright (async API) connected to the
browsers over the DevTools protocol. :meth:`BrowserPool.visit` is called from ToeThreads: it
waits for one of ``pages_at_once`` slots, runs the page on the loop and blocks until the page
ends. The pool starts on the first visit and stops with :meth:`close` (the crawl's end).

A browser serves pages until it has loaded ``pages_per_browser`` or its processes use more
than ``memory_ceiling_mb`` (PSS); then it takes no new page, and is closed once its open pages
end, a fresh one serving the next. A page past its budget (plus a few seconds' grace for
closing) is abandoned and its browser killed and replaced, so a hung renderer cannot hold a
slot; a browser that dies is replaced too. Each browser keeps its idle tabs
(:class:`~processors.browser.page_visit.BrowserTab`: a context with one page) and hands them to
the next pages; a tab that failed, or that served ``pages_per_browser`` pages, is closed.
Sub-resource fetches run on a thread pool (``executor``) since they block on the crawler's
HTTP client.

Thread-safety: :meth:`visit` and :meth:`close` may be called from any thread; everything else
runs on the loop thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crawler.order.schema import BrowserConfig
from processors.browser.chromium_process import ChromiumProcess
from processors.browser.page_visit import BrowserTab, PageJob, PageOutcome

_CLOSE_GRACE_S = 5.0


@dataclass(slots=True)
class _Browser:
    process: ChromiumProcess
    handle: Any
    served: int = 0
    open_pages: int = 0
    retiring: bool = False
    reason: str = "recycled"
    measuring: bool = False
    tabs: list[BrowserTab] = field(default_factory=list)


class BrowserPool:
    """Chromium browsers loading pages for FetchBrowser (see the module docstring)."""

    def __init__(self, cfg: BrowserConfig, state_dir: Path, logger: Any = None) -> None:
        self._cfg = cfg
        self._state_dir = state_dir
        self._logger = logger
        self._slots = threading.BoundedSemaphore(cfg.pages_at_once)
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._playwright: Any = None
        self._current: _Browser | None = None
        self._browsers: list[_Browser] = []
        self._launch_lock: asyncio.Lock | None = None
        self._closed = False
        self._tasks: set[asyncio.Future[None]] = set()
        self.executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=max(4, 6 * cfg.pages_at_once), thread_name_prefix="browser-fetch"
        )
        self.browsers_started = 0
        self.browsers_replaced: dict[str, int] = {}
        self.peak_memory_bytes = 0

    # ------------------------------------------------------------------ public
    def visit(self, job: PageJob) -> PageOutcome:
        """Load ``job`` in a browser; blocks until it ends (at most its budget plus a grace)."""
        outcome = PageOutcome()
        loop = self._ensure_loop()
        while not self._slots.acquire(timeout=1.0):
            if self._closed:
                outcome.note("browser:poolClosed")
                return outcome
        try:
            future = asyncio.run_coroutine_threadsafe(self._visit(job, outcome), loop)
            try:
                future.result(timeout=job.budget_s + 2 * _CLOSE_GRACE_S + 30)
            except concurrent.futures.TimeoutError:
                future.cancel()
                outcome.note("browser:timeout")
            except Exception as exc:  # noqa: BLE001 - a failure ends the page, not the crawl
                outcome.note(f"browser:error={type(exc).__name__}")
        finally:
            self._slots.release()
        return outcome

    def close(self) -> None:
        """Close every browser and stop the loop. Idempotent; never raises."""
        with self._lock:
            self._closed = True
            loop, thread = self._loop, self._thread
        if loop is not None and thread is not None:
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(timeout=20)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(10)
        for b in list(self._browsers):
            b.process.kill()
        self._browsers.clear()
        self.executor.shutdown(wait=False, cancel_futures=True)

    @property
    def started(self) -> bool:
        return self._loop is not None

    # ------------------------------------------------------------------ loop
    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._closed:
                raise RuntimeError("browser pool closed")
            if self._loop is None:
                ready = threading.Event()
                loop = asyncio.new_event_loop()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    ready.set()
                    loop.run_forever()

                self._thread = threading.Thread(target=run, name="browser-pool", daemon=True)
                self._thread.start()
                ready.wait()
                self._loop = loop
            return self._loop

    async def _visit(self, job: PageJob, outcome: PageOutcome) -> None:
        browser = await self._browser()
        browser.open_pages += 1
        browser.served += 1
        broken = False
        tab: BrowserTab | None = None
        try:
            while browser.tabs and tab is None:
                tab = browser.tabs.pop(0)  # the longest idle: it has settled by now
                if not await tab.settle():
                    await tab.close()
                    tab = None
            if tab is None:
                tab = await BrowserTab.open(
                    browser.handle, job.user_agent, job.extras.storage_state
                )
            await asyncio.wait_for(
                tab.visit(job, self.executor, outcome), job.budget_s + _CLOSE_GRACE_S
            )
        except TimeoutError:
            outcome.note("browser:timeout")
            broken = True  # a page that ignores its deadline: its renderer may be hung
        except Exception as exc:  # noqa: BLE001 - e.g. the browser died under the page
            crashed = "crash" in str(exc).lower()
            outcome.note("browser:crash" if crashed else f"browser:error={type(exc).__name__}")
            broken = not browser.handle.is_connected()
        finally:
            browser.open_pages -= 1
        if tab is not None and not broken:
            if tab.broken or browser.retiring or tab.visits >= self._cfg.pages_per_browser:
                await tab.close()
            else:
                browser.tabs.append(tab)
        if broken:
            await self._retire(browser, "killed", kill=True)
            return
        if browser.served >= self._cfg.pages_per_browser:
            browser.retiring = True
            browser.reason = "recycled"
        elif not browser.measuring:
            # Off the page's path: reading /proc for every process of a browser takes a while.
            browser.measuring = True
            task = asyncio.ensure_future(self._measure(browser))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        if browser.retiring and browser.open_pages == 0:
            await self._retire(browser, browser.reason)

    async def _measure(self, browser: _Browser) -> None:
        try:
            memory = await asyncio.to_thread(browser.process.memory_bytes)
        finally:
            browser.measuring = False
        self.peak_memory_bytes = max(self.peak_memory_bytes, memory)
        if memory > self._cfg.memory_ceiling_mb * 1024 * 1024 and not browser.retiring:
            browser.retiring = True
            browser.reason = "memory"
            if browser.open_pages == 0 and browser in self._browsers:
                await self._retire(browser, "memory")

    async def _browser(self) -> _Browser:
        if self._launch_lock is None:
            self._launch_lock = asyncio.Lock()
        async with self._launch_lock:
            current = self._current
            if current is not None and not current.retiring and current.handle.is_connected():
                return current
            if current is not None and not current.handle.is_connected():
                await self._retire(current, "died", kill=True)
            if self._playwright is None:
                from playwright.async_api import async_playwright

                self._playwright = await async_playwright().start()
            process = await asyncio.to_thread(
                ChromiumProcess, self._cfg.executable, self._state_dir
            )
            try:
                handle = await self._playwright.chromium.connect_over_cdp(
                    process.ws_endpoint, timeout=30000
                )
            except Exception:
                process.kill()
                raise
            fresh = _Browser(process, handle)
            self._browsers.append(fresh)
            self._current = fresh
            self.browsers_started += 1
            if self._logger is not None:
                self._logger.info("browser_started", pid=process.pid)
            return fresh

    async def _retire(self, browser: _Browser, reason: str, kill: bool = False) -> None:
        browser.retiring = True
        if browser in self._browsers:
            self._browsers.remove(browser)
            self.browsers_replaced[reason] = self.browsers_replaced.get(reason, 0) + 1
        if self._current is browser:
            self._current = None
        if not kill:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(browser.handle.close(), _CLOSE_GRACE_S)
        await asyncio.to_thread(browser.process.kill)
        if self._logger is not None:
            self._logger.info("browser_stopped", pid=browser.process.pid, reason=reason)

    async def _shutdown(self) -> None:
        for browser in list(self._browsers):
            await self._retire(browser, "crawl_ended")
        if self._playwright is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._playwright.stop(), _CLOSE_GRACE_S)
            self._playwright = None
