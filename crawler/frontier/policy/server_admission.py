"""The server cap's admission rule, written once for both frontiers.

A fetch start to a server is admitted when fewer than ``max_conn`` fetches to it are in progress
(0: no cap) and its next allowed start (``not_before``: the minimum interval, the adaptive pace's
gap, a Retry-After back-off or a bandwidth hold) has come. Otherwise the queue waits: *parked* on
the server (FIFO) while no slot is free, or until ``not_before`` while the server's time has not
come. An admitted start takes a slot and sets the server's next start ``max(min_interval,
pace gap)`` later.

:func:`admission` is the rule; :class:`~crawler.frontier.server_gate.ServerGate` calls it under
the LevelDB/memory frontier's lock. The Redis frontier must apply it atomically with the lease,
inside its CLAIM and INLINE_ENTER scripts: they run :data:`ADMISSION_LUA`, which is the same
rule on a server's Redis hash (``a`` fetches in progress, ``nb`` next start, ``g`` the gap).
``tests/contracts/test_policy_parity.py`` gives both the same inputs. Pure and thread-safe.
"""

from __future__ import annotations

import math

NO_SLOT = math.inf
""":func:`admission`'s answer when the server has no free connection: park until one is."""


def admission(active: int, max_conn: int, now: float, not_before: float) -> float | None:
    """None if a fetch may start now, :data:`NO_SLOT` if no connection is free, else the time
    the server's next start is allowed (same unit as ``now``)."""
    if max_conn > 0 and active >= max_conn:
        return NO_SLOT
    if now < not_before:
        return not_before
    return None


def start_spacing(min_interval: float, gap: float) -> float:
    """How long after an admitted start the next may start: the longer of the order's minimum
    interval and the adaptive pace's gap (0: at once)."""
    return gap if gap > min_interval else min_interval


ADMISSION_LUA = """
-- admission of crawler.frontier.policy.server_admission on a server's hash (ms):
-- returns -1 (no free slot), the ms of the next allowed start, or 0 (admitted: a slot taken
-- unless own, the next start pushed by start_spacing).
local function admission(srv_key, max_conn, interval, own)
  if not own and max_conn > 0 then
    if tonumber(redis.call('HGET', srv_key, 'a') or '0') >= max_conn then return -1 end
  end
  local nb = tonumber(redis.call('HGET', srv_key, 'nb') or '0')
  if now < nb then return nb end
  if not own then redis.call('HINCRBY', srv_key, 'a', 1) end
  local gap = tonumber(redis.call('HGET', srv_key, 'g') or '0')
  if interval > gap then gap = interval end
  if gap > 0 then redis.call('HSET', srv_key, 'nb', now + math.ceil(gap)) end
  return 0
end
"""
