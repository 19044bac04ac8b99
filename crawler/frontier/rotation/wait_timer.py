"""WaitTimer: one thread blocked in a frontier's ``next()`` waits for the next timed event.

Threads that find nothing to hand out block on a condition of the frontier's lock. Something
is due at a known time (a snoozed queue's wake time; on a Redis worker, the next read of the
shared frontier, a local prerequisite's due time): if every waiting thread slept until then,
each such time would wake them all and one would find work (300 toe threads, hundreds of
times a second). The rule written here, used by both frontiers: one waiting thread, the
*timer*, sleeps until the earliest timed event; the others sleep until notified (work was made
ready for them) or until their own deadline.

* A thread becomes the timer when none is, or when the event it would wait for is earlier
  than the timer's (the old timer sleeps on as an ordinary waiter).
* An event made earlier than the timer's by a thread that does not wait (a prerequisite
  queued, a read that moved the next poll): :meth:`earlier` says to wake one waiter, which
  takes it.
* A thread leaving ``next()`` calls :meth:`hand_on`: with no timer while threads wait and an
  event pending, one waiter is woken to become the timer, and no other is woken for that
  until some waiting thread has woken (a notify may be taken by a thread whose own timeout
  ran out at the same moment, so any thread's wake-up ends the hand-over).

Only the caller notifies (it knows its conditions): :meth:`hand_on` and :meth:`earlier` say
when to wake one thread. Thread-safety: every method is called with the frontier's lock held
(the lock of the conditions passed to :meth:`wait`).
"""

from __future__ import annotations

import math
import threading


class WaitTimer:
    """Which of the threads waiting on one lock sleeps until the next timed event (module doc)."""

    __slots__ = ("_handing", "timer_s", "waiting", "wakeups")

    def __init__(self) -> None:
        self.timer_s = math.inf
        """The event time (the caller's monotonic clock) the timer sleeps until; inf: no timer."""
        self.waiting = 0
        """Threads blocked in :meth:`wait` now."""
        self.wakeups = 0
        """Returns from :meth:`wait` so far (notified or timed out): what a herd would inflate."""
        self._handing = False

    def wait(
        self, cond: threading.Condition, remaining_s: float, event_s: float, now_s: float
    ) -> bool:
        """Block on ``cond`` until notified or ``remaining_s`` passes; the thread that becomes the
        timer (``event_s`` earlier than the timer's, see the module doc) also wakes at
        ``event_s`` (``now_s`` and ``event_s`` on the same clock; inf: no event). Returns
        ``cond.wait``'s answer."""
        timer = event_s < self.timer_s
        if timer:
            self.timer_s = event_s
            remaining_s = min(remaining_s, max(event_s - now_s, 0.001))
        self.waiting += 1
        try:
            return cond.wait(remaining_s)
        finally:
            self.waiting -= 1
            self.wakeups += 1
            self._handing = False
            if timer and self.timer_s == event_s:
                self.timer_s = math.inf

    def hand_on(self, pending: bool) -> bool:
        """For a thread leaving ``next()``: True when it must wake one waiter to become the timer
        (no timer, threads waiting, ``pending``: an event is to come, and no hand-over under
        way)."""
        if pending and self.waiting and not self._handing and self.timer_s == math.inf:
            self._handing = True
            return True
        return False

    def earlier(self, event_s: float) -> bool:
        """For a thread that made an event due at ``event_s`` and does not wait for it: True when
        it must wake one waiter to take it (threads wait and the timer, if any, sleeps longer);
        that wake-up then stands for a hand-over (:attr:`handing`)."""
        if self.waiting and event_s < self.timer_s:
            self._handing = True
            return True
        return False

    @property
    def handing(self) -> bool:
        """Whether a waiter was woken to become the timer and no waiting thread has woken since."""
        return self._handing
