"""The server gate for fetches outside the frontier (a browser page's sub-resources) and
``claim`` on the Redis frontier, against a real redis-server: two workers (two frontiers, one
namespace) share each server's cap with the leased queues, the page's own slot is lent to its
sub-resources, answers pace and hold the server crawl-wide, a slot a dead worker never gave back
is taken back, and a claimed URI is never queued by any worker."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from support.redis_servers import RedisServer

from crawler.curi import CrawlURI
from crawler.frontier import InlinePass, InlineVisit
from crawler.frontier.assignment import HostnameQueueAssignmentPolicy
from crawler.frontier.redis.redis_frontier import RedisFrontier
from crawler.frontier.redis.redis_store import RedisQueueStore, RedisQueueStoreParams
from crawler.order.schema import FrontierConfig, PolitenessConfig
from crawler.uniq.redis_uniq import RedisUriUniqFilter, RedisUriUniqFilterParams

pytestmark = [pytest.mark.timeout(60)]

SHORT_S = 0.4
"""How long a test lets a fetch wait for a gate that must not admit it."""


def worker(url: str, wid: str, cap: int = 1, lease_s: float = 30.0) -> RedisFrontier:
    store = RedisQueueStore(
        RedisQueueStoreParams(url=url, namespace="g1:", worker_id=wid, lease_s=lease_s, shards=4)
    )
    f = RedisFrontier(
        store,
        HostnameQueueAssignmentPolicy(),
        RedisUriUniqFilter(RedisUriUniqFilterParams(url=url, namespace="g1:")),
        FrontierConfig(
            politeness=PolitenessConfig(
                delay_factor=5, min_delay_ms=3000, max_delay_ms=30000, host_max_connections=cap
            )
        ),
    )
    f.open(Path("."))
    return f


@pytest.fixture
def made() -> Iterator[list[RedisFrontier]]:
    frontiers: list[RedisFrontier] = []
    yield frontiers
    for f in frontiers:
        f.close()


def two(redis_server: RedisServer, made: list[RedisFrontier], **kw: Any) -> list[RedisFrontier]:
    made += [worker(redis_server.url, "wa", **kw), worker(redis_server.url, "wb", **kw)]
    return made


def page_of(f: RedisFrontier, uri: str) -> CrawlURI:
    assert f.schedule(CrawlURI(uri))
    page = f.next(5)
    assert page is not None and page.uri == uri
    return page


def answer(url: str, status: int = 200, headers: list[tuple[str, str]] | None = None) -> CrawlURI:
    curi = CrawlURI(url)
    curi.status = curi.http_status = status
    curi.fetch_start_ms = int(time.time() * 1000)
    curi.fetch_duration_ms = 5
    curi.response_headers = headers or []
    return curi


def soon() -> float:
    return time.monotonic() + SHORT_S


def server_hash(url: str, server: str) -> dict[str, str]:
    client = redis.Redis.from_url(url, decode_responses=True)
    try:
        keys = list(client.scan_iter(match=f"*v:{server}"))
        assert len(keys) == 1
        return {str(k): str(v) for k, v in client.hgetall(keys[0]).items()}
    finally:
        client.close()


class Entering(threading.Thread):
    """``gate.enter`` on a thread of its own, with time to wait."""

    def __init__(self, f: RedisFrontier, visit: InlineVisit, url: str) -> None:
        super().__init__(daemon=True)
        self.f, self.visit, self.url = f, visit, url
        self.ticket: InlinePass | None = None

    def run(self) -> None:
        self.ticket = self.f.inline_gate.enter(self.visit, self.url, time.monotonic() + 20)


def test_inline_slots_share_the_servers_cap_across_workers(
    redis_server: RedisServer, made: list[RedisFrontier]
) -> None:
    a, b = two(redis_server, made, cap=1)
    visit = InlineVisit(None)
    held = a.inline_gate.enter(visit, "http://cdn.test/1.png", soon())
    assert held is not None and not held.own
    assert b.inline_gate.enter(visit, "http://cdn.test/2.png", soon()) is None
    # A queue of that server is parked meanwhile, in any worker.
    assert b.schedule(CrawlURI("http://cdn.test/index.html"))
    assert b.next(SHORT_S) is None
    a.inline_gate.leave(held, answer("http://cdn.test/1.png"))
    queued = b.next(10)  # woken by the slot given back
    assert queued is not None and queued.uri == "http://cdn.test/index.html"
    # ... and the queue's lease holds the slot against the browser in turn.
    assert a.inline_gate.enter(visit, "http://cdn.test/2.png", soon()) is None
    queued.status = 200
    b.finished(queued)
    assert b.flush(5)
    again = a.inline_gate.enter(visit, "http://cdn.test/2.png", time.monotonic() + 10)
    assert again is not None
    a.inline_gate.leave(again, answer("http://cdn.test/2.png"))
    assert server_hash(redis_server.url, "cdn.test:80")["a"] == "0"


def test_the_pages_own_slot_is_lent_to_its_subresources(
    redis_server: RedisServer, made: list[RedisFrontier]
) -> None:
    a, _ = two(redis_server, made, cap=1)
    gate = a.inline_gate
    visit = gate.visit(page_of(a, "http://site.test/"))
    assert visit.server == "site.test:80"
    first = gate.enter(visit, "http://site.test/app.js", soon())
    assert first is not None and first.own  # not a second slot: at a cap of 1 none is free
    assert gate.enter(visit, "http://site.test/app.css", soon()) is None
    waiting = Entering(a, visit, "http://site.test/app.css")
    waiting.start()
    gate.leave(first, answer("http://site.test/app.js"))
    waiting.join(15)
    assert waiting.ticket is not None and waiting.ticket.own
    gate.leave(waiting.ticket, answer("http://site.test/app.css"))
    assert server_hash(redis_server.url, "site.test:80")["a"] == "1"  # the page's lease


def test_no_per_uri_delay_but_a_429_with_retry_after_holds_and_paces_the_server(
    redis_server: RedisServer, made: list[RedisFrontier]
) -> None:
    a, b = two(redis_server, made, cap=0)
    visit = InlineVisit(None)
    for n in range(4):  # min_delay_ms is 3 s: not applied between a page's sub-resources
        ticket = a.inline_gate.enter(visit, f"http://cdn.test/{n}.png", soon())
        assert ticket is not None
        a.inline_gate.leave(ticket, answer(f"http://cdn.test/{n}.png"))
    ticket = a.inline_gate.enter(visit, "http://cdn.test/x.png", soon())
    assert ticket is not None
    a.inline_gate.leave(ticket, answer("http://cdn.test/x.png", 429, [("Retry-After", "30")]))
    state = server_hash(redis_server.url, "cdn.test:80")
    assert float(state["g"]) > 0  # the pace learnt from it
    assert [s for s, _ in b.paced_servers()] == ["cdn.test:80"]
    assert b.inline_gate.enter(visit, "http://cdn.test/y.png", soon()) is None  # held
    assert b.schedule(CrawlURI("http://cdn.test/index.html"))
    assert b.next(SHORT_S) is None  # for the queues too


def test_a_slot_never_given_back_is_taken_back(
    redis_server: RedisServer, made: list[RedisFrontier]
) -> None:
    a, b = two(redis_server, made, cap=1, lease_s=0.5)
    visit = InlineVisit(None)
    assert a.inline_gate.enter(visit, "http://cdn.test/1.png", soon()) is not None
    # a's worker "dies" mid-fetch: b waits until the slot's time is up, then gets it.
    ticket = b.inline_gate.enter(visit, "http://cdn.test/2.png", time.monotonic() + 10)
    assert ticket is not None
    b.inline_gate.leave(ticket, answer("http://cdn.test/2.png"))
    assert server_hash(redis_server.url, "cdn.test:80")["a"] == "0"


def test_a_claimed_uri_is_seen_by_every_worker_and_never_queued(
    redis_server: RedisServer, made: list[RedisFrontier]
) -> None:
    a, b = two(redis_server, made)
    assert a.claim(CrawlURI("http://cdn.test/app.js"))
    assert not a.claim(CrawlURI("http://cdn.test/app.js"))
    assert not b.claim(CrawlURI("http://CDN.test/app.js"))  # the same canonical URI
    assert not b.schedule(CrawlURI("http://cdn.test/app.js"))
    assert b.schedule_many([CrawlURI("http://cdn.test/app.js"), CrawlURI("http://cdn.test/")]) == [
        False,
        True,
    ]
    counted = RedisUriUniqFilter(RedisUriUniqFilterParams(url=redis_server.url, namespace="g1:"))
    counted.open(Path("."))
    try:
        assert counted.count() == 2  # discovered, as a URI queued is
    finally:
        counted.close()
    assert b.schedule(CrawlURI("http://cdn.test/queued.js"))
    assert not a.claim(CrawlURI("http://cdn.test/queued.js"))  # queued already: not claimed
