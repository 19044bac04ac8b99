"""The adaptive pace is written once (``server_pace.pace_step``): the Redis scripts run its Lua
translation (``pace_rule.PACE_LUA``) on a server's hash, in ms, and the in-process gate the
function itself, in seconds. On a real redis-server both take the same answers to the same gaps
and holds, answer by answer."""

from __future__ import annotations

import random

import pytest
import redis
from support.redis_servers import RedisServer

from crawler.frontier.policy.pace_rule import PACE_FIELDS, PACE_LUA, pace_arguments
from crawler.frontier.politeness.server_pace import PaceState, ServerPace
from crawler.order.schema import PaceConfig

pytestmark = pytest.mark.timeout(120)

# The scripts define ``now`` (ms) from Redis's TIME: here the test's clock gives it.
_SCRIPT = (
    "local now = tonumber(ARGV[1])\n"
    + PACE_LUA
    + """
pace(KEYS[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), pace_params(ARGV, 5))
local f = redis.call('HMGET', KEYS[1], 'g', 'nb', 'gs')
return {f[1] or '0', f[2] or '0', f[3] or '0'}
"""
)


def _answers(seed: int) -> list[tuple[int, int, int, int]]:
    """(ms since the start, status, fetch age ms, duration ms): bursts of refusals, slow
    streaks, failed fetches and long healthy spells."""
    rng = random.Random(seed)
    now, out = 10_000, []
    for _ in range(2000):
        now += rng.choice((3, 8, 20, 40, 45, 90))
        roll = rng.random()
        status = 429 if roll < 0.02 else -2 if roll < 0.03 else 200
        duration = 2500 if rng.random() < 0.01 else rng.randint(1, 30)
        age = duration + rng.choice((0, 0, 0, 300))
        out.append((now, status, age, duration))
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_the_scripts_and_the_gate_pace_a_server_alike(redis_server: RedisServer, seed: int) -> None:
    config = PaceConfig()
    pace, st = ServerPace(config), PaceState()
    signals = frozenset(config.signal_statuses)
    client = redis.Redis.from_url(redis_server.url)
    script = client.register_script(_SCRIPT)
    holds = raised = 0
    try:
        nb_py = 0.0
        for now, status, age, duration in _answers(seed):
            hold = pace.observe(st, now / 1000, (now - age) / 1000, status, duration / 1000)
            if hold:
                nb_py = max(nb_py, now / 1000 + hold)
                raised += 1
                holds += hold > st.gap
            kind = 1 if status in signals else 0 if status > 0 else 2
            args = [now, kind, age, duration, *pace_arguments(config)]
            gap_ms, nb_ms, limit_ms = script(keys=["v:srv"], args=args)
            assert float(gap_ms) == pytest.approx(st.gap * 1000, rel=1e-5, abs=1e-3), now
            assert float(limit_ms) == pytest.approx(st.limit_gap * 1000, rel=1e-5, abs=1e-3)
            assert float(nb_ms) == pytest.approx(nb_py * 1000, abs=1.0), now
        stored = client.hgetall("v:srv")
    finally:
        client.close()
    assert raised > 5 and holds > 0  # the sequence did exercise raises and refusal holds
    assert {field.encode() for _, field, _ in PACE_FIELDS} <= set(stored)
