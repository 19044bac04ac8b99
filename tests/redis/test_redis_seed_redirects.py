"""Workers sharing Redis share the seeds that seeds' redirects add: a crawl of two workers
crawls under a seed's redirect target, and a worker that meets a URI scheduled by a worker that
knew a newer seed learns that seed before it scopes the URI's links."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from support.redis_servers import RedisServer
from support.route_server import NOT_FOUND, Answer, RouteServer, page, redirect

from crawler.curi import CrawlURI
from crawler.decide import RejectDecideRule, SurtPrefixedDecideRule
from crawler.decide.decide_rule import DecideRuleSequence
from crawler.distributed import run_workers
from crawler.frontier.redis.redis_registry import CrawlRegistry
from crawler.order.loader import load_order
from crawler.seeds.seed_module import SeedModule
from crawler.stats import CrawlStats

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
STORE = "crawler.frontier.redis.redis_store.RedisQueueStore"
PAGES = 30

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def test_pages_under_a_seeds_redirect_are_crawled_by_every_worker(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    port = 0

    def route(host: str, path: str) -> Answer:
        if host == "127.0.0.1" and path == "/":
            return redirect(f"http://localhost:{port}/new/", 301)
        if host != "localhost" or not path.startswith("/new/"):
            return NOT_FOUND
        if path == "/new/":
            return page(*(f"/new/p{n}.html" for n in range(PAGES)))
        if path.startswith("/new/p"):
            # Scoped by whichever worker fetched p<n>: in scope only through the new prefix.
            return page(path.replace("/p", "/q"))
        return page()

    with RouteServer(route) as server:
        port = server.port
        store = {"class": STORE, "params": {"url": redis_server.url, "shards": 4}}
        sets = [
            f"seeds.urls=['http://127.0.0.1:{port}/']",
            "seeds.file=null",
            "name=redis-seed-redirects",
            "toe_threads=3",
            "logging.console=false",
            "fetch.allow_private=[127.0.0.0/8]",  # localhost, the redirect target, is "public"
            f"frontier.store={json.dumps(store)}",
        ]
        out, err = io.StringIO(), io.StringIO()
        code = run_workers(EXAMPLE, sets, 2, out, err, run_dir=tmp_path / "run")
        assert code == 0, err.getvalue()
        hits = dict(server.hits)
    for n in range(PAGES):
        assert hits.get(f"localhost/new/q{n}.html") == 1, n
    report = (tmp_path / "run" / "reports" / "seeds-report.txt").read_text().splitlines()
    assert f"200 CRAWLED http://localhost:{port}/new/" in report


def _worker(registry: CrawlRegistry, ns: str) -> tuple[SeedModule, DecideRuleSequence]:
    """One worker's seed module and scope, attached to the crawl's shared seeds as a worker
    process attaches them."""
    order = load_order(EXAMPLE, ["seeds.urls=['http://a.example/']", "seeds.file=null"])
    scope = DecideRuleSequence([RejectDecideRule(), SurtPrefixedDecideRule()])
    seeds = SeedModule(order, scope, CrawlStats(), lambda curi: True)
    seeds.load(None, lambda *args: None)
    seeds.publish = lambda uri, via: registry.add_seed(ns, uri, via)
    seeds.fetch_shared = lambda start: registry.seeds_since(ns, start)
    return seeds, scope


def test_a_uri_stamped_with_a_newer_seed_brings_that_seed_first(
    redis_server: RedisServer,
) -> None:
    registry = CrawlRegistry(redis_server.url)
    ns = registry.start("stamped-seeds").namespace
    first, _ = _worker(registry, ns)
    second, second_scope = _worker(registry, ns)
    under_new = CrawlURI("http://b.example/page.html", hop_path="RL")
    assert not second_scope.accepts(under_new)
    # The first worker meets a seed's redirect to b.example, then schedules a page under it.
    assert first.add_discovered("http://b.example/", "http://a.example/")
    page_curi = CrawlURI("http://b.example/", hop_path="R", is_seed=True)
    first.stamp([page_curi])
    assert page_curi.data["seedsVersion"] == first.version == 1
    # The second worker has not polled the shared seeds; the stamp makes it catch up.
    assert second.version == 0
    second.catch_up_for(page_curi)
    assert second.version == 1
    assert second_scope.accepts(under_new)
    assert "http://b.example/" in second.uris
    second.catch_up_for(page_curi)  # up to date: no second fetch, nothing added twice
    assert second.uris.count("http://b.example/") == 1
    registry.close()
