"""LatenessGuard: keeps the active queues as few as the threads can serve on time.

Heritrix activates an inactive queue only when no ready queue waits for a thread ("hold
queues"), and the frontier does too. That alone lets the active set outgrow the threads: the
first fetches of a new host (its DNS lookup, its robots.txt) are cheap and each is followed by a
politeness wait, during which idle threads activate more hosts; once all of them fetch pages, a
host whose delay has passed waits seconds for a thread (at 10,000 hosts, ~1,400 were active and
each was served seconds late). The guard watches how late the threads serve the queues and caps
the active set (``frontier.lateness_tolerance``, a share of the delay; 0: off):

* A queue whose politeness delay has ended is *due*; handed to a thread more than
  :data:`MARGIN` x tolerance x its delay after that (at least :data:`MIN_LATE_S`), it is
  *late*. The ready queues are served in the order they came due, so while the threads keep
  up late ones come alone or in short bursts (a pause of the interpreter, a busy moment), and
  an on-time one follows; when they cannot, every one is late.
* *Saturated*: every due queue served for :data:`PERSIST_S` (or its delay, if longer) was late,
  with no pause of :data:`RUN_GAP_S` between two. Then each late queue is rotated out instead
  of served — to the back of its inactive FIFO, as a queue over its session budget goes — and
  the active set is capped at what is left: no queue is activated while that many are active.
  The backlog of late queues is the excess; once it is gone the next due queue is on time,
  which ends the saturation. A queue leaving the active set (exhausted, over its session
  budget, retired) still makes room for an inactive one, so hosts take turns as before.
* The cap grows by one after a calm spell (no late queue for :data:`CALM_S`, or
  :data:`CALM_DELAYS` delays if longer), to use threads that freed up.

All times are the frontier clock's monotonic seconds. Not thread-safe: the scheduler calls it
under the frontier's lock. No Heritrix counterpart.
"""

from __future__ import annotations

import math

MARGIN = 0.5
"""Lateness counts from this fraction of the tolerance, so the wait settles below it."""
MIN_LATE_S = 0.02
"""Least lateness that counts (a thread's wake-up takes a few ms on a busy machine)."""
PERSIST_S = 2.0
RUN_GAP_S = 1.0
CALM_S = 5.0
CALM_DELAYS = 3.0


class LatenessGuard:
    """The active set's cap and the run of late queues (see the module docstring)."""

    def __init__(self, tolerance: float) -> None:
        self.tolerance = tolerance
        self.cap = math.inf
        """No inactive queue is activated while this many are active (inf: no cap yet)."""
        self.saturated = False
        self.rotated = 0
        """Queues rotated out because they were late while the threads could not keep up."""
        self._late_since_s: float | None = None
        self._last_due_s = -math.inf
        self._calm_from_s = -math.inf

    def served(self, due_s: float, delay_s: float, now_s: float, active: int) -> bool:
        """A queue due since ``due_s`` after a delay of ``delay_s`` reaches a thread at
        ``now_s``, ``active`` queues being active; True if it is to be rotated out instead
        (late while saturated)."""
        if self.tolerance <= 0:
            return False
        late = now_s - due_s > max(self.tolerance * MARGIN * delay_s, MIN_LATE_S)
        if now_s - self._last_due_s > RUN_GAP_S:
            self._late_since_s = None
        self._last_due_s = now_s
        if late:
            self._calm_from_s = now_s
            if self._late_since_s is None:
                self._late_since_s = now_s
            self.saturated = now_s - self._late_since_s >= max(PERSIST_S, delay_s)
            return self.saturated
        self._late_since_s = None
        self.saturated = False
        if active + 1 >= self.cap and now_s - self._calm_from_s >= max(
            CALM_S, CALM_DELAYS * delay_s
        ):
            self.cap += 1
            self._calm_from_s = now_s
        return False

    def rotated_out(self, active: int) -> None:
        """A late queue was rotated out, leaving ``active`` queues active."""
        self.rotated += 1
        self.cap = min(self.cap, active)

    def may_activate(self, active: int) -> bool:
        """Whether a queue may join the ``active`` ones."""
        return active < self.cap
