"""Quotas shared by the workers of a ``--workers`` crawl (real redis-server, a local site):
a host quota of N lets N URIs through crawl-wide, not N per worker, and a worker started again
on the crawl's Redis counts on from what was counted before."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support.crawllog_parser import CrawlLogLine, parse_file
from support.login_site import PASSWORD, USER, LoginSite
from support.redis_servers import RedisServer
from support.route_server import NOT_FOUND, Answer, RouteServer, page

from crawler.control.controller import CrawlController
from crawler.distributed import run_workers
from crawler.order.loader import load_order
from crawler.tally.redis_tally_store import RedisTallyStore

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
STORE = "crawler.frontier.redis.redis_store.RedisQueueStore"
PAGES = 40
QUOTA = 10

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def _route(host: str, path: str) -> Answer:
    if path == "/":
        time.sleep(0.5)
        return page(*(f"/p/{i}" for i in range(PAGES)))
    if path.startswith("/p/"):
        time.sleep(0.02)
        return page()
    return NOT_FOUND


def _route_once_both_workers_run(run: Path) -> Callable[[str, str], Answer]:
    """:func:`_route`, whose home page (the only seed) is answered once both workers of the
    crawl in ``run`` have opened their crawl.log: the second worker is up before the pages are
    found, however slowly a loaded machine starts it (a fixed wait once was not enough)."""

    def route(host: str, path: str) -> Answer:
        if path == "/":
            deadline = time.monotonic() + 60
            while len(list(run.glob("workers/*/logs/crawl.log"))) < 2:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.05)
        return _route(host, path)

    return route


def _sets(site: RouteServer, store: dict[str, object]) -> list[str]:
    return [
        f"seeds.urls={json.dumps([site.origin() + '/'])}",
        "seeds.file=null",
        "toe_threads=3",
        "logging.console=false",
        "robots.policy=ignore",  # robots.txt, a prerequisite, is never held back by a quota
        f"frontier.store={json.dumps(store)}",
        "frontier.class=crawler.frontier.RedisFrontier",
        f"chains.pre.quota_enforcer.params.host_max_urls={QUOTA}",
        "limits.max_time_s=60",
        # the host's queue waits between fetches, so that either worker may take it next
        "frontier.politeness.min_delay_ms=150",
        "frontier.politeness.max_delay_ms=150",
    ]


def _http_lines(paths: list[Path]) -> list[CrawlLogLine]:
    return [line for p in paths for line in parse_file(p) if line.uri.startswith("http")]


def test_two_workers_let_exactly_the_host_quota_through(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    with RouteServer(_route_once_both_workers_run(run)) as site:
        store = {"class": STORE, "params": {"url": redis_server.url, "shards": 2}}
        err = io.StringIO()
        code = run_workers(EXAMPLE, _sets(site, store), 2, io.StringIO(), err, run_dir=run)
        assert code == 0, err.getvalue()
        fetched = sum(site.hits.values())
    logs = sorted(run.glob("workers/*/logs/crawl.log"))
    assert len(logs) == 2
    lines = _http_lines(logs)
    fetched_lines = [line for line in lines if line.status > 0]
    assert len(fetched_lines) == QUOTA  # crawl-wide, not per worker
    assert fetched == QUOTA  # the site saw no more requests than that
    # the home page, its inferred /favicon.ico and the pages, each once; the rest blocked
    assert len(lines) == len({line.uri for line in lines}) == PAGES + 2
    blocked = [line for line in lines if line.status == -5003]
    assert len(blocked) == PAGES + 2 - QUOTA
    assert all("Q:host_max_urls" in line.annotations for line in blocked)
    # both workers took URIs of the host: per-worker tallies would have let more through
    assert all(any(line.uri.startswith("http") for line in parse_file(p)) for p in logs)


def test_a_worker_started_again_counts_on_from_the_crawls_tallies(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    with RouteServer(_route) as site:
        store = {
            "class": STORE,
            "params": {"url": redis_server.url, "namespace": "t1:", "worker_id": "w1"},
        }
        sets = [*_sets(site, store), "limits.max_documents=3"]
        first = CrawlController(load_order(EXAMPLE, sets), tmp_path / "first")
        first.run()
        first_lines = _http_lines([tmp_path / "first" / "logs" / "crawl.log"])
        done = len([line for line in first_lines if line.status > 0])
        assert 3 <= done < QUOTA  # stopped by the limit (and what was in flight then)
        # the same worker, started again on the crawl's Redis (its memory and run dir gone)
        sets = [*_sets(site, store)]
        second = CrawlController(load_order(EXAMPLE, sets), tmp_path / "second")
        second.run()
    second_lines = _http_lines([tmp_path / "second" / "logs" / "crawl.log"])
    assert len([line for line in second_lines if line.status > 0]) == QUOTA - done
    assert all(line.status > 0 or line.status == -5003 for line in second_lines), second_lines
    tallies = RedisTallyStore.connect(redis_server.url, "t1:")
    try:
        assert tallies.read([f"h:127.0.0.1:{site.port}"])[0][0] == QUOTA
    finally:
        tallies.close()


def test_two_workers_log_in_once_and_share_the_session(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    # Enough members pages that both workers take some (with 8, one worker once took them all
    # on a loaded machine, which left the adopted session untested).
    with LoginSite(members_pages=16) as site:
        cred = {
            "domain": f"127.0.0.1:{site.port}",
            "login_uri": f"{site.base}/login",
            "fields": {"user": USER, "pass": PASSWORD},
        }
        store = {"class": STORE, "params": {"url": redis_server.url, "shards": 2}}
        sets = [
            f"seeds.urls={json.dumps([site.base + '/', site.base + '/members/'])}",
            "seeds.file=null",
            "toe_threads=3",
            "logging.console=false",
            f"frontier.store={json.dumps(store)}",
            "frontier.class=crawler.frontier.RedisFrontier",
            "chains.pre.preselector.params.block_by_regex=.*/logout",
            "chains.fetch.fetch_http.params.form_logins=" + json.dumps([cred]),
            "frontier.politeness.min_delay_ms=150",
            "frontier.politeness.max_delay_ms=150",
            "limits.max_time_s=60",
        ]
        err = io.StringIO()
        run = tmp_path / "run"
        assert run_workers(EXAMPLE, sets, 2, io.StringIO(), err, run_dir=run) == 0, err.getvalue()
        posts, hits = list(site.posts), list(site.members_hits)
    assert len(posts) == 1  # one login for the crawl
    assert hits and all(valid for _, valid in hits)  # every members page with the session
    members = [
        sum(1 for line in parse_file(p) if "/members/p" in line.uri and line.status == 200)
        for p in sorted(run.glob("workers/*/logs/crawl.log"))
    ]
    assert sum(members) == 16 and all(members), members  # both workers fetched members pages
