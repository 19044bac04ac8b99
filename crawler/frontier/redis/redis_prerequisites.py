"""LocalPrerequisites: the prerequisites a worker keeps to itself, and the URIs waiting on them.

A prerequisite (``P`` hop: dns:, robots.txt) of a URI in flight here stays in this worker: its
result lives in this worker's caches (and is shared with the other workers through
:mod:`crawler.server_facts`, so another worker does not fetch it again). Such a URI never enters
Redis: it waits here with a due time (0 when scheduled, a retry's delay after a retryable
status), is handed out before anything from the shared frontier, and its final disposition goes
to ``on_final`` like any other. Its via, deferred (-50) meanwhile, is held here with its queue
still leased (as Heritrix keeps the queue busy) and comes back, first in line, once none of its
prerequisites is pending — and the politeness delay of the last one
(``curi.politeness_delay_ms``, ``min_delay_s`` if unset) has passed since the end of its fetch,
as the queue would have waited in Redis: a host's robots.txt and its first page are not fetched
back to back.

Thread-safety: shares the frontier's lock; every method but :meth:`finish` is called with the
lock held. :meth:`finish` takes it and calls ``on_final`` without it. An entry made due calls
``on_due(due_s)`` (lock held): the frontier wakes a waiting thread if none waits for that time
yet (:class:`~crawler.frontier.rotation.wait_timer.WaitTimer`).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from crawler.curi import CrawlURI
from crawler.frontier.politeness.politeness import BACKOFF_MS_KEY, SERVER_HOLD_MS_KEY
from crawler.frontier.retry.retry_policy import DEFER, WAIT
from crawler.frontier.rotation.queue_release import fetch_end_ms

if TYPE_CHECKING:
    from crawler.frontier.redis.redis_lease_keeper import InFlight
    from crawler.frontier.retry.retry_policy import RetryPolicy
    from crawler.frontier.retry.retry_watch import RetryWatch


class LocalPrerequisites:
    """This worker's own prerequisites and the vias held for them (see the module docstring)."""

    def __init__(
        self,
        wake: threading.Condition,
        in_flight: dict[str, InFlight],
        on_due: Callable[[float], None],
        logger: Any,
        *,
        retry: RetryPolicy,
        on_final: Callable[[CrawlURI], None] | None,
        min_delay_s: float = 0.0,
        watch: RetryWatch | None = None,
    ) -> None:
        self._wake = wake
        self._on_due = on_due
        self._watch = watch
        self._min_delay_s = min_delay_s
        self._in_flight = in_flight
        self._logger = logger
        self._retry = retry
        self._on_final = on_final
        self._due: list[tuple[float, CrawlURI]] = []
        self._held: dict[str, CrawlURI] = {}
        self.handed_out: dict[int, str] = {}
        """``id()`` of each prerequisite being fetched here → its via's URI; ``finished`` pops
        its URI's entry (lock held) to tell a local prerequisite from a leased URI."""
        self._handed_out_s: dict[int, float] = {}

    # ------------------------------------------------------------ called with the lock held
    def add(self, curi: CrawlURI, due_s: float = 0.0) -> None:
        """Hand ``curi`` out here once ``time.monotonic()`` reaches ``due_s``."""
        self._due.append((due_s, curi))
        self._on_due(due_s)

    def take(self) -> tuple[CrawlURI | None, float]:
        """A due prerequisite (or held via) and 0.0, or None and when (``time.monotonic()``)
        the next one is due (inf: none is queued)."""
        if not self._due:
            return None, math.inf
        now = time.monotonic()
        for i, (due_s, curi) in enumerate(self._due):
            if due_s <= now:
                del self._due[i]
                if curi.uri not in self._in_flight:  # not a via coming back
                    self.handed_out[id(curi)] = curi.via or ""
                    self._handed_out_s[id(curi)] = now
                return curi, 0.0
        return None, self.next_due_s()

    def next_due_s(self) -> float:
        """When (``time.monotonic()``) the first entry queued here is due; inf if none is."""
        return min((due for due, _ in self._due), default=math.inf)

    def pending(self, via_uri: str) -> bool:
        """Whether a prerequisite of ``via_uri`` is queued or being fetched here."""
        return via_uri in self.handed_out.values() or any(c.via == via_uri for _, c in self._due)

    def defer(self, via: CrawlURI) -> bool:
        """Hold ``via``, deferred (-50), here with its queue still leased until its prerequisite
        pending here is done (as Heritrix keeps the queue busy): no other worker takes its
        queue's next URI meanwhile. False (not held) if no prerequisite of it is pending here
        or it has no deferral left (:class:`~crawler.frontier.retry.retry_policy.RetryPolicy`)."""
        if not self.pending(via.uri) or not self._retry.verdict(via):
            return False
        self._retry.take(via)  # a deferral (or a wait): counted as such, not as a try
        via.reset_for_retry()
        self._held[via.uri] = via
        return True

    def busy(self) -> bool:
        """Whether any prerequisite is queued or being fetched here."""
        return bool(self._due or self.handed_out)

    # ------------------------------------------------------------ any thread
    def finish(self, curi: CrawlURI, via_uri: str) -> bool:
        """``finished`` of a prerequisite fetched here: retry it here (False), or record its
        final disposition, release its via if it was the last one pending, and call
        ``on_final`` (True)."""
        curi.data.pop(SERVER_HOLD_MS_KEY, None)
        with self._wake:
            handed_out_s = self._handed_out_s.pop(id(curi), 0.0)
        verdict = self._retry.take(curi)
        if verdict:
            backoff_s = float(curi.data.get(BACKOFF_MS_KEY, 0) or 0) / 1000.0
            delay_s = max(0.0, curi.retry_delay_s, backoff_s)
            due_s = time.monotonic() + delay_s
            curi.data.pop(BACKOFF_MS_KEY, None)
            if self._watch is not None and verdict not in (WAIT, DEFER):
                self._watch.noted(curi, delay_s, time.time())
            curi.reset_for_retry()
            with self._wake:
                self.add(curi, due_s)
            return False
        curi.data.pop(BACKOFF_MS_KEY, None)
        if self._watch is not None:
            self._watch.done(curi.uri)
        due_s = self._polite_due_s(curi, handed_out_s)
        with self._wake:
            via = self._held.get(via_uri)
            if via is not None and not self.pending(via_uri):
                del self._held[via_uri]
                self.add(via, due_s)
        try:
            if self._on_final is not None:
                self._on_final(curi)
        except Exception:
            self._logger.exception("frontier_on_final_failed", uri=curi.uri)
        return True

    def _polite_due_s(self, curi: CrawlURI, handed_out_s: float) -> float:
        """When (``time.monotonic()``) the via of the fetched prerequisite ``curi`` may go: its
        politeness delay after the end of the fetch (kept between its hand-out and now), or
        now if it was not fetched."""
        wall_s = time.time()  # first: a pause before the next read only lengthens the wait
        now = time.monotonic()
        end_ms = fetch_end_ms(curi)
        if not end_ms:
            return now
        delay_ms = curi.politeness_delay_ms
        delay_s = delay_ms / 1000.0 if delay_ms >= 0 else self._min_delay_s
        end_s = min(now, max(handed_out_s, now - (wall_s - end_ms / 1000.0)))
        return end_s + delay_s
