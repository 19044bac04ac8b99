"""Queue precedence rules written once, for every store.

Lower precedence values are more urgent. ``success_counts`` (Heritrix's
``SuccessCountsQueuePrecedencePolicy``): a queue keeps the base precedence for its first
:data:`SUCCESS_FIRST_STEP` successes, then loses one step, and one more per
:data:`SUCCESS_STEP` successes after that. The LevelDB/memory frontier calls
:func:`success_counts_precedence`; the Redis frontier's FINISH script runs
:data:`SUCCESS_PRECEDENCE_LUA`, its Lua translation (:mod:`~crawler.luagen`).

:data:`PRECEDENCE_MODES` numbers the queue precedence policies for the Redis scripts, which take
the mode as an argument. Pure and thread-safe.
"""

from __future__ import annotations

from crawler.luagen import lua_function

SUCCESS_FIRST_STEP = 100
"""Successes a queue makes at its base precedence."""
SUCCESS_STEP = 1000
"""Successes per further step once past :data:`SUCCESS_FIRST_STEP`."""

BASE, HIGHEST_URI, SUCCESS_COUNTS = 0, 1, 2
PRECEDENCE_MODES = {"base": BASE, "highest_uri": HIGHEST_URI, "success_counts": SUCCESS_COUNTS}
"""The order's ``queue_precedence_policy`` names, as the Redis scripts number them."""


def success_counts_precedence(base: int, successes: int) -> int:
    """The precedence of a queue that made ``successes`` successes, starting from ``base``."""
    if successes < SUCCESS_FIRST_STEP:
        return base
    return base + 1 + (successes - SUCCESS_FIRST_STEP) // SUCCESS_STEP


def precedence_mode(policy_name: str) -> int:
    """The Redis scripts' number of the queue precedence policy ``policy_name``."""
    return PRECEDENCE_MODES.get(policy_name, BASE)


SUCCESS_PRECEDENCE_LUA = lua_function(success_counts_precedence)
"""Lua defining ``success_counts_precedence``, translated from the function above."""
