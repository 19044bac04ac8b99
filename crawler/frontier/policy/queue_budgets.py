"""A queue's budgets, written once for every store.

``queue_total_budget`` (negative: none) retires a queue whose total spent reaches it: it keeps
its URIs, which stop counting as queued and are not handed out. ``balance_replenish_amount``
(0: none) ends a queue's session once it spent that much since it was last activated: it goes
to the back of the inactive line if another queue waits there (Heritrix's session budget). The
costs are :class:`~crawler.frontier.policy.finish_policy.FinishPolicy`'s. The work-queue
frontier calls these functions; the Redis FINISH script runs their Lua translation
(:data:`QUEUE_BUDGETS_LUA`, :mod:`~crawler.luagen`). Pure and thread-safe.
"""

from __future__ import annotations

from crawler.luagen import lua_function


def over_total_budget(spent: int, budget: int) -> bool:
    """Whether a queue that spent ``spent`` in all is retired under ``budget``."""
    return budget >= 0 and spent >= budget


def session_spent_out(session_spent: int, balance: int) -> bool:
    """Whether a queue that spent ``session_spent`` since its activation ends its session under
    the session budget ``balance``."""
    return balance > 0 and session_spent >= balance


QUEUE_BUDGETS_LUA = lua_function(over_total_budget) + lua_function(session_spent_out)
"""Lua defining ``over_total_budget`` and ``session_spent_out``, translated from the above."""
