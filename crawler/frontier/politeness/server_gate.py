"""ServerGate: politeness per server (host:port) that holds across queues.

Heritrix's politeness is per queue; when a queue-assignment policy spreads one site over many
queues (``parallel_queues``, hash policies) the site sees one connection per queue (Heritrix
issue #754). The gate caps what one server sees whatever the policy:

* ``max_connections`` — concurrent fetches (0 = unlimited);
* ``min_interval_s`` — least time between two fetch starts;
* holds — the server may not be contacted before a time: a 503/429 ``Retry-After`` back-off
  or the bandwidth cap's debt (cumulative, so the bytes of concurrent fetches add up):
  :meth:`hold`;
* the adaptive pace — a gap between fetch starts that the server's own answers set
  (:meth:`observe`, :class:`~crawler.frontier.politeness.server_pace.ServerPace`): the longer of it
  and ``min_interval_s`` applies.

Fetches made outside the frontier (a browser page's sub-resources) pass the same gate through
:class:`~crawler.frontier.politeness.inline_gate.LocalInlineGate`: :meth:`try_start`/:meth:`finish`
for a slot of their own, :meth:`try_pass` for one under the page's slot.

A queue whose head URI is refused is *parked* on the server (FIFO) rather than polled: a
finished fetch (:meth:`finish`) or the server's timer (the time :meth:`wakeable` asks for)
wakes at most as many parked queues as could start, so blocked queues never spin.

The admission rule is :mod:`crawler.frontier.policy.server_admission`'s, which the Redis
frontier's scripts run on the same numbers kept per server in Redis (active count, next-start
time, a parked list). Not thread-safe: the frontier calls it under its lock.
Clock: monotonic seconds, as given by the caller.
"""

from __future__ import annotations

from collections import deque
from typing import Generic, TypeVar

from crawler.frontier.policy.server_admission import admission, held_start, start_spacing
from crawler.frontier.politeness.server_pace import PaceState, ServerPace

T = TypeVar("T")
_SWEEP_EVERY = 10_000


class _Server(Generic[T]):
    __slots__ = ("active", "not_before_s", "pace", "pending_wakes", "timer_s", "waiting")

    def __init__(self) -> None:
        self.active = 0
        self.pace: PaceState | None = None
        self.not_before_s = 0.0
        self.pending_wakes = 0
        self.timer_s = 0.0
        self.waiting: deque[T] = deque()


class ServerGate(Generic[T]):
    """Admission of fetch starts per server key; parks waiters of type ``T`` (work queues)."""

    def __init__(
        self,
        max_connections: int = 0,
        min_interval_s: float = 0.0,
        pace: ServerPace | None = None,
    ) -> None:
        self.max_connections = max_connections
        self.min_interval_s = min_interval_s
        self.pace = pace if pace is not None and pace.enabled else None
        self._servers: dict[str, _Server[T]] = {}
        self._finishes = 0

    def _server(self, key: str) -> _Server[T]:
        srv = self._servers.get(key)
        if srv is None:
            srv = self._servers[key] = _Server()
        return srv

    def try_start(self, key: str, now_s: float) -> float | None:
        """Admit one fetch start (None), or say until when it must wait (inf: for a slot)."""
        srv = self._server(key)
        wait = admission(srv.active, self.max_connections, now_s, srv.not_before_s)
        if wait is not None:
            return wait
        srv.active += 1
        pace = srv.pace
        interval_s = start_spacing(self.min_interval_s, pace.gap if pace is not None else 0.0)
        if interval_s:
            srv.not_before_s = now_s + interval_s
        return None

    def try_pass(self, key: str, now_s: float) -> float | None:
        """Admit a fetch start under a slot its caller already holds (None), or say until when
        it must wait: only the server's times apply (minimum interval, pace, holds), no slot
        is taken. For a browser page's sub-resources on the page's own slot."""
        srv = self._server(key)
        wait = admission(0, 0, now_s, srv.not_before_s)
        if wait is not None:
            return wait
        pace = srv.pace
        interval_s = start_spacing(self.min_interval_s, pace.gap if pace is not None else 0.0)
        if interval_s:
            srv.not_before_s = now_s + interval_s
        return None

    def finish(self, key: str, now_s: float) -> None:
        """A fetch admitted by :meth:`try_start` is over."""
        srv = self._servers.get(key)
        if srv is not None and srv.active > 0:
            srv.active -= 1
        self._finishes += 1
        if self._finishes % _SWEEP_EVERY == 0:
            self._sweep(now_s)

    def observe(
        self, key: str, now_s: float, started_s: float, status: int, duration_s: float
    ) -> bool:
        """The answer to a fetch to ``key`` started at ``started_s``: adapt the server's pace
        (no-op without a pace). True if its gap grew."""
        if self.pace is None:
            return False
        srv = self._server(key)
        st = srv.pace
        if st is None:
            st = srv.pace = PaceState()
        hold_s = self.pace.observe(st, now_s, started_s, status, duration_s)
        if not hold_s:
            return False
        srv.not_before_s = max(srv.not_before_s, now_s + hold_s)
        return True

    def gap_s(self, key: str) -> float:
        """The adaptive gap between fetch starts to ``key`` now (0: none)."""
        srv = self._servers.get(key)
        return srv.pace.gap if srv is not None and srv.pace is not None else 0.0

    def paced(self, limit: int) -> list[tuple[str, float]]:
        """``(server, gap_s)`` of the servers whose pace holds them back most, longest first."""
        rows = [(k, s.pace.gap) for k, s in self._servers.items() if s.pace and s.pace.gap]
        rows.sort(key=lambda r: (-r[1], r[0]))
        return rows[:limit]

    def hold(self, key: str, now_s: float, backoff_s: float, hold_s: float) -> None:
        """No fetch starts before ``now_s + backoff_s`` (Retry-After); the next start is pushed
        ``hold_s`` further (bandwidth debt accumulates): :func:`held_start`."""
        if backoff_s > 0 or hold_s > 0:
            srv = self._server(key)
            srv.not_before_s = held_start(srv.not_before_s, now_s, backoff_s, hold_s)

    def park(self, key: str, waiter: T) -> None:
        """``waiter`` waits for this server; :meth:`wakeable` hands it back."""
        self._server(key).waiting.append(waiter)

    def woken_attempted(self, key: str) -> None:
        """A waiter handed back by :meth:`wakeable` has tried again (admitted or not)."""
        srv = self._servers.get(key)
        if srv is not None and srv.pending_wakes > 0:
            srv.pending_wakes -= 1

    def wakeable(self, key: str, now_s: float) -> tuple[list[T], float | None]:
        """Parked waiters that may try now, and the time a timer should call again (or None).

        Wakes no more waiters than could start: free slots minus those already woken, and one
        at a time while a minimum interval or hold applies.
        """
        srv = self._servers.get(key)
        if srv is None or not srv.waiting:
            return [], None
        slots = (
            self.max_connections - srv.active - srv.pending_wakes
            if self.max_connections
            else len(srv.waiting)
        )
        if slots <= 0:
            return [], None
        if now_s < srv.not_before_s:
            if srv.timer_s and srv.timer_s <= srv.not_before_s:
                return [], None
            srv.timer_s = srv.not_before_s
            return [], srv.not_before_s
        if self.min_interval_s or (srv.pace is not None and srv.pace.gap):
            slots = min(slots, 1 - srv.pending_wakes)
        woken = [srv.waiting.popleft() for _ in range(min(slots, len(srv.waiting)))]
        srv.pending_wakes += len(woken)
        return woken, None

    def timer_fired(self, key: str, at_s: float) -> bool:
        """The timer asked for by :meth:`wakeable` went off; False if it was superseded."""
        srv = self._servers.get(key)
        if srv is None or srv.timer_s != at_s:
            return False
        srv.timer_s = 0.0
        return True

    def active(self, key: str) -> int:
        """Fetches in progress to ``key``."""
        srv = self._servers.get(key)
        return srv.active if srv is not None else 0

    def busiest(self, limit: int) -> list[tuple[str, int, int]]:
        """``(server, active, parked)`` of the servers with most fetches or waiters."""
        rows = [(k, s.active, len(s.waiting)) for k, s in self._servers.items()]
        rows.sort(key=lambda r: (-r[1] - r[2], r[0]))
        return [r for r in rows[:limit] if r[1] or r[2]]

    def held(self) -> tuple[int, int]:
        """``(servers, queues)``: the servers the cap holds now (every connection taken and
        queues parked on them) and the queues parked on those. O(servers known)."""
        cap = self.max_connections
        if not cap:
            return 0, 0
        servers = queues = 0
        for s in self._servers.values():
            if s.waiting and s.active >= cap:
                servers += 1
                queues += len(s.waiting)
        return servers, queues

    def _sweep(self, now_s: float) -> None:
        idle = [
            k
            for k, s in self._servers.items()
            if not s.active
            and not s.waiting
            and not s.pending_wakes
            and not s.timer_s
            and s.not_before_s <= now_s
            and (s.pace is None or not s.pace.gap)
        ]
        for k in idle:
            del self._servers[k]
