"""The server cap's admission rule, written once for both frontiers.

A fetch start to a server is admitted when fewer than ``max_conn`` fetches to it are in progress
(0: no cap) and its next allowed start (``not_before``: the minimum interval, the adaptive pace's
gap, a Retry-After back-off or a bandwidth hold) has come. Otherwise the queue waits: *parked* on
the server (FIFO) while no slot is free, or until ``not_before`` while the server's time has not
come. An admitted start takes a slot and sets the server's next start ``max(min_interval,
pace gap)`` later.

:func:`admission_rule`, :func:`start_spacing` and :func:`held_start` are the rule, written
once:
:class:`~crawler.frontier.politeness.server_gate.ServerGate` calls them (through :func:`admission`)
under the LevelDB/memory frontier's lock; the Redis frontier applies them atomically with the lease,
inside its CLAIM, INLINE_ENTER, FINISH and INLINE_LEAVE scripts, as their Lua translation
(:mod:`~crawler.luagen`) on a server's hash (:data:`ADMISSION_LUA`, :data:`HELD_START_LUA`).
Pure and thread-safe.
"""

from __future__ import annotations

import math

from crawler.luagen import lua_function

NO_SLOT = math.inf
""":func:`admission`'s answer when the server has no free connection: park until one is."""
ADMITTED, REFUSED = 0.0, -1.0
""":func:`admission_rule`'s answers besides a time: the start may go now; no slot is free."""


def admission_rule(active: int, max_conn: int, now: float, not_before: float) -> float:
    """The rule: :data:`ADMITTED` if a fetch may start now, :data:`REFUSED` if no connection is
    free, else the time the server's next start is allowed (same unit as ``now``; times are
    positive). Kept to the subset :mod:`~crawler.luagen` translates."""
    if max_conn > 0 and active >= max_conn:
        return REFUSED
    if now < not_before:
        return not_before
    return ADMITTED


def admission(active: int, max_conn: int, now: float, not_before: float) -> float | None:
    """:func:`admission_rule` for the in-process gate: None if a fetch may start now,
    :data:`NO_SLOT` if no connection is free, else the time the server's next start is
    allowed."""
    wait = admission_rule(active, max_conn, now, not_before)
    if wait == ADMITTED:
        return None
    return NO_SLOT if wait == REFUSED else wait


def start_spacing(min_interval: float, gap: float) -> float:
    """How long after an admitted start the next may start: the longer of the order's minimum
    interval and the adaptive pace's gap (0: at once)."""
    if gap > min_interval:
        return gap
    return min_interval


def held_start(not_before: float, now: float, backoff: float, hold: float) -> float:
    """The server's next allowed start after an answer: a Retry-After ``backoff`` holds it
    until ``now + backoff`` at least; a bandwidth ``hold`` pushes it further (debts add up: the
    bytes of concurrent fetches)."""
    at = not_before
    if backoff > 0 and now + backoff > at:
        at = now + backoff
    if hold > 0:
        at = max(at, now) + hold
    return at


HELD_START_LUA = lua_function(held_start)
"""Lua defining ``held_start``, translated from the function above."""

ADMISSION_LUA = (
    lua_function(admission_rule)
    + lua_function(start_spacing)
    + """
-- admission_rule of crawler.frontier.policy.server_admission on a server's hash (ms): returns
-- -1 (no free slot), the ms of the next allowed start, or 0 (admitted: a slot taken unless
-- own, the next start pushed by start_spacing). own: under a slot the caller holds already.
local function admission(srv_key, max_conn, interval, own)
  local f = redis.call('HMGET', srv_key, 'a', 'nb', 'g')
  local active = tonumber(f[1] or '0')
  if own then active, max_conn = 0, 0 end
  local wait = admission_rule(active, max_conn, now, tonumber(f[2] or '0'))
  if wait ~= 0 then return wait end
  if not own then redis.call('HINCRBY', srv_key, 'a', 1) end
  local spacing = start_spacing(interval, tonumber(f[3] or '0'))
  if spacing > 0 then redis.call('HSET', srv_key, 'nb', now + math.ceil(spacing)) end
  return 0
end
"""
)
"""Lua defining ``admission_rule``, ``start_spacing`` (translated) and ``admission(srv_key,
max_conn, interval, own)`` on a server's hash (``a`` fetches in progress, ``nb`` next start,
``g`` the pace's gap); the script that includes it defines ``now`` (ms) first."""
