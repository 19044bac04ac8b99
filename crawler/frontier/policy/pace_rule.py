"""The adaptive pace's inputs for the Redis scripts, derived once from the order.

The arithmetic is :class:`~crawler.frontier.server_pace.ServerPace`; the Redis frontier runs it
atomically on a server's hash in ``redis_scripts.PACE_FN``, Lua generated from
:data:`~crawler.frontier.server_pace` constants. This module turns the order's ``frontier.pace``
into that script's parameters (:func:`pace_arguments`) and a fetch's answer into its inputs
(:func:`pace_inputs`), as the LevelDB frontier's
:func:`~crawler.frontier.queue_release.fetch_answer` does for ``ServerPace.observe``. Pure and
thread-safe.
"""

from __future__ import annotations

from crawler.order.schema import PaceConfig

NO_PACE = (0, 0, 0, 0, 0, 0)
"""The pace parameters of an order without adaptive pace (factor 0: the script skips it)."""
NOTHING = (-1, -1, -1)
"""The pace inputs of a URI that fetched nothing from a server."""


def pace_arguments(config: PaceConfig) -> tuple[float, ...]:
    """``PACE_FN``'s parameters P: factor, fast factor, decrease, max gap ms, slow factor, slow
    minimum ms; :data:`NO_PACE` when the pace is off."""
    if not config.enabled:
        return NO_PACE
    return (
        config.increase_factor,
        config.fast_increase_factor,
        config.decrease_fraction,
        config.max_gap_ms,
        config.slow_response_factor,
        config.slow_response_min_ms,
    )


def pace_inputs(
    fetched: tuple[int, int, int] | None, signals: frozenset[int], now_ms: int
) -> tuple[int, int, int]:
    """``PACE_FN``'s kind, age and duration for a fetch's answer ``fetched`` (status, start ms,
    duration ms or -1; :func:`~crawler.frontier.queue_release.fetch_answer`): kind 1 a signal
    status, 0 an answer, 2 no answer; :data:`NOTHING` when nothing was fetched."""
    if fetched is None:
        return NOTHING
    status, start_ms, duration_ms = fetched
    kind = 1 if status in signals else 0 if status > 0 else 2
    return kind, max(0, now_ms - start_ms), duration_ms
