"""Workers of one crawl share robots.txt and DNS outcomes through Redis (RedisServerFacts), on a
real redis-server and a real 3-master Cluster: a host's robots.txt is fetched once per crawl."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from support.processor_context import make_context
from support.redis_servers import free_port
from support.robots_site import DISALLOW_PRIVATE, RobotsSite, robots_site

from crawler import CrawlURI, ProcessorChain, ProcessorChains
from crawler.server_facts.redis_server_facts import RedisServerFacts
from crawler.servers import MIN_ROBOTS_ATTEMPTS, ServerCache
from processors.browser.subresource_fetcher import SubresourceFetcher
from processors.fetch import FetchHTTP
from processors.prefetch import PreconditionEnforcer
from processors.prefetch.precondition_enforcer import PREREQUISITE_POLL_S

DAY_S = 86400.0
ROBOTS = DISALLOW_PRIVATE


@pytest.fixture
def site() -> Iterator[RobotsSite]:
    with robots_site(ROBOTS) as server:
        yield server


@pytest.fixture
def shares(digest_url_prefix: tuple[str, str]) -> Iterator[tuple[ServerCache, ServerCache]]:
    """Two workers' server caches, each with its own connection to one crawl's facts."""
    url, prefix = digest_url_prefix
    one, two = ServerCache(), ServerCache()
    one.attach_share(RedisServerFacts.connect(url, prefix), DAY_S, DAY_S)
    two.attach_share(RedisServerFacts.connect(url, prefix), DAY_S, DAY_S)
    yield one, two
    one.close_share()
    two.close_share()


def _worker(tmp_path: Path, servers: ServerCache) -> ProcessorChains:
    chains = ProcessorChains(
        [
            ProcessorChain("pre", [PreconditionEnforcer("enforcer")]),
            ProcessorChain("fetch", [FetchHTTP("fetch_http")]),
        ]
    )
    chains.start(make_context(tmp_path, servers=servers, schedule=lambda curi: None))
    return chains


def _browser(tmp_path: Path, servers: ServerCache) -> tuple[FetchHTTP, SubresourceFetcher]:
    """A worker's browser sub-resource fetcher (and the FetchHTTP it uses, started)."""
    ctx = make_context(tmp_path, servers=servers, schedule=lambda curi: None)
    http = FetchHTTP("fetch_http")
    http.start(ctx)
    return http, SubresourceFetcher(ctx, http, "bot")


def _page_obeys_the_rules(fetcher: SubresourceFetcher, base: str) -> None:
    """A browser page asks for an allowed and a disallowed sub-resource of ``base``: the first
    is fetched, the second refused."""
    page = CrawlURI("http://example.test/page")
    assert fetcher.fetch(page, base + "/style.css") is not None
    assert fetcher.fetch(page, base + "/private/x.css") is None


def test_a_host_s_robots_txt_is_fetched_once_for_two_workers(
    site: RobotsSite, shares: tuple[ServerCache, ServerCache], tmp_path: Path
) -> None:
    base = f"http://127.0.0.1:{site.server_address[1]}"
    one = _worker(tmp_path / "w1", shares[0])
    two = _worker(tmp_path / "w2", shares[1])
    try:
        first = CrawlURI(base + "/a")
        one.run(first)
        assert first.status == -50 and first.prerequisite is not None
        one.run(first.prerequisite)
        first.reset_for_retry()
        one.run(first)
        assert first.status == 200

        # The other worker meets the host for the first time: no prerequisite of its own.
        page = CrawlURI(base + "/b")
        two.run(page)
        assert (page.status, page.prerequisite) == (200, None)
        banned = CrawlURI(base + "/private/x")
        two.run(banned)
        assert banned.status == -9998
    finally:
        one.stop()
        two.stop()
    assert site.paths == ["/robots.txt", "/a", "/b"]
    assert shares[1].adopted == 1


def test_one_server_s_queues_in_two_workers_wait_for_one_robots_fetch(
    site: RobotsSite, shares: tuple[ServerCache, ServerCache], tmp_path: Path
) -> None:
    """The hash queue policies spread one site over queues that two workers lease at once: the
    worker that claimed the robots.txt fetch first fetches it, the other waits for its outcome."""
    base = f"http://127.0.0.1:{site.server_address[1]}"
    one = _worker(tmp_path / "w1", shares[0])
    two = _worker(tmp_path / "w2", shares[1])
    try:
        first, other = CrawlURI(base + "/a"), CrawlURI(base + "/b")
        one.run(first)
        assert first.status == -50 and first.prerequisite is not None
        two.run(other)  # claimed by the first worker: wait, no prerequisite of its own
        assert (other.status, other.prerequisite) == (-50, None)
        assert other.retry_delay_s == PREREQUISITE_POLL_S
        one.run(first.prerequisite)
        other.reset_for_retry()
        two.run(other)
        assert other.status == 200
    finally:
        one.stop()
        two.stop()
    assert site.paths == ["/robots.txt", "/b"]


def test_a_browser_page_s_request_obeys_robots_txt_another_worker_fetched(
    site: RobotsSite, shares: tuple[ServerCache, ServerCache], tmp_path: Path
) -> None:
    """A browser page's sub-resource on a server new to this worker: the rules come from the
    other worker's fetch, with no robots.txt request of its own."""
    base = f"http://127.0.0.1:{site.server_address[1]}"
    one, two = shares
    http, fetcher = _browser(tmp_path, two)
    one.update_robots(f"127.0.0.1:{site.server_address[1]}", 200, ROBOTS, http.context.clock.time())
    try:
        _page_obeys_the_rules(fetcher, base)
    finally:
        http.stop()
    assert site.paths == ["/style.css"]
    assert fetcher.robots_blocked == 1


def test_a_browser_page_waits_for_the_robots_fetch_another_worker_claimed(
    site: RobotsSite, shares: tuple[ServerCache, ServerCache], tmp_path: Path
) -> None:
    """A queue of one worker claimed the server's robots.txt fetch; a browser page of the other
    worker needs a sub-resource there: it waits for that fetch's outcome, and robots.txt is
    fetched once."""
    base = f"http://127.0.0.1:{site.server_address[1]}"
    one = _worker(tmp_path / "w1", shares[0])
    http, fetcher = _browser(tmp_path / "w2", shares[1])
    first = CrawlURI(base + "/a")
    one.run(first)  # claims the robots.txt fetch, crawl-wide
    assert first.status == -50 and first.prerequisite is not None
    prerequisite = first.prerequisite
    fetched = threading.Timer(0.6, lambda: one.run(prerequisite))
    fetched.start()
    try:
        _page_obeys_the_rules(fetcher, base)
    finally:
        fetched.join()
        http.stop()
        one.stop()
    assert site.paths == ["/robots.txt", "/style.css"]
    assert fetcher.robots_blocked == 1


def test_a_browser_page_gives_up_at_its_deadline_while_another_fetch_holds_the_claim(
    site: RobotsSite, shares: tuple[ServerCache, ServerCache], tmp_path: Path
) -> None:
    base = f"http://127.0.0.1:{site.server_address[1]}"
    one, two = shares
    assert one.claim_prerequisite(f"robots:127.0.0.1:{site.server_address[1]}", 0.0, 120.0)
    http, fetcher = _browser(tmp_path, two)
    try:
        page = CrawlURI("http://example.test/page")
        assert fetcher.fetch(page, base + "/style.css", time.monotonic() + 0.6) is None
    finally:
        http.stop()
    assert site.paths == []
    assert fetcher.gate_timeouts == 1


def test_a_worker_s_own_claim_does_not_hold_back_its_retry(
    shares: tuple[ServerCache, ServerCache],
) -> None:
    one, two = shares
    assert one.claim_prerequisite("robots:slow.example:80", 100.0, 120.0)
    assert not two.claim_prerequisite("robots:slow.example:80", 100.0, 120.0)
    one.update_robots("slow.example:80", -2, None, 101.0)  # failed, to be fetched again
    assert one.claim_prerequisite("robots:slow.example:80", 101.0, 120.0)
    assert not two.claim_prerequisite("robots:slow.example:80", 300.0, 120.0)
    share_two = two._share
    assert isinstance(share_two, RedisServerFacts) and share_two.waited == 2


def test_lookups_and_accepted_failures_are_shared_and_not_sent_back(
    shares: tuple[ServerCache, ServerCache],
) -> None:
    one, two = shares
    one.update_host("Example.org", "93.184.216.34", 1000.0, 0.0)
    assert two.adopt_shared(["dns:example.org"]) == 1
    state = two.host_state("example.org")
    assert state is not None and (state.ip, state.looked_up_s) == ("93.184.216.34", 1000.0)
    one.update_host("gone.example", None, 1001.0, 0.0)  # looked up, no address: shared too
    assert two.adopt_shared(["dns:gone.example"]) == 1
    gone = two.host_state("gone.example")
    assert gone is not None and gone.ip is None

    # A failed robots fetch is shared only once it is accepted as "no robots".
    for attempt in range(1, MIN_ROBOTS_ATTEMPTS + 1):
        one.update_robots("down.example:80", -2, None, 2000.0 + attempt)
        found = two.adopt_shared(["robots:down.example:80"])
        assert found == (1 if attempt == MIN_ROBOTS_ATTEMPTS else 0)
    down = two.robots_state("down.example:80")
    assert down is not None and down.is_valid(2004.0, DAY_S)
    assert down.rules is not None and down.rules.allowed("http://down.example/x", "bot")

    share_two = two._share
    assert isinstance(share_two, RedisServerFacts)
    assert share_two.published == 0  # what it took in, it did not publish again


def test_facts_expire_with_their_validity(digest_url_prefix: tuple[str, str]) -> None:
    url, prefix = digest_url_prefix
    facts = RedisServerFacts.connect(url, prefix)
    cache = ServerCache()
    cache.attach_share(facts, 3600.0, 7200.0)
    try:
        cache.update_robots("a.example:443", 404, None, 10.0)
        cache.update_host("a.example", "10.1.2.3", 10.0, 0.0)
        assert 3500 < facts.client.ttl(facts.key("robots:a.example:443")) <= 3600
        assert 7100 < facts.client.ttl(facts.key("dns:a.example")) <= 7200
    finally:
        cache.close_share()


def test_an_unreachable_share_changes_nothing_but_a_warning() -> None:
    """Redis away: publishing is skipped and a look-up finds nothing; the worker fetches itself."""
    warnings: list[str] = []
    infos: list[tuple[str, dict[str, Any]]] = []

    class Log:
        def warning(self, event: str, **_: Any) -> None:
            warnings.append(event)

        def info(self, event: str, **fields: Any) -> None:
            infos.append((event, fields))

    facts = RedisServerFacts(
        redis.Redis(port=free_port(), socket_connect_timeout=1), "x:", logger=Log()
    )
    cache = ServerCache()
    cache.attach_share(facts, DAY_S, DAY_S)
    state = cache.update_robots("b.example:80", 200, b"User-agent: *\nDisallow: /\n", 5.0)
    assert state.rules is not None and not state.rules.allowed("http://b.example/", "bot")
    assert cache.adopt_shared(["robots:c.example:80", "dns:c.example"]) == 0
    assert cache.claim_prerequisite("robots:c.example:80", 5.0, 120.0)  # fetch it here
    assert warnings == ["server_facts_unavailable"]  # once per outage, not per call
    cache.close_share()
    cache.close_share()
    assert infos == [("server_facts", {"published": 0, "found": 0, "missed": 0, "waited": 0})]
