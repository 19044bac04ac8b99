"""RedisInlineGate: the server gate for fetches outside the frontier, shared through Redis.

The Redis twin of :class:`~crawler.frontier.politeness.inline_gate.LocalInlineGate` (same contract,
same lending of the page's own slot, no per-URI politeness delay between a page's sub-resources). A
server's cap, next-start time and adaptive pace live in its Redis hash (``T v:<srv>``, see
:mod:`~crawler.frontier.redis.redis_scripts`), where CLAIM and FINISH keep them for the queues;
:data:`~crawler.frontier.redis.redis_scripts.INLINE_ENTER` takes a slot there (counted in the
same ``a`` as leased queues, so the cap holds across every worker and both kinds of fetch) and
:data:`~crawler.frontier.redis.redis_scripts.INLINE_LEAVE` gives it back, feeds the answer to
the server's pace and its Retry-After/bandwidth holds, and wakes queues parked on the server.

A slot not given back (a worker killed mid-fetch) is taken back after the store's ``lease_s``,
like a lease. A waiter is woken at once by an inline fetch of this worker leaving the same
server (only the waiters for that server: each asks Redis again when woken) and asks Redis
again every :data:`POLL_S` otherwise (other workers' fetches notify nobody here); a wait for
the server's next start sleeps exactly that long.

Thread-safety: any thread; the page's lent slot and the waiters per server are under this
gate's own lock, the page's in-flight entry is read under the frontier's lock.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from crawler.frontier.politeness.inline_gate import InlinePass, InlineVisit, server_hints
from crawler.frontier.rotation.scheduler import gated_server

if TYPE_CHECKING:
    from crawler.clock import Clock
    from crawler.curi import CrawlURI
    from crawler.frontier.redis.redis_lease_keeper import InFlight
    from crawler.frontier.redis.redis_store import RedisQueueStore
    from crawler.order.schema import PolitenessConfig

POLL_S = 0.1
"""How often a waiter for a free slot asks Redis again."""


class RedisInlineGate:
    """:class:`~crawler.frontier.politeness.inline_gate.InlineGate` over the shared frontier's
    server state.

    ``pace_args(curi, server)`` gives FINISH's pace arguments for an answer (the frontier's).
    """

    def __init__(
        self,
        store: RedisQueueStore,
        lock: threading.Lock,
        in_flight: dict[str, InFlight],
        clock: Clock,
        politeness: PolitenessConfig,
        pace_args: Callable[[CrawlURI, str], tuple[int, int, int]],
    ) -> None:
        self._store = store
        self._lock = lock
        self._in_flight = in_flight
        self._clock = clock
        self._politeness = politeness
        self._max_conn = politeness.host_max_connections
        self._interval_ms = politeness.host_min_interval_ms
        self._pace_args = pace_args
        self._mutex = threading.Lock()
        self._waits: dict[str, tuple[threading.Condition, int]] = {}
        """Per server: the condition its waiters sleep on and how many sleep (under _mutex)."""
        self._tokens = itertools.count(1)
        self._closed = False

    def visit(self, page: CrawlURI) -> InlineVisit:
        with self._lock:
            entry = self._in_flight.get(page.uri)
        return InlineVisit((entry.server or None) if entry is not None else None)

    def enter(self, visit: InlineVisit, url: str, deadline_s: float) -> InlinePass | None:
        server = gated_server(url)
        if server is None:
            return InlinePass(visit, None)
        store = self._store
        with self._mutex:
            token = f"{store.worker}:{next(self._tokens)}"
        while True:
            with self._mutex:
                if self._closed:
                    return None
                own = server == visit.server and not visit.lent
                if own:
                    visit.lent = True
            try:
                wait_ms = store.inline_enter(
                    server, token, own, self._max_conn, self._interval_ms, store.lease_ms
                )
            except BaseException:
                if own:
                    self._give_back(visit)
                raise
            if wait_ms == 0:
                return InlinePass(visit, server, own, token)
            with self._mutex:
                if own:
                    visit.lent = False
                left_s = deadline_s - time.monotonic()
                if left_s <= 0:
                    return None
                pause_s = POLL_S if wait_ms < 0 else wait_ms / 1000.0
                self._wait(server, min(left_s, pause_s))

    def _wait(self, server: str, timeout_s: float) -> None:
        """Sleep (``_mutex`` held) until a fetch of ``server`` here leaves or ``timeout_s``."""
        cond, n = self._waits.get(server) or (threading.Condition(self._mutex), 0)
        self._waits[server] = (cond, n + 1)
        try:
            cond.wait(timeout_s)
        finally:
            cond, n = self._waits[server]
            if n > 1:
                self._waits[server] = (cond, n - 1)
            else:
                del self._waits[server]

    def _wake(self, server: str | None) -> None:
        """Wake the waiters for ``server`` (``_mutex`` held)."""
        entry = self._waits.get(server) if server is not None else None
        if entry is not None:
            entry[0].notify_all()

    def leave(self, ticket: InlinePass, curi: CrawlURI) -> None:
        server = ticket.server
        if server is None:
            return
        try:
            backoff_s, hold_s = server_hints(curi, self._politeness, self._clock.time())
            self._store.inline_leave(
                server,
                ticket.token,
                ticket.own,
                self._max_conn,
                self._pace_args(curi, server),
                int(backoff_s * 1000),
                int(hold_s * 1000),
            )
        finally:
            if ticket.own:
                self._give_back(ticket.visit)
            else:
                with self._mutex:
                    self._wake(server)

    def _give_back(self, visit: InlineVisit) -> None:
        with self._mutex:
            visit.lent = False
            self._wake(visit.server)

    def close(self) -> None:
        """The frontier is closing: waiters give up (``enter`` returns None)."""
        with self._mutex:
            self._closed = True
            for cond, _ in self._waits.values():
                cond.notify_all()
