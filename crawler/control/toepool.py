"""ToePool and ToeThread: the crawl's worker threads.

Each ToeThread loops: take a CrawlURI from the frontier, run it through the five chains, hand it
back with ``frontier.finished()``. An exception escaping a processor gives the URI status -5 with
``err=<ExceptionName>`` and its traceback (runtime-errors.log); the thread carries on.

Pausing: a paused pool admits no URI into processing. A thread that got a URI from the frontier
just as the pool paused holds it, not counted busy, until unpause (or stop), so "no busy thread"
really means no fetch is going on. Operator block rules (``blocked``) are checked first: a
matching URI ends with -5001 without running any processor, like Heritrix's Preselector
``blockByRegex``. Heritrix counterparts: ``ToePool``, ``ToeThread``.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from crawler.curi import FetchStatus

IDLE_WAIT_S = 2.0
"""How long an idle thread waits in ``frontier.next()`` before it looks at the pool again.
Pausing and stopping wake it at once (``frontier.wake_waiters()``), so the wait is long: an idle
thread that woke every 0.25 s cost a crowded crawl (300 threads) ~15% of its CPU per fetch."""

if TYPE_CHECKING:
    from crawler.chain import ProcessorChains
    from crawler.curi import CrawlURI
    from crawler.frontier.frontier import Frontier
    from crawler.processor import Processor


class ToeThread(threading.Thread):
    """One worker. Its ``serial`` (from 1) is crawl.log's thread column.

    ``step``, ``current`` and ``processor`` are read by other threads for the threads report;
    they are plain attribute assignments, so reads see a recent, possibly stale, value.
    """

    def __init__(self, pool: ToePool, serial: int) -> None:
        super().__init__(name=f"ToeThread #{serial}", daemon=True)
        self.pool = pool
        self.serial = serial
        self.step = "NASCENT"
        self.step_since = time.monotonic()
        self.current: CrawlURI | None = None
        self.processor = ""
        self.uris_processed = 0

    def _set_step(self, step: str) -> None:
        if step != self.step:
            self.step = step
            self.step_since = time.monotonic()

    def _on_processor(self, proc: Processor[Any]) -> None:
        self.processor = proc.name

    def run(self) -> None:
        pool = self.pool
        frontier = pool.frontier
        while not pool.stop_requested.is_set():
            if pool.paused.is_set():
                self._set_step("PAUSED")
                pool.unpaused_or_stopped(0.5)
                continue
            self._set_step("ABOUT_TO_GET_URI")
            curi = frontier.next(IDLE_WAIT_S)
            if curi is None:
                continue
            self.process_one(curi)
        self._set_step("FINISHED")

    def process_one(self, curi: CrawlURI) -> None:
        """Run one URI through the chains and return it to the frontier."""
        pool = self.pool
        if not pool.admit():
            self._set_step("HOLDING_URI_WHILE_PAUSED")
            while not pool.admit():
                pool.unpaused_or_stopped(0.5)
        self.current = curi
        curi.thread_number = self.serial
        self._set_step("ABOUT_TO_BEGIN_PROCESSOR")
        try:
            blocked = pool.blocked
            if blocked is not None and blocked(curi.uri):
                curi.status = FetchStatus.BLOCKED_BY_USER
                # Nothing was fetched: the queue owes its host no politeness wait.
                curi.politeness_delay_ms = 0
            else:
                pool.chains.run(curi, self._on_processor)
        except Exception as error:  # noqa: BLE001 - any processor failure becomes -5
            self._set_step("HANDLING_RUNTIME_EXCEPTION")
            curi.status = FetchStatus.RUNTIME_EXCEPTION
            curi.annotate(f"err={type(error).__name__}")
            curi.error = error
            curi.error_traceback = traceback.format_exc()
            curi.outlinks = []
            curi.prerequisite = None
        finally:
            self._set_step("ABOUT_TO_RETURN_URI")
            try:
                pool.frontier.finished(curi)
            finally:
                self.current = None
                self.processor = ""
                self.uris_processed += 1
                with pool.busy_lock:
                    pool.busy -= 1


class ToePool:
    """A fixed set of ToeThreads sharing one frontier and one set of chains."""

    def __init__(
        self,
        frontier: Frontier,
        chains: ProcessorChains,
        size: int,
        blocked: Callable[[str], bool] | None = None,
    ) -> None:
        self.frontier = frontier
        self.chains = chains
        self.size = size
        self.blocked = blocked
        self.stop_requested = threading.Event()
        self.paused = threading.Event()
        self._resume = threading.Condition()
        self.busy_lock = threading.Lock()
        self.busy = 0
        self.threads = [ToeThread(self, serial) for serial in range(1, size + 1)]

    def start(self) -> None:
        """Start every thread."""
        for thread in self.threads:
            thread.start()

    def pause(self) -> None:
        """Threads take no new URI until :meth:`unpause`; URIs in process finish.

        Set under ``busy_lock``, so once this returns every thread that will fetch before
        the unpause is already counted in ``busy``.
        """
        with self.busy_lock:
            self.paused.set()
        self._wake_idle()

    def admit(self) -> bool:
        """Count the calling thread busy unless the pool is paused (a stop admits anyway)."""
        with self.busy_lock:
            if self.paused.is_set() and not self.stop_requested.is_set():
                return False
            self.busy += 1
            return True

    def unpause(self) -> None:
        """Let threads take URIs again."""
        self.paused.clear()
        with self._resume:
            self._resume.notify_all()

    def unpaused_or_stopped(self, timeout_s: float) -> None:
        """Block a paused thread until unpause, stop or timeout."""
        with self._resume:
            if self.paused.is_set() and not self.stop_requested.is_set():
                self._resume.wait(timeout_s)

    def request_stop(self) -> None:
        """Threads finish their current URI and exit."""
        self.stop_requested.set()
        with self._resume:
            self._resume.notify_all()
        self._wake_idle()

    def _wake_idle(self) -> None:
        """Wake the threads waiting in ``frontier.next()`` (if the frontier can)."""
        wake = getattr(self.frontier, "wake_waiters", None)
        if wake is not None:
            wake()

    def busy_threads(self) -> int:
        """Threads processing a URI right now."""
        return self.busy

    def step_counts(self) -> dict[str, int]:
        """How many threads are at each step (``ABOUT_TO_GET_URI``, ``PAUSED``, ...)."""
        return dict(Counter(t.step for t in self.threads))

    def join(self, timeout_s: float | None = None) -> bool:
        """Wait for all threads to exit; True if they all did within ``timeout_s``."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        for thread in self.threads:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            thread.join(remaining)
        return not any(t.is_alive() for t in self.threads)
