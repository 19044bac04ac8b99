"""The same rules on the Redis frontier, with two worker processes: a deferral for a prerequisite
(each worker's own robots.txt, a form login) costs a URI none of its tries, and a server that
breaks HTTP is given up on once the same malformed response comes back (see
tests/integration/test_prerequisite_tries.py for the LevelDB frontier)."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest
from support.broken_site import BROKEN, BrokenSite
from support.crawllog_parser import CrawlLogLine, parse_file
from support.login_site import LoginSite
from support.redis_servers import RedisServer

from crawler.curi import CrawlURI
from crawler.distributed import run_workers
from crawler.frontier import frontier_summary_report, note_protocol_error
from crawler.frontier.assignment import HostnameQueueAssignmentPolicy
from crawler.frontier.frontier_abilities import FrontierAbilities
from crawler.frontier.redis.redis_frontier import RedisFrontier
from crawler.frontier.redis.redis_store import RedisQueueStore, RedisQueueStoreParams
from crawler.order.schema import FrontierConfig, RetriesConfig
from crawler.uniq.redis_uniq import RedisUriUniqFilter, RedisUriUniqFilterParams

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
STORE = "crawler.frontier.redis.redis_store.RedisQueueStore"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def crawl(run_dir: Path, url: str, seed: str, *extra: str) -> dict[str, CrawlLogLine]:
    store = {"class": STORE, "params": {"url": url, "shards": 4}}
    sets = [
        f"seeds.urls={json.dumps([seed])}",
        "seeds.file=null",
        "name=prereq-test",
        "toe_threads=3",
        "logging.console=false",
        f"frontier.store={json.dumps(store)}",
        "frontier.politeness.delay_factor=0",
        "frontier.politeness.min_delay_ms=0",
        "frontier.politeness.max_delay_ms=0",
        "chains.pre.preselector.params.block_by_regex=.*/logout",
        "limits.max_time_s=90",
        *extra,
    ]
    err = io.StringIO()
    code = run_workers(EXAMPLE, sets, 2, io.StringIO(), err, run_dir=run_dir)
    assert code == 0, err.getvalue()
    lines = [line for p in run_dir.glob("workers/*/logs/crawl.log") for line in parse_file(p)]
    return {line.uri: line for line in lines if "formLogin:ok" not in line.annotations}


def tries(line: CrawlLogLine) -> int:
    marks = [a for a in line.annotations if a.endswith("t") and a[:-1].isdigit()]
    return int(marks[0][:-1]) if marks else 1


def test_max_retries_0_still_crawls_the_site(redis_server: RedisServer, tmp_path: Path) -> None:
    with LoginSite() as site:
        lines = crawl(
            tmp_path / "run", redis_server.url, site.base + "/", "frontier.retries.max_retries=0"
        )
        seed_gets = [r for r in site.requests if r[1] == "/"]
    seed = lines[site.base + "/"]
    assert (seed.status, tries(seed)) == (200, 1)
    assert lines[site.base + "/about.html"].status == 200
    assert seed_gets == [("GET", "/")]


def test_a_form_login_with_max_retries_2_reaches_public_and_members_pages(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    with LoginSite(members_pages=2) as site:
        cred = {
            "domain": f"127.0.0.1:{site.port}",
            "login_uri": f"{site.base}/login",
            "fields": {"user": "alice", "pass": "s3cret"},
        }
        lines = crawl(
            tmp_path / "run",
            redis_server.url,
            site.base + "/",
            "frontier.retries.max_retries=2",
            "chains.fetch.fetch_http.params.form_logins=" + json.dumps([cred]),
        )
    seed = lines[site.base + "/"]
    assert (seed.status, tries(seed)) == (200, 1)
    assert lines[site.base + "/about.html"].status == 200
    for url in site.member_urls():
        assert lines[url].status == 200, url


def test_a_server_that_breaks_http_is_given_up_on_soon(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    with BrokenSite() as site:
        lines = crawl(
            tmp_path / "run",
            redis_server.url,
            site.url("/"),
            "frontier.retries.protocol_retry_delay_s=0.2",
        )
        hits = {path: site.hits(path) for path in BROKEN}
    for path in ("/bad-status.html", "/bad-chunks.html", "/short-body.html"):
        line = lines[site.url(path)]
        assert (line.status, tries(line), hits[path]) == (-3, 2, 2), path
        assert "protocolError" in line.annotations, path
    changing = lines[site.url("/short-changing.html")]
    assert (changing.status, tries(changing), hits["/short-changing.html"]) == (-3, 3, 3)
    assert tries(lines[site.url("/")]) == 1


def test_a_worker_shows_its_uri_waiting_for_a_retry_in_its_frontier_report(
    redis_server: RedisServer,
) -> None:
    url = redis_server.url
    store = RedisQueueStore(RedisQueueStoreParams(url=url, namespace="pt:", worker_id="w1"))
    f = RedisFrontier(
        store,
        HostnameQueueAssignmentPolicy(),
        RedisUriUniqFilter(RedisUriUniqFilterParams(url=url, namespace="pt:")),
        FrontierConfig(retries=RetriesConfig(protocol_retry_delay_s=60)),
    )
    f.open(Path("."))
    try:
        f.schedule(CrawlURI("http://h.example/broken"))
        curi = f.next(5.0)
        assert curi is not None
        curi.status, curi.retry_delay_s = -3, 60.0
        curi.annotate("err=RemoteProtocolError")
        note_protocol_error(curi, "RemoteProtocolError: malformed status line 'HTTP/1.1 OK'")
        assert f.finished(curi) is False
        waiting = f.retries_waiting()
        assert waiting.count == 1
        (note,) = waiting.soonest
        assert (note.uri, note.status, note.attempts) == ("http://h.example/broken", -3, 1)
        assert 55 < note.due_s - time.time() <= 60
        report = frontier_summary_report(FrontierAbilities.of(f), "job", time.time())
        assert " URIs waiting: 1" in report
        assert "-3 1t http://h.example/broken RemoteProtocolError: malformed status line" in report
    finally:
        f.close()
