"""The Redis frontier counts the politeness delay from the end of the fetch too: FINISH, which
snoozes the queue by Redis's clock, gets what is left of the delay, so a worker's processing of
the URI does not add to the gap the server sees between its answer and the next request; and
the robots.txt a worker fetches for itself (a local prerequisite) is followed by the delay too,
not by the first page at once."""

from __future__ import annotations

import io
import json
import os
import statistics
from pathlib import Path

import pytest
from support.politeness_site import TimingSite, order_sets
from support.redis_servers import RedisServer

from crawler.distributed import run_workers

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
STORE = "crawler.frontier.redis.redis_store.RedisQueueStore"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def test_gap_between_a_hosts_fetches_is_the_delay_with_a_redis_frontier(
    redis_server: RedisServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The worker processes load politeness_site.Sleeper from the tests directory.
    tests_dir = str(ROOT / "tests")
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [tests_dir, os.environ.get("PYTHONPATH")]))
    )
    delay_s, processing_s = 0.8, 0.5
    store = {"class": STORE, "params": {"url": redis_server.url, "shards": 2}}
    with TimingSite(pages=4) as site:
        sets = [
            *order_sets(site, delay_s, processing_s, robots="obey"),
            "name=gap-test",
            f"frontier.store={json.dumps(store)}",
        ]
        err = io.StringIO()
        code = run_workers(EXAMPLE, sets, 1, io.StringIO(), err, run_dir=tmp_path / "run")
        assert code == 0, err.getvalue()
    assert site.paths() == ["/robots.txt", "/", "/p1", "/p2", "/p3", "/p4"]
    assert all(gap >= delay_s for gap in site.gaps(after_write=False))
    assert statistics.median(site.gaps(after_write=True)) < delay_s + processing_s
