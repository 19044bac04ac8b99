"""The Redis frontier's pace (the Lua PACE_FN, on a real redis-server) and ServerPace (Python)
take the same answers to the same gaps and holds: the rule is written once, in two languages."""

from __future__ import annotations

import random

import pytest
import redis
from support.redis_servers import RedisServer

from crawler.frontier.redis.redis_scripts import PACE_FN
from crawler.frontier.server_pace import PaceState, ServerPace
from crawler.order.schema import PaceConfig

pytestmark = pytest.mark.timeout(120)

# PACE_FN reads the time from a global ``now`` (ms): here the test's clock gives it.
_SCRIPT = (
    "local now = tonumber(ARGV[1])\n"
    + PACE_FN
    + """
local P = {}
for i = 5, 10 do P[#P + 1] = tonumber(ARGV[i]) end
pace(KEYS[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), P)
local f = redis.call('HMGET', KEYS[1], 'g', 'nb')
return {f[1] or '0', f[2] or '0'}
"""
)


def _answers(seed: int) -> list[tuple[int, int, int, int]]:
    """(ms since the start, status, fetch age ms, duration ms): bursts of refusals, slow
    streaks and long healthy spells."""
    rng = random.Random(seed)
    now, out = 10_000, []
    for _ in range(2000):
        now += rng.choice((3, 8, 20, 40, 45, 90))
        status = 429 if rng.random() < 0.02 else 200
        duration = 2500 if rng.random() < 0.01 else rng.randint(1, 30)
        age = duration + rng.choice((0, 0, 0, 300))
        out.append((now, status, age, duration))
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_lua_and_python_paces_agree_answer_by_answer(redis_server: RedisServer, seed: int) -> None:
    config = PaceConfig()
    pace, st = ServerPace(config), PaceState()
    params = [
        config.increase_factor,
        config.fast_increase_factor,
        config.decrease_fraction,
        config.max_gap_ms,
        config.slow_response_factor,
        config.slow_response_min_ms,
    ]
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
                holds += hold > st.gap_s
            kind = 1 if status == 429 else 0
            gap_ms, nb_ms = script(keys=["v:srv"], args=[now, kind, age, duration, *params])
            assert float(gap_ms) == pytest.approx(st.gap_s * 1000, rel=1e-5, abs=1e-3), now
            assert float(nb_ms) == pytest.approx(nb_py * 1000, abs=1.0), now
    finally:
        client.close()
    assert raised > 5 and holds > 0  # the sequence did exercise raises and refusal holds
