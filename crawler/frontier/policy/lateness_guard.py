"""LatenessGuard: keeps the active queues as few as the crawler can serve on time.

Heritrix activates an inactive queue only when no ready queue waits for a thread ("hold
queues"), and the frontier does too. That alone lets the active set outgrow what the crawler can
do: the first fetches of a new host (its DNS lookup, its robots.txt) are cheap and each is
followed by a politeness wait, during which idle threads activate more hosts; once all of them
fetch pages, a host whose delay has passed waits seconds for its next fetch (at 10,000 hosts,
~1,400 were active and each was served seconds late). The wait is not always in the frontier:
with many threads and the interpreter's lock busy, a thread hands the URI out at once and then
waits for its turn to run. So the guard measures the lateness of each fetch *start*, after its
queue's politeness delay (``frontier.lateness_tolerance``, a share of the delay; 0: off):

* *Saturated*: every fetch started for :data:`PERSIST_S` (or its delay, if longer) was more than
  :data:`MIN_LATE_S` late, with no pause of :data:`RUN_GAP_S` between two. A few late ones (a
  pause of the interpreter, a busy moment) are not saturation.
* Then the guard trims the excess: by Little's law, the fetch rate times the mean lateness is
  how many more queues are active than can be served on time, so :data:`TRIM_GAIN` x that many
  due queues are rotated out when they next come to a thread — to the back of their inactive
  FIFO, as a queue over its session budget goes — and the active set is capped at what is
  left: no queue is activated while that many are active. One trim per :data:`PERSIST_S` (or
  two delays), so its effect shows before the next one.
* A fetch later than :data:`MARGIN` x tolerance x its delay is *late*. The cap grows again on
  demand: when a thread finds no ready queue and the cap keeps it from activating one, while no
  fetch was late for :data:`CALM_S`, the cap rises by one, at most :data:`GROW_RATE` x the cap
  per second (what a new host costs shows only a few seconds later). A queue leaving the active
  set (exhausted, over its session budget, retired) still makes room for an inactive one, so
  hosts take turns as before.

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
CALM_S = 2.0
GROW_RATE = 0.02
TRIM_GAIN = 0.5
"""Share of the estimated excess one trim rotates out (the estimate lags: trims converge)."""
SMOOTHING = 0.05
"""Weight of each fetch in the running means of lateness and of the time between fetches."""


class LatenessGuard:
    """The active set's cap, the trim under way and the fetch statistics (module docstring)."""

    def __init__(self, tolerance: float) -> None:
        self.tolerance = tolerance
        self.cap = math.inf
        """No inactive queue is activated while this many are active (inf: no cap yet)."""
        self.saturated = False
        self.rotated = 0
        """Queues rotated out to trim the active set."""
        self.to_rotate = 0
        """Due queues still to rotate out in the trim under way."""
        self.late_s = 0.0
        """Running mean of the fetches' lateness (s)."""
        self._mean_gap_s = 1.0  # running mean of the time between two fetch reports
        self._late_since_s: float | None = None
        self._last_fetch_s = -math.inf
        self._last_late_s = -math.inf
        self._trimmed_s = -math.inf
        self._grown_s = -math.inf

    def fetched(self, due_s: float, delay_s: float, started_s: float, now_s: float) -> None:
        """A fetch of a queue due since ``due_s`` (after a delay of ``delay_s``) started at
        ``started_s``; it is reported at ``now_s``."""
        if self.tolerance <= 0:
            return
        late_s = max(0.0, started_s - due_s)
        gap_s = now_s - self._last_fetch_s
        self._last_fetch_s = now_s
        self._mean_gap_s += SMOOTHING * (min(gap_s, 10.0) - self._mean_gap_s)
        self.late_s += SMOOTHING * (late_s - self.late_s)
        if late_s > max(self.tolerance * MARGIN * delay_s, MIN_LATE_S):
            self._last_late_s = now_s
        if gap_s > RUN_GAP_S or late_s <= MIN_LATE_S:
            self._late_since_s = None
        if late_s <= MIN_LATE_S:
            self.saturated = False
            return
        if self._late_since_s is None:
            self._late_since_s = now_s
        self.saturated = now_s - self._late_since_s >= max(PERSIST_S, delay_s)
        if self.saturated and now_s - self._trimmed_s >= max(PERSIST_S, 2 * delay_s):
            self._trimmed_s = now_s
            self.to_rotate = math.ceil(TRIM_GAIN * self.late_s / max(self._mean_gap_s, 1e-3))

    def take_rotation(self, active: int) -> bool:
        """A due queue comes to a thread, ``active`` queues being active: True if it is to be
        rotated out (a trim is under way); the cap then follows the active set down."""
        if self.to_rotate <= 0:
            return False
        self.to_rotate -= 1
        self.rotated += 1
        self.cap = min(self.cap, active - 1)
        return True

    def may_activate(self, active: int, now_s: float) -> bool:
        """Whether an idle thread may activate a queue, ``active`` being active; raises the cap
        by one if it is all that stands in the way and no fetch was late for a while."""
        if active < self.cap:
            return True
        if (
            now_s - self._last_late_s >= CALM_S
            and now_s - self._grown_s >= 1.0 / (GROW_RATE * max(self.cap, 1.0))
            and active + 1 >= self.cap
        ):
            self.cap += 1
            self._grown_s = now_s
            return True
        return False
