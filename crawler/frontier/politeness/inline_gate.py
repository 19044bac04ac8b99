"""InlineGate: the server gate for fetches made outside the frontier (a browser page's requests).

The frontier enforces each server's politeness — ``host_max_connections``, ``host_min_interval_ms``,
Retry-After and bandwidth holds, the adaptive pace (:mod:`~crawler.frontier.politeness.server_gate`,
:mod:`~crawler.frontier.politeness.server_pace`) — when it hands URIs out. A browser page's
sub-resources are fetched inline by the page's visit, never handed out; they pass the same gate
here:

* :meth:`InlineGate.visit` once per page: which server slot the page itself holds (its ToeThread
  got it with the page and keeps it until ``finished()``);
* :meth:`InlineGate.enter` before each fetch: waits, until ``deadline_s`` (``time.monotonic()``),
  for the server to admit a fetch start; None if it did not in time;
* :meth:`InlineGate.leave` after it, whatever happened: frees the slot and feeds the fetch's
  answer to the server's pace, its ``Retry-After`` (429/503, up to
  ``respect_retry_after_up_to_s``) and bandwidth debt to the server's holds, exactly as a
  fetch the frontier handed out would (:func:`server_hints`).

The page's own slot is lent to its sub-resources of the same server, one at a time: with
``host_max_connections: 1`` they take turns on it instead of waiting for a second slot the page
itself holds (a deadlock until the page's budget); a sub-resource of that server that finds the
page's slot lent takes a slot of its own if the cap allows one. A fetch on the page's slot still
waits for the server's pace and holds
(:meth:`~crawler.frontier.politeness.server_gate.ServerGate.try_pass`).

The queue's per-URI politeness delay (``delay_factor`` x duration, ``min_delay_ms``) is *not*
applied between the sub-resources of one page: a page load is one visit, as in a reader's
browser; the page's queue waits after the whole visit instead.

:class:`LocalInlineGate` serves a :class:`~crawler.frontier.WorkQueueFrontier`: it runs under
the frontier's lock, and a slot it frees wakes queues parked on the server. A waiter is woken at
once by an inline fetch leaving, and re-checks every :data:`POLL_S` for slots freed by the
frontier's own fetches (so ``finished()``, the HTTP path, is unchanged). The Redis frontier's
twin is :class:`~crawler.frontier.redis.redis_inline_gate.RedisInlineGate`.

Thread-safety: every method may be called from any thread.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from crawler.frontier.politeness.politeness import bandwidth_delay_ms, retry_after_s
from crawler.frontier.rotation.queue_release import fetch_answer
from crawler.frontier.rotation.scheduler import gated_server

if TYPE_CHECKING:
    from crawler.clock import Clock
    from crawler.curi import CrawlURI
    from crawler.frontier.rotation.scheduler import QueueScheduler
    from crawler.order.schema import PolitenessConfig

POLL_S = 0.05
"""How often a waiter re-checks a server whose slots the frontier's own fetches hold."""
_BACKOFF_STATUSES = frozenset({429, 503})


@dataclass(slots=True)
class InlineVisit:
    """One page's visit: the server whose slot the page holds (None: none) and whether one of
    its sub-resources is using that slot now. Changed only by its gate."""

    server: str | None
    lent: bool = False


@dataclass(slots=True)
class InlinePass:
    """A fetch start admitted by :meth:`InlineGate.enter`; give it back to :meth:`InlineGate.leave`.

    ``server`` is None for a URI whose fetch contacts no server; ``own``: under the page's slot;
    ``token`` names the slot in a shared store."""

    visit: InlineVisit
    server: str | None
    own: bool = False
    token: str = ""


class InlineGate(Protocol):
    """The server gate for fetches outside the frontier (see the module docstring)."""

    def visit(self, page: CrawlURI) -> InlineVisit:
        """The visit of ``page``, a URI the frontier handed out and that is still in process."""
        ...

    def enter(self, visit: InlineVisit, url: str, deadline_s: float) -> InlinePass | None:
        """Wait until ``url``'s server admits a fetch start, at most until ``deadline_s``
        (``time.monotonic()``); None if it did not (or the frontier closed)."""
        ...

    def leave(self, ticket: InlinePass, curi: CrawlURI) -> None:
        """The fetch of ``curi`` admitted as ``ticket`` is over (fetched or not)."""
        ...


def server_hints(curi: CrawlURI, politeness: PolitenessConfig, now_s: float) -> tuple[float, float]:
    """``(back-off s, hold s)`` that ``curi``'s answer puts on its server, as the
    DispositionProcessor's hints do for a queued URI: a 429/503 ``Retry-After`` up to
    ``respect_retry_after_up_to_s``, and the bandwidth debt of its bytes."""
    backoff_s = 0.0
    cap_s = politeness.respect_retry_after_up_to_s
    if curi.status in _BACKOFF_STATUSES and cap_s > 0:
        backoff_s = retry_after_s(curi.header("Retry-After"), now_s, cap_s)
    return backoff_s, bandwidth_delay_ms(curi.content_size, politeness) / 1000.0


class LocalInlineGate:
    """:class:`InlineGate` over a work-queue frontier's server gate (see the module docstring).

    ``lock`` is the frontier's lock (its Condition's); ``page_server(page)``, called with it
    held, is the server whose slot the frontier gave ``page`` (None if none, or not in process).
    """

    def __init__(
        self,
        lock: threading.Lock,
        sched: QueueScheduler,
        clock: Clock,
        politeness: PolitenessConfig,
        page_server: Callable[[CrawlURI], str | None],
    ) -> None:
        self._lock = lock
        self._wake = threading.Condition(lock)
        self._sched = sched
        self._gate = sched.gate
        self._clock = clock
        self._politeness = politeness
        self._page_server = page_server
        self._closed = False

    def visit(self, page: CrawlURI) -> InlineVisit:
        with self._lock:
            return InlineVisit(self._page_server(page))

    def enter(self, visit: InlineVisit, url: str, deadline_s: float) -> InlinePass | None:
        server = gated_server(url)
        if server is None:
            return InlinePass(visit, None)
        gate, clock = self._gate, self._clock
        with self._wake:
            while not self._closed:
                now = clock.monotonic()
                own = server == visit.server and not visit.lent
                wait_s = gate.try_pass(server, now) if own else gate.try_start(server, now)
                if wait_s is None:
                    if own:
                        visit.lent = True
                    return InlinePass(visit, server, own)
                left_s = deadline_s - time.monotonic()
                if left_s <= 0:
                    return None
                pause_s = POLL_S if wait_s == math.inf else max(wait_s - now, 0.001)
                self._wake.wait(min(left_s, pause_s))
        return None

    def leave(self, ticket: InlinePass, curi: CrawlURI) -> None:
        server = ticket.server
        if server is None:
            return
        clock = self._clock
        backoff_s, hold_s = server_hints(curi, self._politeness, clock.time())
        answer = fetch_answer(curi)
        gate = self._gate
        with self._wake:
            now = clock.monotonic()
            if ticket.own:
                ticket.visit.lent = False
            else:
                gate.finish(server, now)
            if answer is not None:
                status, start_ms, duration_ms = answer
                started_s = now - (clock.time() - start_ms / 1000.0)
                duration_s = duration_ms / 1000.0 if duration_ms >= 0 else -1.0
                gate.observe(server, now, started_s, status, duration_s)
            gate.hold(server, now, backoff_s, hold_s)
            self._sched.service(server, now)  # queues parked on the server may start now
            self._wake.notify_all()

    def close(self) -> None:
        """The frontier is closing: waiters give up (``enter`` returns None)."""
        with self._wake:
            self._closed = True
            self._wake.notify_all()
