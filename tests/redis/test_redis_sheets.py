"""Sheets in a crawl shared through Redis: a sheet one worker takes in (an action file) is
published crawl-wide and the other workers' control followers put it in force; an invalid
crawl-wide document changes nothing."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml
from redis_servers import RedisServer

from crawler.controller import CrawlController
from crawler.curi import CrawlURI
from crawler.distributed.worker import ControlFollower
from crawler.frontier.redis_registry import CrawlRegistry
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
NS = "crawler:sheets-test:"

pytestmark = [pytest.mark.timeout(60)]

SHEET = {
    "sheets": [
        {
            "name": "slow",
            "hosts": ["example.org"],
            "settings": {"frontier.politeness.min_delay_ms": 4321},
        }
    ]
}


def worker(tmp_path: Path, wid: str) -> CrawlController:
    order = load_order(EXAMPLE, ["seeds.file=null", "seeds.urls=['http://example.org/']"])
    run = tmp_path / wid
    run.mkdir()
    return CrawlController(order, run, install_signals=False)


def test_a_sheet_taken_in_by_one_worker_reaches_the_others(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    registry = CrawlRegistry(redis_server.url)
    first, second = worker(tmp_path, "w1"), worker(tmp_path, "w2")
    first.publish_sheets = lambda text: registry.publish_sheets(NS, text) and None
    follower = ControlFollower(registry, NS, "w2", second)
    follower.start()
    try:
        first.update_sheets(yaml.safe_dump(SHEET), "x.sheets")
        deadline = time.monotonic() + 10
        while not second.sheets.active and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        follower.stop()
    uri = CrawlURI("http://example.org/a")
    assert second.sheets.politeness_for(uri).min_delay_ms == 4321
    assert first.sheets.politeness_for(uri).min_delay_ms == 4321
    assert "slow" in (tmp_path / "w2" / "sheets.yaml").read_text()
    assert registry.sheets(NS)[0] == 1


def test_an_invalid_crawl_wide_document_changes_nothing(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    registry = CrawlRegistry(redis_server.url)
    one = worker(tmp_path, "w1")
    follower = ControlFollower(registry, NS, "w1", one)
    registry.publish_sheets(NS, yaml.safe_dump(SHEET))
    follower.follow_sheets()
    bad = {"sheets": [{"name": "bad", "hosts": ["a.org"], "settings": {"nope.key": 1}}]}
    registry.publish_sheets(NS, yaml.safe_dump(bad))
    follower.follow_sheets()
    assert [s.name for s in one.sheets.configs] == ["slow"]
    assert follower.sheets_version == 2
