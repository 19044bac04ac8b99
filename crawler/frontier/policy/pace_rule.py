"""The adaptive pace in the Redis scripts:
:func:`~crawler.frontier.politeness.server_pace.pace_step`, the rule the in-process gate runs,
translated to Lua (:mod:`~crawler.luagen`) and run in ms on a server's hash.

:data:`PACE_LUA` defines ``pace(srv_key, kind, age, dur, P)``: it loads the server's
:class:`~crawler.frontier.politeness.server_pace.PaceState` from the hash fields of
:data:`PACE_FIELDS` (absent fields take ``PaceState()``'s values), runs ``pace_step`` at Redis's
``now``, writes the state back and pushes the server's next start (``nb``) by the hold it returns.
The Lua around the rule only moves numbers between the hash and the rule: it decides nothing.
:func:`pace_arguments` turns the order's ``frontier.pace`` into the scripts' parameters ``P``
(:func:`~crawler.frontier.politeness.server_pace.pace_params` in ms) and :func:`pace_inputs` a
fetch's answer into ``kind``, ``age`` and ``dur``. Pure and thread-safe.
"""

from __future__ import annotations

from crawler.frontier.politeness.server_pace import (
    PaceParams,
    PaceState,
    answer_kind,
    pace_params,
    pace_step,
)
from crawler.luagen import lua_function
from crawler.order.schema import PaceConfig

MS = 1000.0
"""The scripts' time unit per second."""
NO_PACE = (0, 0, 0, 0, 0, 0)
"""The pace parameters of an order without adaptive pace (factor 0: the scripts skip it)."""
NOTHING = (-1, -1, -1)
"""The pace inputs of a URI that fetched nothing from a server."""

PACE_FIELDS = (
    ("gap", "g", "%.6f"),
    ("peak", "gp", "%.6f"),
    ("raised_at", "gr", "%d"),
    ("ok_since_raise", "gk", "%d"),
    ("limit_gap", "gs", "%.6f"),
    ("baseline", "lb", "%.6f"),
    ("interval", "iv", "%.6f"),
    ("last_answer", "la", "%d"),
    ("slow_streak", "ss", "%d"),
)
""":class:`~crawler.frontier.politeness.server_pace.PaceState` field, its field in the server's
hash, and how the hash keeps it."""
PARAMS = PaceParams._fields[:-1]
"""The parameters the scripts receive (``unit`` is :data:`MS`)."""


def pace_arguments(config: PaceConfig) -> tuple[float, ...]:
    """The scripts' pace parameters ``P`` (:data:`PARAMS`, in ms); :data:`NO_PACE` when the pace
    is off."""
    if not config.enabled:
        return NO_PACE
    return tuple(pace_params(config, MS)[: len(PARAMS)])


def pace_inputs(
    fetched: tuple[int, int, int] | None, signals: frozenset[int], now_ms: int
) -> tuple[int, int, int]:
    """The scripts' kind, age and duration for a fetch's answer ``fetched`` (status, start ms,
    duration ms or -1; :func:`~crawler.frontier.rotation.queue_release.fetch_answer`): the kind of
    :func:`~crawler.frontier.politeness.server_pace.answer_kind`; :data:`NOTHING` when nothing was
    fetched."""
    if fetched is None:
        return NOTHING
    status, start_ms, duration_ms = fetched
    return answer_kind(status, signals), max(0, now_ms - start_ms), duration_ms


def _pace_lua() -> str:
    initial = PaceState()
    names = ", ".join(f"'{field}'" for _, field, _ in PACE_FIELDS)
    load = ",\n    ".join(
        f"{attr} = tonumber(f[{i}] or '{getattr(initial, attr)!r}')"
        for i, (attr, _, _) in enumerate(PACE_FIELDS, 1)
    )
    save = ",\n    ".join(
        f"'{field}', string.format('{fmt}', st.{attr})" for attr, field, fmt in PACE_FIELDS
    )
    params = ", ".join(f"{name} = tonumber(argv[first + {i}])" for i, name in enumerate(PARAMS))
    return (
        lua_function(pace_step)
        + f"""
-- The scripts' pace parameters P from ARGV[first] on (crawler.frontier.policy.pace_rule).
local function pace_params(argv, first)
  return {{{params}, unit = {MS!r}}}
end

-- pace_step on a server's hash (crawler.frontier.policy.pace_rule): kind -1 nothing fetched
-- (no-op), else an answer kind; age: ms since the fetch started; dur: its duration ms (-1:
-- unknown); P: pace_params.
local function pace(srv_key, kind, age, dur, P)
  if kind < 0 then return end
  local f = redis.call('HMGET', srv_key, {names})
  local st = {{
    {load}
  }}
  local hold = pace_step(st, P, now, now - age, kind, dur)
  redis.call('HSET', srv_key,
    {save})
  if hold > 0 then
    local nb = tonumber(redis.call('HGET', srv_key, 'nb') or '0')
    if now + hold > nb then redis.call('HSET', srv_key, 'nb', now + math.ceil(hold)) end
  end
end
"""
    )


PACE_LUA = _pace_lua()
"""Lua defining ``pace_step``, ``pace_params(argv, first)`` and ``pace(srv_key, kind, age, dur,
P)`` (the module docstring); the script that includes it defines ``now`` (ms) first."""
