"""QueueRelease: a work queue given back after its URI's fetch, and the wake-ups that causes.

When ``finished()`` takes a URI back (retried or final), :meth:`QueueRelease.release` frees its
queue (no URI out; the URI leaves the frontier's in-flight map), releases the queue's server slot
(applying a Retry-After back-off and bandwidth hold to the server, and the fetch's answer to
the server's adaptive pace) and snoozes the queue: its politeness delay counts from the end of
the fetch (not from the end of the URI's processing, which extraction and writing lengthen by a
varying amount), a retry delay or back-off from now. The thread in ``finished()`` calls
``next()`` right after, so the first queue this makes ready is left for it (no wake-up, no
thread hand-off); the wake-ups of any others go out at the end. Everywhere else each queue the
scheduler makes ready wakes one thread blocked in ``next()`` (:meth:`QueueRelease.notify`, the
scheduler's callback).

Heritrix counterpart: the queue bookkeeping of ``WorkQueueFrontier.finished`` (``snoozeQueue``,
``reenqueueQueue``); Heritrix snoozes for the delay from the end of processing. Not thread-safe
by itself: every method is called with the frontier's lock (the Condition given) held.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawler.frontier.politeness.server_pace import timing_counts

if TYPE_CHECKING:
    import threading

    from crawler.clock import Clock
    from crawler.curi import CrawlURI
    from crawler.frontier.rotation.scheduler import QueueScheduler
    from crawler.frontier.workqueue import WorkQueue


def fetch_answer(curi: CrawlURI) -> tuple[int, int, int] | None:
    """``(status, fetch_start_ms, fetch_duration_ms)`` of a URI that was fetched, else None.

    The duration is -1 (says nothing of the server's response time) when the body was large or
    cut short: see :func:`~crawler.frontier.politeness.server_pace.timing_counts`."""
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
        wait_s: float,
        fetched: tuple[int, int, int] | None = None,
        polite_s: float = 0.0,
        fetch_end_ms: int = 0,
    ) -> None:
        """Free ``q`` and its server slot, apply server holds, snooze ``q``.

        ``q`` may hand out its next URI at the later of ``wait_s`` from now (a retry delay or a
        back-off) and ``polite_s`` after the end of the fetch, ``fetch_end_ms`` (wall-clock
        epoch ms; 0 when nothing was fetched: counted from now) — at once if both are past, as
        when processing the URI outlasted its politeness delay. The wall-clock end is turned
        into the monotonic clock by its age now, and kept between the time ``q`` handed the URI
        out and now, so a wall clock that jumps can neither shorten the wait below a fetch that
        ended just now nor lengthen it past one that ended at hand-out.
        ``fetched`` is :func:`fetch_answer` of the URI taken before a retry reset it."""
        self._quiet, self._suppressed = True, 0
        clock = self._clock
        # Wall clock first: a pause between the two reads makes wall-clock ages look shorter,
        # so the fetch end can only seem later (the wait longer), never earlier.
        q.last_dequeue_s = wall_s = clock.time()
        now = clock.monotonic()
        q.current = None
        q.current_key = 0  # a 64-bit int per queue otherwise, kept for nothing
        q.current_value = b""
        if self._in_flight.get(curi.uri) is q:
            del self._in_flight[curi.uri]
        seen = None
        sched = self.sched
        if fetched is not None:
            status, start_ms, duration_ms = fetched
            started_s = now - (wall_s - start_ms / 1000.0)
            seen = (status, started_s, duration_ms / 1000.0 if duration_ms >= 0 else -1.0)
            sched.fetched(q, min(now, max(q.handed_out_s, started_s)), now)
        sched.release_server(q, curi.uri, now, backoff_s, hold_s, seen)
        end_s = now
        if fetch_end_ms > 0:
            end_s = min(now, max(q.handed_out_s, now - (wall_s - fetch_end_ms / 1000.0)))
        polite_until = end_s + polite_s
        until = max(now + wait_s, polite_until)
        sched.served(q, now, until)
        # Only a politeness wait says when the queue is due for a thread (retries are not).
        sched.snooze(q, until, now, until - end_s if polite_s > 0 else 0.0)
        self._quiet = False
        if self._suppressed > 1:
            self._cond.notify(self._suppressed - 1)
        self._suppressed = 0


def fetch_end_ms(curi: CrawlURI) -> int:
    """Wall-clock epoch ms when ``curi``'s fetch ended, or 0 if it was not fetched.

    Rounded up: start and duration are each whole ms rounded down, so the end lies up to 2 ms
    after their sum (which would let the next fetch start up to 2 ms early)."""
    start_ms, duration_ms = curi.fetch_start_ms, curi.fetch_duration_ms
    if start_ms <= 0 or duration_ms < 0:
        return 0
    return start_ms + duration_ms + 2
