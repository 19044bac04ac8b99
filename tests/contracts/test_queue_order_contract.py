"""Every store hands a queue's URIs out in order (scheduling directive, then precedence, then
first in first out), one at a time per queue, each URI once, and knows what it has seen."""

from __future__ import annotations

import threading
import time

import pytest
from support.stores import FrontierMaker

from crawler.curi import CrawlURI, FetchStatus, Hop, SchedulingDirective

pytestmark = pytest.mark.timeout(60)


def test_queue_orders_by_directive_then_precedence_then_fifo(stores: FrontierMaker) -> None:
    h = stores.frontier(uri_precedence_policy="preset")
    h.add("http://a.test/normal1")
    h.add("http://a.test/low-prec", precedence=5)
    h.add("http://a.test/normal2")
    h.add("http://a.test/seed", directive=SchedulingDirective.MEDIUM)
    h.add("http://a.test/urgent", directive=SchedulingDirective.HIGHEST)
    assert h.drain() == [
        "http://a.test/urgent",
        "http://a.test/seed",
        "http://a.test/normal1",
        "http://a.test/normal2",
        "http://a.test/low-prec",
    ]
    assert h.frontier.is_empty()


def test_schedule_many_keeps_fifo_order_across_the_batch(stores: FrontierMaker) -> None:
    h = stores.frontier()
    uris = [f"http://a.test/{n}" for n in range(50)]
    assert all(h.frontier.schedule_many([CrawlURI(u) for u in uris]))
    assert h.drain() == uris


def test_one_uri_in_flight_per_queue(stores: FrontierMaker) -> None:
    h = stores.frontier()
    h.add("http://a.test/1")
    h.add("http://a.test/2")
    h.add("http://b.test/1")
    first, second = h.take(), h.take()
    assert first is not None and second is not None
    assert {first.uri, second.uri} == {"http://a.test/1", "http://b.test/1"}
    assert h.take() is None  # both queues busy
    snap = h.frontier.snapshot()
    assert snap.in_process == 2 and snap.queues["in_process"] == 2
    assert not h.frontier.is_empty()
    a = first if first.uri.startswith("http://a.test") else second
    h.done(a)
    nxt = h.take()
    assert nxt is not None and nxt.uri == "http://a.test/2"


def test_next_blocks_until_a_uri_is_scheduled(stores: FrontierMaker) -> None:
    h = stores.frontier()
    got: list[CrawlURI | None] = []
    waiter = threading.Thread(target=lambda: got.append(h.frontier.next(30.0)))
    waiter.start()
    h.add("http://a.test/")
    waiter.join(30.0)
    assert got and got[0] is not None and got[0].uri == "http://a.test/"
    assert h.frontier.next(0.05) is None  # nothing left: times out with None


def test_already_seen_uri_is_not_queued_but_force_fetch_is(stores: FrontierMaker) -> None:
    h = stores.frontier()
    assert h.add("http://a.test/x") is True
    assert h.add("http://a.test/x") is False
    assert h.add("http://www.a.test/x") is False  # the same canonical URI
    assert h.add("http://a.test/x", force_fetch=True) is True
    snap = h.frontier.snapshot()
    assert snap.discovered == 1 and snap.queued == 2
    assert h.drain() == ["http://a.test/x", "http://a.test/x"]


def test_schedule_many_queues_a_pages_links_like_schedule_one_by_one(
    stores: FrontierMaker,
) -> None:
    h = stores.frontier()
    assert h.add("http://a.test/")
    page = h.take()
    assert page is not None
    links = [
        page.create_child("http://a.test/one", Hop.LINK, None),
        page.create_child("http://b.test/two", Hop.LINK, None),
        page.create_child("http://www.a.test/one", Hop.LINK, None),  # same canonical
        page.create_child("http://a.test/", Hop.LINK, None),  # already seen
        page.create_child("http://", Hop.LINK, None),  # no host
        page.create_child("http://a.test/", Hop.REFER, None),
    ]
    links[-1].force_fetch = True
    assert h.frontier.schedule_many(links) == [True, True, False, False, False, True]
    assert [e[2] for e in h.uri_errors] == ["http://"]
    assert h.frontier.snapshot().queued == 4  # the page itself, one, two, the forced refetch
    h.done(page)
    assert sorted(h.drain()) == ["http://a.test/", "http://a.test/one", "http://b.test/two"]
    assert [c.uri for c in h.finals].count("http://a.test/") == 2


def test_bad_uri_goes_to_uri_errors_and_is_not_queued(stores: FrontierMaker) -> None:
    h = stores.frontier()
    assert h.add("http:///path", via="http://a.test/") is False
    assert h.add("no-scheme-at-all") is False
    assert [e[0] for e in h.uri_errors] == ["http://a.test/", None]
    assert h.frontier.is_empty()


def test_succeeded_failed_and_disregarded_are_counted(stores: FrontierMaker) -> None:
    h = stores.frontier()
    for host in ("a", "b", "c"):
        h.add(f"http://{host}.test/")
    taken = [h.take() for _ in range(3)]
    statuses = {"a": FetchStatus.OUT_OF_SCOPE, "b": 404, "c": FetchStatus.TIMEOUT}
    for curi in taken:
        assert curi is not None
        assert h.done(curi, statuses[curi.uri[7]]) is True
    snap = h.frontier.snapshot()
    assert (snap.succeeded, snap.failed, snap.disregarded) == (1, 1, 1)
    assert h.frontier.is_empty()


def test_is_empty_only_after_the_last_final_listener_returned(stores: FrontierMaker) -> None:
    h = stores.frontier()
    seen_empty: list[bool] = []
    h.listener = lambda curi: seen_empty.append(h.frontier.is_empty())
    h.add("http://a.test/")
    assert not h.frontier.is_empty()
    curi = h.take()
    assert curi is not None and not h.frontier.is_empty()
    h.done(curi)
    assert seen_empty == [False]
    assert h.frontier.is_empty()


def test_listener_error_does_not_break_the_frontier(stores: FrontierMaker) -> None:
    def boom(curi: CrawlURI) -> None:
        raise RuntimeError("log disk full")

    h = stores.frontier()
    h.listener = boom
    h.add("http://a.test/")
    h.add("http://a.test/2")
    assert h.drain() == ["http://a.test/", "http://a.test/2"]
    assert h.frontier.is_empty()


def test_finishing_a_uri_twice_is_refused(stores: FrontierMaker) -> None:
    h = stores.frontier()
    h.add("http://a.test/")
    curi = h.take()
    assert curi is not None
    h.done(curi)
    with pytest.raises(ValueError):
        h.frontier.finished(curi)


def test_many_threads_get_every_uri_exactly_once(stores: FrontierMaker) -> None:
    h = stores.frontier()
    hosts, per_host = 12, 15
    for n in range(per_host):
        for host in range(hosts):
            h.add(f"http://h{host}.test/{n}")
    taken: list[str] = []
    lock = threading.Lock()
    busy_queues: set[str] = set()
    violations: list[str] = []

    def toe() -> None:
        while True:
            curi = h.frontier.next(0.2)
            if curi is None:
                if h.frontier.is_empty():
                    return
                continue
            host = curi.uri.split("/")[2]
            with lock:
                if host in busy_queues:
                    violations.append(host)
                busy_queues.add(host)
                taken.append(curi.uri)
            if "child-" not in curi.uri:  # each page discovers one new link, as a crawl would
                h.frontier.schedule(CrawlURI(curi.uri.replace(".test/", ".test/child-")))
            h.frontier.schedule(CrawlURI(curi.uri))  # and one already seen
            with lock:
                busy_queues.discard(host)
            curi.status = 200
            h.frontier.finished(curi)

    threads = [threading.Thread(target=toe) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(50)
    assert not any(t.is_alive() for t in threads)
    h.flush()
    assert not violations
    expected = 2 * hosts * per_host
    assert len(taken) == len(set(taken)) == expected
    assert h.frontier.snapshot().succeeded == expected
    assert h.frontier.is_empty()


def test_close_wakes_blocked_next(stores: FrontierMaker) -> None:
    h = stores.frontier()
    got: list[CrawlURI | None] = [CrawlURI("x")]
    waiter = threading.Thread(target=lambda: got.__setitem__(0, h.frontier.next(30)))
    waiter.start()
    h.close()
    waiter.join(10)
    assert not waiter.is_alive() and got[0] is None
    assert h.add("http://a.test/") is False


def test_wake_waiters_returns_blocked_next_at_once(stores: FrontierMaker) -> None:
    """Pausing or stopping the toe pool wakes threads blocked in ``next()`` with long
    timeouts: each returns None at once; the frontier stays open and hands out URIs after."""
    h = stores.frontier()
    got: list[CrawlURI | None] = []
    waiters = [threading.Thread(target=lambda: got.append(h.frontier.next(30.0))) for _ in range(4)]
    for w in waiters:
        w.start()
    time.sleep(0.3)  # let them block
    started = time.monotonic()
    h.frontier.wake_waiters()
    for w in waiters:
        w.join(10)
    assert not any(w.is_alive() for w in waiters)
    assert time.monotonic() - started < 5.0 and got == [None] * 4
    assert h.add("http://a.test/")
    curi = h.take(timeout_s=5.0)
    assert curi is not None and curi.uri == "http://a.test/"
