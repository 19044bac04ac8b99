"""The order eligible queues are served in, written once for every store.

Among queues that may hand out a URI, the one with the lower queue precedence value goes first;
among equals, the one due earlier (FIFO for queues waiting their turn). The LevelDB/memory
:class:`~crawler.frontier.rotation.scheduler.QueueScheduler` keeps one FIFO per precedence and
serves the lowest non-empty one; the Redis frontier keeps inactive queues in one sorted set scored
by :func:`eligible_score` (the scripts compute the score, and read a score's precedence back
with :func:`score_precedence`, through :data:`ELIGIBLE_SCORE_LUA`, their Lua translation) and
sorts due queues by :func:`eligible_key`. Pure and thread-safe.
"""

from __future__ import annotations

from crawler.luagen import lua_function

PRECEDENCE_SCALE = 10**13
"""Milliseconds since the epoch stay below this until the year 2286; precedence x this + ms is
exact in a Lua number (a double) for precedences up to 900."""


def eligible_key(precedence: int, due_ms: float) -> tuple[int, float]:
    """Sort key of an eligible queue: lower precedence first, then the earlier due time."""
    return precedence, due_ms


def eligible_score(precedence: int, since_ms: int) -> int:
    """:func:`eligible_key` as one number, for a Redis sorted set."""
    return max(0, precedence) * PRECEDENCE_SCALE + since_ms


def score_precedence(score: int) -> int:
    """The queue precedence an :func:`eligible_score` holds (scores of precedence ``p`` run from
    ``eligible_score(p, 0)`` up to, not including, ``eligible_score(p + 1, 0)``)."""
    return score // PRECEDENCE_SCALE


ELIGIBLE_SCORE_LUA = lua_function(eligible_score) + lua_function(score_precedence)
"""Lua defining ``eligible_score`` and ``score_precedence``, translated from the functions
above."""
