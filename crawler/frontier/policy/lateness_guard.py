"""LatenessGuard: keeps the hosts in rotation as few as the threads can serve on time.

Heritrix activates an inactive queue only when no ready queue waits for a thread ("hold
queues"), and the frontier does too. That alone lets the active set outgrow what the crawler can
do: the first fetches of a new host (its DNS lookup, its robots.txt) are cheap and each is
followed by a politeness wait, during which idle threads activate more hosts; once all of them
fetch pages, a host whose delay has passed waits seconds for a thread. The guard learns how
many queues the crawl can keep in rotation and activates no more (``frontier.
lateness_tolerance``, the share of its politeness delay a fetch may start late; 0: off).

**The model (Little's law).** A queue in rotation holds a thread for ``o`` seconds per URI
(hand-out to finish: the fetch, over a pooled or a new connection, and the processing), then
waits ``w`` (its politeness delay) before it is due again: one visit per ``o + w``. ``T``
threads hold URIs at most ``T / o`` times a second, so at most ``T x (o + w) / o`` queues can be
served on time; with more, a due queue waits for a thread. ``o``, ``w`` and ``T`` are measured:
``o`` and ``w`` as the means over a *window* of URIs given back (:meth:`served`), ``T`` as the
most threads seen serving the frontier (holding a URI or waiting for one) in that window. So
the figure follows the fetch times as they change: slower fetches (a busy interpreter, TLS
handshakes when the connection pool cannot keep a connection per host in rotation, slow
servers) lower it, faster ones raise it.

**The correction (observed lateness).** At the model's figure every thread is busy and a due
queue waits for one by chance (queueing at full load): the guard keeps the active set at a
share ``u`` of it. A fetch is *late* when it starts more than :data:`MARGIN` x tolerance x its
delay after its queue was due (:meth:`fetched`). At the end of each window:

* more than :data:`LATE_SHARE` of the due fetches late (*saturated*) while the threads were
  busy (fewer than one waiting for a URI on average: with threads idle, lateness is the
  machine's, not too many hosts, and fewer hosts would not help): if no more queues were active
  than the cap, ``u`` is too high: it falls to the share of the model active now times (1 - the
  late share), by :data:`MAX_FALL` at most, and no queue is activated while as many are active.
  A rotated-out host's next visit comes after its turn in the inactive FIFO, one long gap, so
  the guard rotates out only a gross excess: with :data:`ROTATE_SHARE` or more late, the queues
  active beyond :data:`SLOW_START` x the cap (as after a sharp rise of the fetch times) are
  rotated out as they come due to a thread (to the back of their inactive FIFO, as a queue over
  its session budget goes); a smaller excess shrinks as hosts leave the active set;
* none late beyond that share while the cap kept a thread from activating a queue: ``u`` gains
  :data:`GROWTH` of its distance to 1 (never more queues than the threads can serve).

The model is the mean of the last window's figure and the one before. Like TCP's slow start,
the cap is at most :data:`SLOW_START` x the queues active at a window's end (or the threads):
it is twice the threads until the first window closes, and doubles at most per window, because
a new host's first fetches (DNS, robots.txt) are cheap and what its pages cost shows only
windows later.

A window closes after :data:`WINDOW_URIS` URIs and at least one mean cycle ``o + w``; the
window after a late one only measures (its lateness is still the last one's), so a step's
effect shows before the next is taken. Nothing in it is a time constant. A queue leaving the
active set (exhausted, over its session budget, retired) makes room for an inactive one, so
hosts still take turns.

**Shared by several workers** (the Redis frontier): each worker's guard learns its own figure
(:attr:`offered`: its capacity, from its own threads and fetches, within the slow start's
ceiling); Redis keeps each worker's figure (one that has none yet is not counted) and every read
brings back their sum as :attr:`crawl_cap`, the cap on the crawl-wide active set. Each worker
rotates out its share of an excess.

All times are the frontier clock's seconds (monotonic, or Redis's). Not thread-safe: the
frontier calls it under its lock. No Heritrix counterpart.
"""

from __future__ import annotations

import math

QUANTILE = 0.99
"""The goal's percentile: the tolerance bounds the p99 of the lateness (``p99 <= tolerance x
delay``). Every other figure below follows from it, from :data:`SLOW_START`, or from both."""

SLOW_START = 2
"""The cap is at most this many times the queues active (or the threads) at a window's end: the
active set at most doubles per window, like TCP's slow start, because a new host's first fetches
(DNS, robots.txt) are cheap and what its pages cost shows a window later. The one choice here
not derived from the goal: it sets how fast the crawl widens (doubling: ``log2(hosts)``
windows to reach them all)."""

LATE_SHARE = round(1.0 - QUANTILE, 12)
"""Share of late fetches a window may have (0.01): "p99 <= the tolerance" says exactly that at
most 1% of the fetches may start later than the tolerance."""

MARGIN = 1.0 / SLOW_START
"""A fetch counts as late from this share of the tolerance (0.5). Lateness at full load is
waiting for a thread, whose tail is exponential: its percentiles scale with the mean wait. The
guard sees a window's lateness only after the window, and the active set may have doubled by
then (:data:`SLOW_START`), which at most doubles the waits (twice the queues per thread);
counting from ``1 / SLOW_START`` of the tolerance keeps the p99 within the tolerance through
that step."""

WINDOW_URIS = math.ceil(1.0 / LATE_SHARE)
"""Least URIs per window (100): the fewest in which the allowed share is a whole fetch. At the
goal a window expects one late fetch, so a window can tell "more than 1%" (two or more late)
from none; a shorter one could not, a longer one reacts later. At exactly the goal two or more
come by chance in a quarter of the windows; the fall that follows is by the late share seen
(2% for 2 of 100), so such a false alarm costs about 2% of the active set and one calm window
gives it back (:data:`GROWTH`)."""

ROTATE_CHANCE = 1e-7
"""How rarely a rotation out may be a false alarm: at most once in 10^7 windows (10^9 fetches,
weeks of a crawl at hundreds of fetches a second). Rotating a host out costs it a whole turn of
the inactive FIFO, so it is done only on evidence that chance at the goal cannot explain."""


def _beyond_chance(n: int, share: float, chance: float) -> int:
    """The least count ``k`` of late fetches in a window of ``n`` whose probability, fetches
    being late independently with probability ``share`` (the binomial law), is below
    ``chance`` for ``k`` or more."""
    tail = 1.0
    for k in range(n + 1):
        if tail < chance:
            return k
        tail -= math.comb(n, k) * share**k * (1.0 - share) ** (n - k)
    return n + 1


ROTATE_SHARE = _beyond_chance(WINDOW_URIS, LATE_SHARE, ROTATE_CHANCE) / WINDOW_URIS
"""Share of late fetches from which a gross excess of active queues is rotated out (0.1: 10 of
100; at the goal, 10 or more late come by chance with a probability of 8e-8, 9 or more 8e-7).
Between :data:`LATE_SHARE` and this the guard only holds activations back and lowers ``u``: the
hysteresis is the binomial spread of the late count at the goal."""

GROWTH = 0.5
"""Share of its distance to 1 that ``u`` gains after a calm window in which the cap held back
a thread: the model (every thread busy) bounds the right share from above and the last late
share from below, so the guard bisects between them, one window a step."""

MAX_FALL = GROWTH / 2
"""Most ``u`` loses after one late window (0.25): the fall is by the late share seen, and at
most what one calm window regains from half the model (``GROWTH x 1/2``), so one late window,
perhaps a false alarm, is undone by one calm one wherever ``u`` is above a half. More late
fetches than that are a gross excess, which rotation (:data:`ROTATE_SHARE`) trims, not the
share."""


class LatenessGuard:
    """The hosts in rotation the crawl can serve on time (see the module docstring)."""

    def __init__(self, tolerance: float) -> None:
        self.tolerance = tolerance
        self.capacity = math.inf
        """This process's learned figure: queues its threads can keep on time (inf: none yet)."""
        self.ceiling = math.inf
        """The slow start's bound on the cap (:data:`SLOW_START` x the queues active or the
        threads; inf until a thread is seen)."""
        self.crawl_cap: float | None = None
        """The crawl-wide cap when several workers share the frontier (the sum of their
        capacities, as the store last said); None: this process's capacity is the cap."""
        self.model = math.inf
        """``T x (o + w) / o`` of the last window."""
        self.share = 1.0
        """``u``: the share of the model kept active."""
        self.saturated = False
        """Whether the last window had more late fetches than :data:`LATE_SHARE`."""
        self.rotated = 0
        """Queues rotated out to trim the active set."""
        self.to_rotate = 0
        """Due queues still to rotate out in the trim under way."""
        self.rotated_out: list[tuple[str, float]] = []
        """``(queue key, time)`` of the queues rotated out that a caller named, until
        :meth:`take_rotated_out` (the frontier logs them, so a host's return after one can be
        told from lateness in rotation)."""
        self.late_s = 0.0
        """Mean lateness (s) of the due fetches of the last window (of this one, until then)."""
        self.windows = 0
        self._trim_due = False
        self._settling = False  # the window after a trim: its lateness is the trim's
        self._held_back = False
        self._start_s: float | None = None
        self._n = 0
        self._out_s = 0.0
        self._wait_s = 0.0
        self._threads = 0
        self._idle = 0
        self._due = 0
        self._late = 0
        self._late_sum_s = 0.0
        self._cycle_s = 0.0

    @property
    def enabled(self) -> bool:
        return self.tolerance > 0

    @property
    def cap(self) -> float:
        """No inactive queue is activated while this many are active (inf: no cap)."""
        return self.offered if self.crawl_cap is None else self.crawl_cap

    @property
    def offered(self) -> float:
        """This process's cap: its capacity within the slow start's ceiling (what a worker
        sends Redis)."""
        return min(self.capacity, self.ceiling)

    # ------------------------------------------------------------ measurements
    def served(
        self, out_s: float, wait_s: float, threads: int, idle: int, active: int, now_s: float
    ) -> None:
        """A thread gave back a URI it held ``out_s``; its queue waits ``wait_s`` before it is
        due again (its politeness delay; 0 if none); ``threads`` serve the frontier now (holding
        a URI or waiting for one), ``idle`` of them waiting; ``active`` queues are active
        (crawl-wide for a shared frontier). Closes the window when it is full."""
        if self.tolerance <= 0:
            return
        if self._start_s is None:
            self._start_s = now_s
        self._n += 1
        self._out_s += max(0.0, out_s)
        self._wait_s += max(0.0, wait_s)
        self._threads = max(self._threads, threads)
        self._idle += idle
        if not self.windows:  # slow start: twice the threads until the first window closes
            self.ceiling = float(SLOW_START * max(self._threads, 1))
        if self._n >= WINDOW_URIS and now_s - self._start_s >= self._cycle_s:
            self._close(active, now_s)

    def fetched(self, due_s: float, delay_s: float, started_s: float, now_s: float) -> None:
        """A fetch of a queue due since ``due_s`` (after a politeness delay of ``delay_s``)
        started at ``started_s``; reported at ``now_s``."""
        if self.tolerance <= 0:
            return
        late_s = max(0.0, started_s - due_s)
        self._due += 1
        self._late_sum_s += late_s
        self.late_s = self._late_sum_s / self._due
        if late_s > self.tolerance * MARGIN * delay_s:
            self._late += 1

    def _close(self, active: int, now_s: float) -> None:
        n = self._n
        out_s = self._out_s / n
        self._cycle_s = cycle_s = out_s + self._wait_s / n
        if out_s > 0 and self._threads > 0:
            model = self._threads * cycle_s / out_s
            # the mean of this window's figure and the last one's: one odd window moves it half
            self.model = model if math.isinf(self.model) else (self.model + model) / 2
        late_share = self._late / self._due if self._due else 0.0
        self.saturated = late_share > LATE_SHARE
        settling, self._settling = self._settling, False
        busy = self._idle < n  # fewer than one thread idle on average: the threads are the limit
        if self.saturated and busy and math.isfinite(self.model):
            in_use = active * self._mine() / self.model  # the share of the model active now
            if in_use <= self.share and not settling:
                # late with no more queues active than the cap: the share is too high
                self.share = max(in_use * (1 - min(MAX_FALL, late_share)), 1e-6)
            self._trim_due = late_share >= ROTATE_SHARE
            self._settling = True
        elif self._held_back and late_share <= LATE_SHARE and not settling:
            self.share += GROWTH * (1.0 - self.share)
        if math.isfinite(self.model):
            # at most twice what is active (or the threads): a new host's first fetches (DNS,
            # robots.txt) are cheap, what its pages cost shows windows later
            self.ceiling = float(
                SLOW_START * max(math.ceil(active * self._mine()), self._threads, 1)
            )
            self.capacity = max(1.0, math.floor(self.share * self.model))
        self.windows += 1
        self._start_s = now_s
        self._n = self._threads = self._idle = self._due = self._late = 0
        self._out_s = self._wait_s = self._late_sum_s = 0.0
        self._held_back = False

    def _mine(self) -> float:
        """This process's share of the crawl-wide cap (1 when it alone serves the frontier)."""
        cap = self.crawl_cap
        offered = self.offered
        if cap is None or not math.isfinite(cap) or cap <= 0 or not math.isfinite(offered):
            return 1.0
        return min(1.0, offered / cap)

    # ------------------------------------------------------------ decisions
    def take_rotation(self, active: int, key: str | None = None, now_s: float = 0.0) -> bool:
        """A queue due after a politeness wait comes to a thread, ``active`` queues being
        active: True if it is to be rotated out (the trim after a late window); then ``key``,
        if given, is noted in :attr:`rotated_out` with ``now_s``."""
        if self._trim_due:
            self._trim_due = False
            excess = active - SLOW_START * self.cap  # what holding activations back won't mend
            self.to_rotate = max(0, math.ceil(excess * self._mine()))
        if self.to_rotate <= 0:
            return False
        self.to_rotate -= 1
        self.rotated += 1
        if key is not None:
            self.rotated_out.append((key, now_s))
        return True

    def take_rotated_out(self) -> list[tuple[str, float]]:
        """The queues rotated out (key, time) since the last call."""
        taken, self.rotated_out = self.rotated_out, []
        return taken

    def may_activate(self, active: int, want: int = 1) -> bool:
        """Whether an idle thread may activate a queue, ``active`` being active (``want``:
        how many threads ask); notes it when the cap is what stands in the way."""
        if active + want <= self.cap:
            return True
        self._held_back = True
        return active < self.cap
