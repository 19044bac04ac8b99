"""Trap budgets on the Redis frontier: a series' length and identity ride on each queued URI
through Redis and its members are counted in the crawl's shared tallies, so a calendar linking
months and years ends, with two workers, within one budget: as one process would end it."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from support.crawllog_parser import parse_file
from support.redis_servers import RedisServer
from support.trap_site import TrapSite

from crawler.distributed import run_workers

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
STORE = "crawler.frontier.redis.redis_store.RedisQueueStore"
FREE, AREA = 1 + 24, 60  # the first month and those within 3 steps; max_series_uris
WORKERS = 2

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def test_a_calendar_in_two_dimensions_ends_with_two_workers(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    # Each grid page answers a little late: one worker's threads cannot keep up alone.
    with TrapSite(grid_delay_s=0.1) as site:
        store = {"class": STORE, "params": {"url": redis_server.url, "shards": 2}}
        sets = [
            f"seeds.urls={json.dumps([site.base + '/?site=grid'])}",
            "seeds.file=null",
            "toe_threads=4",
            "logging.console=false",
            f"frontier.store={json.dumps(store)}",
            "scope.2.params.max_hops=100000",  # the trap budget alone must end the trap
            "limits.max_time_s=90",
            "frontier.politeness.min_delay_ms=25",
            "frontier.politeness.max_delay_ms=25",
            # Both workers take part: the one host over eight queues (by a hash of the whole
            # URI), with no cap on its connections, while the grid's slow answers keep one
            # worker's four threads busy. A worker holding the host's only queue, or both of
            # its two connections, may keep them while the other holds none (by design: the
            # host is fetched no faster either way).
            "frontier.queue_assignment.params.parallel_queues=8",
            "frontier.queue_assignment.params.parallel_queues_random_assignment=true",
            "frontier.politeness.host_max_connections=0",
        ]
        err = io.StringIO()
        run = tmp_path / "run"
        assert run_workers(EXAMPLE, sets, WORKERS, io.StringIO(), err, run_dir=run) == 0, (
            err.getvalue()
        )
        grid = [p for p in site.requested if p.startswith("/grid/")]
    assert len(grid) == len(set(grid))  # each month fetched by one worker only
    # The workers spend one budget: the area once, not once per worker.
    assert FREE < len(grid) <= FREE + AREA
    by_worker = [
        sum(1 for line in parse_file(p) if "/grid/" in line.uri and line.status == 200)
        for p in run.glob("workers/*/logs/crawl.log")
    ]
    assert len(by_worker) == WORKERS and all(by_worker), by_worker  # both took part
    lines = [line for p in run.glob("workers/*/logs/crawl.log") for line in parse_file(p)]
    assert all(line.status == 200 for line in lines if "/grid/" in line.uri)
    rejected = [p.read_text() for p in run.glob("workers/*/logs/scope.log")]
    assert any(f"trap:{site.base}/grid/{{n}}/{{n}}" in text for text in rejected)
