"""CrawlReporter: status.json's slow parts (held servers, processor reports) are read once every
SLOW_PARTS_INTERVAL_S, not at every status (each held-servers reading of the Redis frontier is
a SCAN of the whole keyspace)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from crawler import ManualClock
from crawler.chain import ProcessorChains
from crawler.control.crawl_reporter import SLOW_PARTS_INTERVAL_S, CrawlReporter
from crawler.frontier.frontier import FrontierSnapshot
from crawler.stats import CrawlStats

pytestmark = pytest.mark.timeout(20)


class CountingHeld:
    """A frontier's held-servers ability whose reading changes at every call."""

    def __init__(self) -> None:
        self.calls = 0

    def held_servers(self) -> tuple[int, int]:
        self.calls += 1
        return self.calls, 10 * self.calls


class FakeFrontier:
    def snapshot(self) -> FrontierSnapshot:
        return FrontierSnapshot()


def make_crawl(tmp_path: Path, held: CountingHeld) -> Any:
    return SimpleNamespace(
        order=SimpleNamespace(name="t", toe_threads=2),
        run_dir=tmp_path,
        clock=ManualClock(),
        logger=None,
        state="RUNNING",
        exit_status="",
        stats=CrawlStats(),
        chains=ProcessorChains([]),
        block_rules=SimpleNamespace(patterns=[]),
        seed_uris=[],
        display=None,
        logs=None,
        frontier=FakeFrontier(),
        frontier_abilities=SimpleNamespace(queues=None, held=held),
        pool=None,
        disk_guard=SimpleNamespace(status=dict),
        pause_reasons=set(),
    )


def test_held_servers_read_once_per_slow_interval(tmp_path: Path) -> None:
    held = CountingHeld()
    crawl = make_crawl(tmp_path, held)
    reporter = CrawlReporter(crawl)
    published = []
    for _ in range(int(SLOW_PARTS_INTERVAL_S) * 3):  # a status every second for 15 s
        reporter.publish_status()
        doc = json.loads((tmp_path / "status.json").read_text())
        published.append(doc["held_servers"])
        crawl.clock.advance(1.0)
    assert held.calls == 3  # at 0 s, 5 s and 10 s
    assert published == [1] * 5 + [2] * 5 + [3] * 5
