"""``--workers 2`` recrawls on Redis: every worker of the recrawl imports the history of every
worker of the earlier run (whichever worker fetched a URI then, another may fetch it now), and
a ``--workers`` recrawl of a single-process crawl works too (each worker opens its own
snapshot of the one earlier history)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from recrawl_support import crawl_log, not_modified, reached
from support.redis_servers import RedisServer
from support.sample_crawl import crawl_sample_site

from crawler.demo import SampleSite
from crawler.distributed import run_workers

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
STORE = "crawler.frontier.redis.redis_store.RedisQueueStore"

pytestmark = [pytest.mark.redis, pytest.mark.slow, pytest.mark.timeout(240)]


def workers_crawl(
    redis: RedisServer, site: SampleSite, run_dir: Path, name: str, *extra: str
) -> None:
    store = {"class": STORE, "params": {"url": redis.url, "shards": 8}}
    sets = [
        "seeds.file=null",
        f"name={name}",
        "toe_threads=4",
        "logging.console=false",
        "frontier.politeness.delay_factor=0",
        "frontier.politeness.min_delay_ms=0",
        "frontier.politeness.max_delay_ms=0",
        f"frontier.store={json.dumps(store)}",
        f"seeds.urls={site.base_urls!r}",
        *extra,
    ]
    out, err = io.StringIO(), io.StringIO()
    assert run_workers(EXAMPLE, sets, 2, out, err, run_dir=run_dir) == 0, err.getvalue()


def fetched_ok(run_dir: Path) -> set[str]:
    return {u for u, line in crawl_log(run_dir).items() if line.status == 200 and "robots" not in u}


def test_a_workers_recrawl_of_a_workers_crawl_reaches_every_url(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    with SampleSite(pages_per_host=30, validators=True) as site:
        first, second = tmp_path / "first", tmp_path / "second"
        workers_crawl(redis_server, site, first, "first")
        assert len(list(first.glob("workers/*/state/history/CURRENT"))) == 2
        assert site.expected_urls() <= reached(first)
        workers_crawl(redis_server, site, second, "second", f"history.import_from={str(first)!r}")
    assert reached(second) == reached(first)
    assert not_modified(second) == fetched_ok(first)


def test_a_workers_recrawl_of_a_single_process_crawl(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    with SampleSite(pages_per_host=30, validators=True) as site:
        first, second = tmp_path / "first", tmp_path / "second"
        crawl_sample_site(site, first, "toe_threads=4")
        workers_crawl(redis_server, site, second, "second", f"history.import_from={str(first)!r}")
    assert reached(second) == reached(first)
    assert not_modified(second) == fetched_ok(first)
    assert len(list(second.glob("workers/*/state/history-import/0/IMPORTED-FROM"))) == 2
