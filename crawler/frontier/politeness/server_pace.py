"""ServerPace: the adaptive pace of one server (host:port) — AIMD on the gap between fetch starts.

The order's politeness is a guess made before the crawl; the server's answers say how fast it
really wants to be asked. Each server keeps a *gap*, the least time between two fetch starts to
it, that the server cap (:class:`~crawler.frontier.politeness.server_gate.ServerGate`, or the Redis
scripts of :mod:`~crawler.frontier.redis.redis_scripts`) enforces across every queue of the server,
on top of whatever the politeness says:

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

:class:`PaceState` holds one server's numbers and :func:`pace_step` is the arithmetic, written
once, with the time passed in (any unit, any monotonic clock) so tests drive it with a fake
clock. :class:`ServerPace` runs it in seconds for the in-process gate; the Redis frontier runs
its Lua translation (:mod:`~crawler.luagen`) in ms on the server's hash
(:data:`~crawler.frontier.policy.pace_rule.PACE_LUA`). Not thread-safe: the gate's owner (the
frontier, under its lock) calls it; in Redis each script is atomic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

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
exactly ``increase_factor`` x the limit, and Redis keeps milliseconds to 6 decimals."""
FAST_RAMP_ANSWERS = 10
"""A signal after fewer healthy answers than this since the last increase takes the fast factor:
at a pace the server can bear, the slow decrease takes far more answers to draw a signal."""


def timing_counts(curi: CrawlURI) -> bool:
    """Whether ``curi``'s fetch time may say how fast its server answers: a body of at most
    :data:`TIMED_MAX_BYTES`, not cut short (``lenTrunc``, ``timeTrunc`` …)."""
    if curi.content_size > TIMED_MAX_BYTES:
        return False
    return not any(a.endswith("Trunc") for a in curi.annotations)


ANSWER, SIGNAL, NO_ANSWER = 0, 1, 2
"""Kinds of answer :func:`pace_step` takes: a status outside ``signal_statuses``, one in it,
none (the fetch failed)."""


def answer_kind(status: int, signals: frozenset[int]) -> int:
    """:func:`pace_step`'s kind of an answer with ``status``."""
    return SIGNAL if status in signals else ANSWER if status > 0 else NO_ANSWER


class PaceState:
    """One server's pace, in the rule's time unit (seconds in process, ms in Redis). ``gap`` is
    what the gate enforces; 0 = no constraint."""

    __slots__ = (
        "baseline",
        "gap",
        "interval",
        "last_answer",
        "limit_gap",
        "ok_since_raise",
        "peak",
        "raised_at",
        "slow_streak",
    )

    def __init__(self) -> None:
        self.gap = 0.0
        self.peak = 0.0
        """The gap at the last increase."""
        self.raised_at = -1.0
        self.ok_since_raise = 0
        self.limit_gap = 0.0
        """The known limit: the gap the last signal came at (0: none yet)."""
        self.slow_streak = 0
        self.baseline = -1.0
        """The usual fetch duration (-1: none yet)."""
        self.interval = 0.0
        """The recent time between two answers."""
        self.last_answer = -1.0


class PaceParams(NamedTuple):
    """The order's ``frontier.pace`` in :func:`pace_step`'s time unit (``unit`` per second)."""

    factor: float
    fast: float
    decrease: float
    max_gap: float
    slow_factor: float
    slow_min: float
    unit: float


def pace_params(config: PaceConfig, unit: float) -> PaceParams:
    """``config`` in the time unit ``unit`` per second (1: seconds, 1000: ms)."""
    return PaceParams(
        config.increase_factor,
        config.fast_increase_factor,
        config.decrease_fraction,
        config.max_gap_ms * unit / 1000,
        config.slow_response_factor,
        config.slow_response_min_ms * unit / 1000,
        unit,
    )


def pace_step(
    st: PaceState, p: PaceParams, now: float, started: float, kind: int, dur: float
) -> float:
    """The rule (module docstring): take an answer of ``kind`` (:func:`answer_kind`) at ``now``
    to a fetch started at ``started`` that took ``dur`` (negative: unknown), all in ``p.unit``.
    Returns how long the server must now wait before its next fetch start: the new gap, or after
    a refusal the hold if longer; 0 when the gap did not grow.

    Written once: the in-process gate calls it (seconds) and the Redis scripts run its Lua
    translation (ms, :mod:`~crawler.luagen`), so it keeps to the translator's subset."""
    u = p.unit
    if st.last_answer >= 0:
        sample = min(now - st.last_answer, MAX_SAMPLE_S * u)
        st.interval += (sample - st.interval) * INTERVAL_WEIGHT
    st.last_answer = now
    signal = kind == SIGNAL
    if dur >= 0 and kind != NO_ANSWER:
        base = st.baseline
        if base < 0:
            st.baseline = dur
        else:
            if dur > p.slow_factor * base and dur - base > p.slow_min:
                st.slow_streak += 1
                if st.slow_streak >= SLOW_STREAK:
                    st.slow_streak = 0
                    signal = True
            else:
                st.slow_streak = 0
            st.baseline = base + (dur - base) * BASELINE_WEIGHT
    if signal:
        if started < st.raised_at:
            return 0.0  # sent at the old pace: says nothing new
        gap = st.gap
        if st.ok_since_raise < FAST_RAMP_ANSWERS and st.limit_gap == 0:
            factor = p.fast
        else:
            factor = p.factor
            if st.limit_gap > 0 and gap > st.limit_gap * PLATEAU_MARGIN + SLACK_S * u:
                factor = factor * factor
            st.limit_gap = gap
        st.ok_since_raise = 0
        gap = gap * factor if gap > 0 else max(st.interval * factor, MIN_FIRST_GAP_S * u)
        gap = min(gap, p.max_gap)
        st.gap = gap
        st.peak = gap
        st.raised_at = now
        if kind != SIGNAL:
            return gap
        if st.limit_gap > 0:
            return max(gap, SETTLE_KNOWN_S * u)
        return max(gap, SETTLE_S * u)
    if st.gap > 0 and kind == ANSWER:
        st.ok_since_raise += 1
        gap = st.gap
        limit = st.limit_gap
        if gap > limit * p.factor + SLACK_S * u:
            gap -= gap * p.decrease * FAST_DESCENT
        elif gap > limit * PLATEAU_MARGIN + SLACK_S * u:
            gap -= st.peak * p.decrease
        else:
            gap -= st.peak * p.decrease / PLATEAU_SLOWDOWN
        if gap <= MIN_FIRST_GAP_S * u / 100:
            gap = 0.0
        st.gap = gap
    return 0.0


class ServerPace:
    """The order's ``frontier.pace`` in seconds, for the in-process gate (module docstring)."""

    __slots__ = ("_params", "_statuses", "enabled")

    def __init__(self, config: PaceConfig) -> None:
        self.enabled = config.enabled
        self._statuses = frozenset(config.signal_statuses)
        self._params = pace_params(config, 1.0)

    def observe(
        self, st: PaceState, now_s: float, started_s: float, status: int, duration_s: float
    ) -> float:
        """Take the answer to a fetch that started at ``started_s`` and took ``duration_s``
        (negative: unknown) with ``status`` (:func:`pace_step`, in seconds). Returns how long
        (seconds) the server must now wait before its next fetch start: the new gap, or after
        a refusal the hold (:data:`SETTLE_S`, :data:`SETTLE_KNOWN_S`) if longer; 0.0 when the
        gap did not grow."""
        kind = answer_kind(status, self._statuses)
        return pace_step(st, self._params, now_s, started_s, kind, duration_s)
