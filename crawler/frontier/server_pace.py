"""ServerPace: the adaptive pace of one server (host:port) — AIMD on the gap between fetch starts.

The order's politeness is a guess made before the crawl; the server's answers say how fast it
really wants to be asked. Each server keeps a *gap*, the least time between two fetch starts to
it, that the server cap (:class:`~crawler.frontier.server_gate.ServerGate`, or its Redis twin in
:mod:`~crawler.frontier.redis.redis_scripts`) enforces across every queue of the server, on top of
whatever the politeness says:

* a *signal* — an answer in ``signal_statuses`` (429, 503), or :data:`SLOW_STREAK` responses
  in a row each slower than ``slow_response_factor`` x the server's usual time and
  ``slow_response_min_ms`` more (only small, whole responses are timed: :func:`timing_counts`;
  a lone slow page is the page, not the server) — makes
  the gap ``increase_factor`` times longer (multiplicative increase). Until the server's limit
  is known, a signal that comes before :data:`FAST_RAMP_ANSWERS` healthy answers since the last
  increase (that increase was not enough: we are still far too fast) makes it
  ``fast_increase_factor`` times longer instead — a ramp; any other signal sets the *known
  limit*, the gap it came at (a signal above :data:`PLATEAU_MARGIN` x the known limit says that
  limit was too low: the gap grows by ``increase_factor`` squared). From no gap at all, the
  first gap is the time between two recent answers of the server (how fast we were going)
  times the fast factor, and at least :data:`MIN_FIRST_GAP_S`;
* a refusal (a status signal, not slow answers) also holds the server: no fetch starts for
  :data:`SETTLE_S` while the limit is not known, :data:`SETTLE_KNOWN_S` once it is (or the new
  gap if longer). Limiters that count requests per window, or count the requests they refused,
  refuse everything until the window has passed, whatever the gap: without the hold, those
  refusals would ramp the gap far past the server's limit;
* a signal from a fetch that started before the last increase says nothing new (it was sent at
  the old pace) and is ignored, so a burst of refusals in flight raises the gap once;
* each healthy answer takes ``decrease_fraction`` of the gap's last peak off the gap (additive
  decrease): the gap shrinks slowly back toward zero, probing for the server's real limit.
  While the gap is more than ``increase_factor`` times the known limit (or no limit is known)
  it shrinks faster, by :data:`FAST_DESCENT` x ``decrease_fraction`` of itself per answer, so
  the overshoot of a ramp, or a lone signal, is soon undone; within :data:`PLATEAU_MARGIN` of
  the known limit it shrinks :data:`PLATEAU_SLOWDOWN` times slower (a limiter with a burst
  hides an overdraft for a while: probing past the limit slowly keeps refusals rare);
* the server's next fetch start is pushed one new gap (or hold) after an increase.
* the gap never exceeds ``max_gap_ms``.

The usual response time is a moving average of the server's fetch durations (slow ones too, so
a server that stays slower becomes the new usual after a few dozen answers).

:class:`PaceState` holds one server's numbers; :class:`ServerPace` is the arithmetic, with the
time passed in (seconds, any monotonic clock) so tests drive it with a fake clock. Not
thread-safe: the gate's owner (the frontier, under its lock) calls it. The Redis frontier runs the
same arithmetic in its FINISH script (:data:`~crawler.frontier.redis.redis_scripts.PACE_FN`),
with the state in the server's hash.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawler.order.schema import PaceConfig

if TYPE_CHECKING:
    from crawler.curi import CrawlURI

MIN_FIRST_GAP_S = 0.05
"""The first gap is at least this: a server that refused us is asked at most 20 times a second
until it has answered well for a while (fewer refusals while the pace finds its limit)."""
FAST_DESCENT = 8
"""How much faster the gap shrinks while far above the gap that last drew a signal."""
SLOW_STREAK = 3
"""Slow responses in a row that make a signal."""
TIMED_MAX_BYTES = 64 * 1024
"""Larger bodies take long because they are large: their fetch time is not a server signal."""
PLATEAU_MARGIN = 1.05
"""Within this factor of the known limit the gap shrinks slower still."""
PLATEAU_SLOWDOWN = 16
"""How much slower the gap shrinks near the known limit."""
MAX_SAMPLE_S = 1.0
"""Longest time between two answers that counts toward the recent pace."""
BASELINE_WEIGHT = 0.05
"""Weight of a new fetch duration in the server's usual response time."""
INTERVAL_WEIGHT = 0.125
"""Weight of a new interval between answers in the server's recent pace."""
SETTLE_S = 1.0
"""A refusal (a status signal) while the server's limit is not known holds the server this long
at least: a limiter that counts requests per second, or counts the ones it refused, refuses
everything until its window has passed, whatever the new gap; after the hold it has forgotten
the overdraft, and the next refusal says the new gap is still too short."""
SETTLE_KNOWN_S = 0.25
"""The hold after a refusal once the limit is known: the pace was only just past it (a window
limiter's last request of a second, a bucket's last token), a short pause lets the count fall."""
SLACK_S = 1e-6
"""Comparisons of the gap with the known limit allow this much: right after a raise the gap is
exactly ``increase_factor`` x the limit, and the Redis twin keeps milliseconds to 6 decimals."""
FAST_RAMP_ANSWERS = 10
"""A signal after fewer healthy answers than this since the last increase takes the fast factor:
at a pace the server can bear, the slow decrease takes far more answers to draw a signal."""


def timing_counts(curi: CrawlURI) -> bool:
    """Whether ``curi``'s fetch time may say how fast its server answers: a body of at most
    :data:`TIMED_MAX_BYTES`, not cut short (``lenTrunc``, ``timeTrunc`` …)."""
    if curi.content_size > TIMED_MAX_BYTES:
        return False
    return not any(a.endswith("Trunc") for a in curi.annotations)


class PaceState:
    """One server's pace (seconds). ``gap_s`` is what the gate enforces; 0 = no constraint."""

    __slots__ = (
        "baseline_s",
        "gap_s",
        "interval_s",
        "last_answer_s",
        "limit_gap_s",
        "ok_since_raise",
        "peak_s",
        "raised_s",
        "slow_streak",
    )

    def __init__(self) -> None:
        self.gap_s = 0.0
        self.peak_s = 0.0
        self.raised_s = -1.0
        self.ok_since_raise = 0
        self.limit_gap_s = 0.0
        self.slow_streak = 0
        self.baseline_s = -1.0
        self.interval_s = 0.0
        self.last_answer_s = -1.0


class ServerPace:
    """The AIMD arithmetic of the order's ``frontier.pace`` (see the module docstring)."""

    __slots__ = (
        "_decrease",
        "_factor",
        "_fast",
        "_max_gap_s",
        "_slow_factor",
        "_slow_min_s",
        "_statuses",
        "enabled",
    )

    def __init__(self, config: PaceConfig) -> None:
        self.enabled = config.enabled
        self._statuses = frozenset(config.signal_statuses)
        self._factor = config.increase_factor
        self._fast = config.fast_increase_factor
        self._decrease = config.decrease_fraction
        self._max_gap_s = config.max_gap_ms / 1000.0
        self._slow_factor = config.slow_response_factor
        self._slow_min_s = config.slow_response_min_ms / 1000.0

    def observe(
        self, st: PaceState, now_s: float, started_s: float, status: int, duration_s: float
    ) -> float:
        """Take the answer to a fetch that started at ``started_s`` and took ``duration_s``
        (negative: unknown) with ``status``. Returns how long (seconds) the server must now wait
        before its next fetch start: the new gap, or after a refusal the hold
        (:data:`SETTLE_S`, :data:`SETTLE_KNOWN_S`) if longer; 0.0 when the gap did not grow."""
        last = st.last_answer_s
        if last >= 0:
            st.interval_s += (min(now_s - last, MAX_SAMPLE_S) - st.interval_s) * INTERVAL_WEIGHT
        st.last_answer_s = now_s
        refused = signal = status in self._statuses
        if duration_s >= 0 and status > 0:
            base = st.baseline_s
            if base < 0:
                st.baseline_s = duration_s
            else:
                if duration_s > self._slow_factor * base and duration_s - base > self._slow_min_s:
                    st.slow_streak += 1
                    if st.slow_streak >= SLOW_STREAK:
                        st.slow_streak = 0
                        signal = True
                else:
                    st.slow_streak = 0
                st.baseline_s = base + (duration_s - base) * BASELINE_WEIGHT
        if signal:
            if not self._raise(st, now_s, started_s):
                return 0.0
            if not refused:
                return st.gap_s
            return max(st.gap_s, SETTLE_KNOWN_S if st.limit_gap_s else SETTLE_S)
        if st.gap_s > 0 and status > 0:
            st.ok_since_raise += 1
            gap = st.gap_s
            limit = st.limit_gap_s
            if gap > limit * self._factor + SLACK_S:
                gap -= gap * self._decrease * FAST_DESCENT
            elif gap > limit * PLATEAU_MARGIN + SLACK_S:
                gap -= st.peak_s * self._decrease
            else:
                gap -= st.peak_s * self._decrease / PLATEAU_SLOWDOWN
            st.gap_s = gap if gap > MIN_FIRST_GAP_S / 100 else 0.0
        return 0.0

    def _raise(self, st: PaceState, now_s: float, started_s: float) -> bool:
        if started_s < st.raised_s:
            return False
        gap = st.gap_s
        if st.ok_since_raise < FAST_RAMP_ANSWERS and not st.limit_gap_s:
            factor = self._fast
        else:
            factor = self._factor
            if st.limit_gap_s and gap > st.limit_gap_s * PLATEAU_MARGIN + SLACK_S:
                factor *= factor
            st.limit_gap_s = gap
        st.ok_since_raise = 0
        gap = gap * factor if gap > 0 else max(st.interval_s * factor, MIN_FIRST_GAP_S)
        gap = min(gap, self._max_gap_s)
        st.gap_s = st.peak_s = gap
        st.raised_s = now_s
        return True
