"""QueueRelease: a work queue given back after its URI's fetch, and the wake-ups that causes.

When ``finished()`` takes a URI back (retried or final), :meth:`QueueRelease.release` frees its
queue (no URI out; the URI leaves the frontier's in-flight map), releases the queue's server slot
(applying a Retry-After back-off and bandwidth hold to the server, and the fetch's answer to
the server's adaptive pace) and snoozes the queue for its
delay. The thread in ``finished()`` calls ``next()`` right after, so the first queue this makes
ready is left for it (no wake-up, no thread hand-off); the wake-ups of any others go out at the
end. Everywhere else each queue the scheduler makes ready wakes one thread blocked in ``next()``
(:meth:`QueueRelease.notify`, the scheduler's callback).

Heritrix counterpart: the queue bookkeeping of ``WorkQueueFrontier.finished`` (``snoozeQueue``,
``reenqueueQueue``). Not thread-safe by itself: every method is called with the frontier's lock
(the Condition given) held.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawler.frontier.server_pace import timing_counts

if TYPE_CHECKING:
    import threading

    from crawler.clock import Clock
    from crawler.curi import CrawlURI
    from crawler.frontier.scheduler import QueueScheduler
    from crawler.frontier.workqueue import WorkQueue


def fetch_answer(curi: CrawlURI) -> tuple[int, int, int] | None:
    """``(status, fetch_start_ms, fetch_duration_ms)`` of a URI that was fetched, else None.

    The duration is -1 (says nothing of the server's response time) when the body was large or
    cut short: see :func:`~crawler.frontier.server_pace.timing_counts`."""
    if curi.fetch_start_ms <= 0:
        return None
    duration_ms = curi.fetch_duration_ms if timing_counts(curi) else -1
    return curi.status, curi.fetch_start_ms, duration_ms


class QueueRelease:
    """Gives queues back to the scheduler (see the module docstring).

    ``sched`` is set by the frontier once its scheduler is built around :meth:`notify`.
    """

    def __init__(
        self, cond: threading.Condition, clock: Clock, in_flight: dict[str, WorkQueue]
    ) -> None:
        self._cond = cond
        self._clock = clock
        self._in_flight = in_flight
        self.sched: QueueScheduler
        self._quiet = False
        self._suppressed = 0

    def notify(self) -> None:
        """Wake one thread blocked in ``next()``; within :meth:`release`, count it instead."""
        if self._quiet:
            self._suppressed += 1
        else:
            self._cond.notify()

    def owner(self, curi: CrawlURI) -> WorkQueue:
        """The queue that handed out ``curi``; ``ValueError`` if none did or it is finished."""
        q = self.sched.queues.get(curi.queue_key)
        if q is None or q.current is not curi:
            raise ValueError(f"{curi!r} was not handed out by this frontier or is already finished")
        return q

    def release(
        self,
        q: WorkQueue,
        curi: CrawlURI,
        backoff_s: float,
        hold_s: float,
        snooze_s: float,
        fetched: tuple[int, int, int] | None = None,
    ) -> None:
        """Free ``q`` and its server slot, apply server holds, snooze ``q`` for ``snooze_s``.

        ``fetched`` is :func:`fetch_answer` of the URI taken before a retry reset it."""
        self._quiet, self._suppressed = True, 0
        clock = self._clock
        now = clock.monotonic()
        q.current = None
        q.current_key = 0  # a 64-bit int per queue otherwise, kept for nothing
        q.current_value = b""
        q.last_dequeue_s = wall_s = clock.time()
        if self._in_flight.get(curi.uri) is q:
            del self._in_flight[curi.uri]
        seen = None
        if fetched is not None:
            status, start_ms, duration_ms = fetched
            started_s = now - (wall_s - start_ms / 1000.0)
            seen = (status, started_s, duration_ms / 1000.0 if duration_ms >= 0 else -1.0)
        sched = self.sched
        sched.release_server(q, curi.uri, now, backoff_s, hold_s, seen)
        sched.snooze(q, now + snooze_s, now)
        self._quiet = False
        if self._suppressed > 1:
            self._cond.notify(self._suppressed - 1)
        self._suppressed = 0
