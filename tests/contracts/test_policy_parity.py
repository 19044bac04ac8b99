"""One frontier policy over every store: the LevelDB, memory, Redis and Redis Cluster frontiers
driven through the same recorded traces (:mod:`policy_traces`) must make the same decisions — finish
outcomes, retries after 429 and Retry-After, budgets, the order of eligible queues (on a Cluster
too, whose nodes each keep their own clock), the lateness guard —
and the rules the Redis scripts run atomically (server admission and holds, success-count
precedence), translated from the Python ones, must answer as they do on the same inputs."""

from __future__ import annotations

import itertools
import math
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from policy_traces import TRACES, ZERO_POLITENESS, Trace, curi_data

from crawler.clock import ManualClock
from crawler.curi import CrawlURI
from crawler.frontier import (
    HostnameQueueAssignmentPolicy,
    LevelDBQueueStore,
    MemoryQueueStore,
    WorkQueueFrontier,
)
from crawler.frontier.policy.lateness_guard import LatenessGuard
from crawler.frontier.policy.queue_precedence import (
    SUCCESS_PRECEDENCE_LUA,
    success_counts_precedence,
)
from crawler.frontier.policy.server_admission import (
    ADMISSION_LUA,
    HELD_START_LUA,
    admission,
    held_start,
    start_spacing,
)
from crawler.frontier.redis.redis_frontier import RedisFrontier
from crawler.frontier.redis.redis_store import RedisQueueStore, RedisQueueStoreParams
from crawler.order.schema import FrontierConfig
from crawler.uniq import MemoryUriUniqFilter
from crawler.uniq.redis_uniq import RedisUriUniqFilter, RedisUriUniqFilterParams

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "redis"))
from support.redis_servers import REDIS_SERVER, RedisServer

pytestmark = pytest.mark.timeout(60)

STORES = [
    "leveldb",
    "memory",
    pytest.param("redis", marks=pytest.mark.redis),
    pytest.param("redis-cluster", marks=pytest.mark.redis),
]
_namespaces = itertools.count()


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One redis-server for the module (each frontier gets its own namespace)."""
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed (make test installs it)")
    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    try:
        yield server.url
    finally:
        server.stop()


class Driven:
    """A frontier under a trace, with its clock and lateness guard."""

    def __init__(self, kind: str, config: FrontierConfig, tmp: Path, redis_url: str) -> None:
        self.kind = kind
        self.clock = ManualClock(time.time())
        self.frontier: Any
        if kind.startswith("redis"):
            ns = f"p{next(_namespaces)}:"
            store = RedisQueueStore(
                RedisQueueStoreParams(url=redis_url, namespace=ns, worker_id="w1", shards=4)
            )
            uniq = RedisUriUniqFilter(RedisUriUniqFilterParams(url=redis_url, namespace=ns))
            self.frontier = RedisFrontier(store, HostnameQueueAssignmentPolicy(), uniq, config)
        else:
            qstore = LevelDBQueueStore() if kind == "leveldb" else MemoryQueueStore()
            self.frontier = WorkQueueFrontier(
                qstore,
                HostnameQueueAssignmentPolicy(),
                MemoryUriUniqFilter(),
                config,
                clock=self.clock,
            )
        self.frontier.open(tmp)

    @property
    def shared(self) -> bool:
        """Whether the frontier is a Redis one (real time, FINISHes sent in rounds)."""
        return self.kind.startswith("redis")

    @property
    def guard(self) -> LatenessGuard:
        f = self.frontier
        guard: LatenessGuard = f.guard if self.shared else f.sched.guard
        return guard

    def now_wall_ms(self) -> int:
        return int((time.time() if self.shared else self.clock.time()) * 1000)

    def wait(self, seconds: float) -> None:
        if self.shared:
            time.sleep(seconds)
        else:
            self.clock.advance(seconds)

    def take(self) -> CrawlURI | None:
        curi: CrawlURI | None = self.frontier.next(0)
        return curi

    def finish(self, curi: CrawlURI) -> bool:
        returned: bool = self.frontier.finished(curi)
        if self.shared:
            assert self.frontier.flush(5.0)
        return returned


def run_trace(driven: Driven, trace: Trace) -> list[tuple[Any, ...]]:
    """Drive ``driven`` through ``trace``; the decisions seen, step by step, beside the ones
    the trace expects (pairs that must agree)."""
    seen: list[tuple[Any, ...]] = []
    out: dict[str, CrawlURI] = {}
    f = driven.frontier
    for step in trace.steps:
        op = step[0]
        if op == "schedule":
            f.schedule(CrawlURI(step[1], precedence=step[2]))
        elif op == "take":
            curi = driven.take()
            seen.append((op, curi.uri if curi else None, step[1]))
            if curi is not None:
                out[curi.uri] = curi
                curi.fetch_start_ms = driven.now_wall_ms()
                curi.fetch_duration_ms = 0
        elif op == "finish":
            curi = out.pop(step[1])
            curi.status = step[2]
            curi.data.update(curi_data(step[3]))
            curi.retry_delay_s = 0.0
            returned = driven.finish(curi)
            seen.append((op, step[1], (returned, curi.fetch_attempts), step[4]))
        elif op == "wait":
            driven.wait(step[1])
        elif op == "rotate":
            driven.guard.to_rotate = step[1]
        elif op == "totals":
            snap = f.snapshot()
            got = (snap.succeeded, snap.failed, snap.disregarded, snap.queued)
            seen.append((op, (*got, snap.queues.get("retired", 0)), step[1:]))
        elif op == "guard":
            guard = driven.guard
            seen.append((op, guard.rotated, step[1]))
            seen.append(("late", guard.late_s >= step[2], True))
        else:
            raise AssertionError(f"unknown step {step!r}")
    return seen


@pytest.mark.parametrize("kind", STORES)
@pytest.mark.parametrize("trace", TRACES, ids=[t.name for t in TRACES])
def test_every_store_makes_the_traced_decisions(
    kind: str, trace: Trace, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = ""
    if kind == "redis":
        url = request.getfixturevalue("redis_url")
    elif kind == "redis-cluster":
        url = request.getfixturevalue("redis_cluster").url
    overrides = dict(trace.config)
    overrides.setdefault("politeness", ZERO_POLITENESS)
    politeness = {"host_max_connections": 0, **overrides["politeness"]}
    config = FrontierConfig(**{**overrides, "politeness": politeness})
    driven = Driven(kind, config, tmp_path, url)
    try:
        seen = run_trace(driven, trace)
    finally:
        driven.frontier.close()
    got = [s[:-1] for s in seen]
    expected = [(*s[:-2], s[-1]) for s in seen]
    assert got == expected


# ------------------------------------------------------------ the atomic rules, on the same inputs

_ADMIT_SCRIPT = (
    "local now = tonumber(ARGV[1])\n"
    + ADMISSION_LUA
    + """
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'a', ARGV[2], 'nb', ARGV[3], 'g', ARGV[4])
local r = admission(KEYS[1], tonumber(ARGV[5]), tonumber(ARGV[6]), false)
return {r, tonumber(redis.call('HGET', KEYS[1], 'a')), tonumber(redis.call('HGET', KEYS[1], 'nb'))}
"""
)

_HELD_SCRIPT = (
    HELD_START_LUA
    + """
local out = {}
for i = 1, #ARGV, 4 do
  local args = {}
  for j = 0, 3 do args[j + 1] = tonumber(ARGV[i + j]) end
  out[#out + 1] = tostring(held_start(args[1], args[2], args[3], args[4]))
end
return out
"""
)

_PRECEDENCE_SCRIPT = (
    SUCCESS_PRECEDENCE_LUA
    + """
local out = {}
for i = 2, #ARGV do
  out[#out + 1] = success_counts_precedence(tonumber(ARGV[1]), tonumber(ARGV[i]))
end
return out
"""
)


@pytest.mark.redis
def test_redis_scripts_apply_the_python_rules(redis_url: str) -> None:
    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        counts = [0, 1, 99, 100, 101, 1099, 1100, 2099, 2100, 50_000]
        lua = client.eval(_PRECEDENCE_SCRIPT, 0, 3, *counts)
        assert lua == [success_counts_precedence(3, n) for n in counts]
        assert lua[:4] == [3, 3, 3, 4]  # the step after 100 successes, written once

        now = 10_000
        cases = itertools.product((0, 1, 2), (0, 9_000, 10_500), (0, 250), (0, 2), (0, 100))
        for active, nb, gap, max_conn, interval in cases:
            r, active_after, nb_after = client.eval(
                _ADMIT_SCRIPT, 1, "srv", now, active, nb, gap, max_conn, interval
            )
            wait = admission(active, max_conn, now, nb)
            if wait is None:
                spacing = start_spacing(interval, gap)
                assert (r, active_after) == (0, active + 1)
                assert nb_after == (now + math.ceil(spacing) if spacing else nb)
            else:
                assert r == (-1 if wait == math.inf else wait)
                assert (active_after, nb_after) == (active, nb)

        holds = list(itertools.product((0, 9_000, 10_500), (0, 400), (0, 250)))
        flat = [x for nb, backoff, hold in holds for x in (nb, now, backoff, hold)]
        lua_held = [float(x) for x in client.eval(_HELD_SCRIPT, 0, *flat)]
        assert lua_held == [held_start(nb, now, b, h) for nb, b, h in holds]
        assert held_start(9_000, now, 400, 250) == now + 400 + 250  # the debt adds up
    finally:
        client.close()
