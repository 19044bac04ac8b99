"""Sheets in a crawl shared through Redis: a sheet one worker takes in (an action file) is
published crawl-wide and the other workers' control followers put it in force; an invalid
crawl-wide document changes nothing."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml
from support.redis_servers import RedisServer

from crawler.control.controller import CrawlController
from crawler.curi import CrawlURI
from crawler.distributed.worker import ControlFollower
from crawler.frontier.redis.redis_registry import CrawlRegistry
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


def test_crawler_sheets_publishes_to_a_distributed_crawl(
    redis_server: RedisServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from crawler.cli import main
    from crawler.order.loader import effective_yaml

    run = tmp_path / "run"
    (run / "workers" / "w1").mkdir(parents=True)
    info = {"redis_url": redis_server.url, "namespace": NS, "name": "x", "crawl_id": 1}
    (run / "distributed.json").write_text(json.dumps(info))
    order = load_order(EXAMPLE)
    (run / "workers" / "w1" / "order.effective.yaml").write_text(effective_yaml(order))
    change = tmp_path / "slow.sheets"
    change.write_text(yaml.safe_dump(SHEET))
    assert main(["sheets", str(run), str(change)]) == 0, capsys.readouterr().err
    registry = CrawlRegistry(redis_server.url)
    version, document = registry.sheets(NS)
    assert version == 1 and "slow" in document
    other = tmp_path / "other.sheets"
    other.write_text(yaml.safe_dump([{"name": "more", "hosts": ["b.org"], "settings": {}}]))
    assert main(["sheets", str(run), str(other)]) == 0
    names = [s["name"] for s in yaml.safe_load(registry.sheets(NS)[1])["sheets"]]
    assert names == ["slow", "more"]


def test_a_sheet_paces_one_host_across_the_workers_of_a_redis_crawl(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    import itertools
    import json
    from datetime import UTC, datetime
    from io import StringIO

    from support.crawllog_parser import parse_file
    from support.route_server import NOT_FOUND, Answer, RouteServer, page

    from crawler.distributed import run_workers

    def route(host: str, path: str) -> Answer:
        if path == "/":
            return page(*(f"/p{n}" for n in range(8)))
        return page() if path.startswith("/p") else NOT_FOUND

    def start_ms(timing: str) -> int:
        stamp = datetime.strptime(timing.split("+")[0], "%Y%m%d%H%M%S%f").replace(tzinfo=UTC)
        return int(stamp.timestamp() * 1000)

    sheet = {
        "name": "slow-ip",
        "hosts": ["127.0.0.1"],
        "settings": {"frontier.politeness": {"min_delay_ms": 300, "max_delay_ms": 600}},
    }
    with RouteServer(route) as server:
        store = {
            "class": "crawler.frontier.redis.redis_store.RedisQueueStore",
            "params": {"url": redis_server.url, "shards": 2},
        }
        seeds = [f"{server.origin('127.0.0.1')}/", f"{server.origin('localhost')}/"]
        sets = [
            f"seeds.urls={seeds}",
            "seeds.file=null",
            "name=redis-sheets",
            "toe_threads=2",
            "logging.console=false",
            "robots.policy=ignore",
            "frontier.politeness.delay_factor=0",
            "frontier.politeness.min_delay_ms=0",
            "frontier.politeness.max_delay_ms=0",
            f"frontier.store={json.dumps(store)}",
            "sheets=" + json.dumps([sheet]),
        ]
        out, err = StringIO(), StringIO()
        assert run_workers(EXAMPLE, sets, 2, out, err, run_dir=tmp_path / "run") == 0, (
            err.getvalue()
        )
    lines = [
        line
        for log in (tmp_path / "run" / "workers").glob("*/logs/crawl.log")
        for line in parse_file(log)
        if line.status > 0 and line.timing
    ]
    slow = sorted(start_ms(x.timing or "") for x in lines if "//127.0.0.1:" in x.uri)
    fast = [x for x in lines if "//localhost:" in x.uri]
    assert len(slow) >= 9 and len(fast) >= 9
    assert min(b - a for a, b in itertools.pairwise(slow)) >= 300
