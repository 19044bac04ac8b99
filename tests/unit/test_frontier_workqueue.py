"""WorkQueueFrontier on the memory store: order, politeness, retries, prerequisites, budgets."""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Any

import pytest

from crawler.clock import ManualClock
from crawler.curi import CrawlURI, FetchStatus, Hop, SchedulingDirective
from crawler.frontier import (
    HostnameQueueAssignmentPolicy,
    MemoryQueueStore,
    QueueStore,
    WorkQueueFrontier,
)
from crawler.frontier.retry_policy import DEFERRALS_KEY
from crawler.order.schema import FrontierConfig, PolitenessConfig, RetriesConfig
from crawler.uniq import MemoryUriUniqFilter


class Harness:
    """A frontier with a manual clock that records final dispositions and URI errors."""

    def __init__(self, tmp: Path, store: QueueStore | None = None, **config: Any) -> None:
        config.setdefault(
            "politeness", PolitenessConfig(delay_factor=0, min_delay_ms=0, max_delay_ms=0)
        )
        self.clock = ManualClock()
        self.finals: list[CrawlURI] = []
        self.uri_errors: list[tuple[str | None, str, str]] = []
        self.frontier = WorkQueueFrontier(
            store if store is not None else MemoryQueueStore(),
            HostnameQueueAssignmentPolicy(),
            MemoryUriUniqFilter(),
            FrontierConfig(**config),
            clock=self.clock,
            on_final=self.finals.append,
            uri_error=lambda base, msg, raw: self.uri_errors.append((base, msg, raw)),
        )
        self.frontier.open(tmp)

    def add(self, uri: str, **fields: Any) -> bool:
        return self.frontier.schedule(CrawlURI(uri, **fields))

    def take(self) -> CrawlURI | None:
        return self.frontier.next(0)

    def done(self, curi: CrawlURI, status: int = 200, **fields: Any) -> bool:
        curi.status = status
        for name, value in fields.items():
            setattr(curi, name, value)
        return self.frontier.finished(curi)


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    return Harness(tmp_path)


def drain_one_queue(h: Harness) -> list[str]:
    out = []
    while (curi := h.take()) is not None:
        out.append(curi.uri)
        h.done(curi)
    return out


def test_queue_orders_by_directive_then_precedence_then_fifo(tmp_path: Path) -> None:
    h = Harness(tmp_path, uri_precedence_policy="preset")
    h.add("http://a.test/normal1")
    h.add("http://a.test/low-prec", precedence=5)
    h.add("http://a.test/normal2")
    h.add("http://a.test/seed", directive=SchedulingDirective.MEDIUM)
    h.add("http://a.test/urgent", directive=SchedulingDirective.HIGHEST)
    assert drain_one_queue(h) == [
        "http://a.test/urgent",
        "http://a.test/seed",
        "http://a.test/normal1",
        "http://a.test/normal2",
        "http://a.test/low-prec",
    ]


def test_one_uri_in_flight_per_queue(h: Harness) -> None:
    h.add("http://a.test/1")
    h.add("http://a.test/2")
    h.add("http://b.test/1")
    first, second = h.take(), h.take()
    assert first is not None and second is not None
    assert {first.queue_key, second.queue_key} == {"a.test", "b.test"}
    assert h.take() is None  # both queues busy
    snap = h.frontier.snapshot()
    assert snap.in_process == 2 and snap.queues["in_process"] == 2
    a = first if first.queue_key == "a.test" else second
    h.done(a)
    nxt = h.take()
    assert nxt is not None and nxt.uri == "http://a.test/2"


def test_politeness_delay_snoozes_the_queue(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.add("http://a.test/1")
    h.add("http://a.test/2")
    curi = h.take()
    assert curi is not None
    h.done(curi, politeness_delay_ms=3000)
    assert h.take() is None
    assert h.frontier.snapshot().queues["snoozed"] == 1
    h.clock.advance(2.9)
    assert h.take() is None
    h.clock.advance(0.2)
    nxt = h.take()
    assert nxt is not None and nxt.uri == "http://a.test/2"


def test_unset_politeness_delay_means_min_delay(tmp_path: Path) -> None:
    h = Harness(tmp_path, politeness=PolitenessConfig(min_delay_ms=1500))
    h.add("http://a.test/1")
    h.add("http://a.test/2")
    curi = h.take()
    assert curi is not None
    h.done(curi)  # politeness_delay_ms left at -1
    h.clock.advance(1.4)
    assert h.take() is None
    h.clock.advance(0.2)
    assert h.take() is not None


def test_next_blocks_until_a_uri_is_scheduled(h: Harness) -> None:
    got: list[CrawlURI | None] = []
    waiter = threading.Thread(target=lambda: got.append(h.frontier.next(30.0)))
    waiter.start()
    h.add("http://a.test/")
    waiter.join(30.0)
    assert got and got[0] is not None and got[0].uri == "http://a.test/"


def test_next_times_out_with_none(h: Harness) -> None:
    assert h.frontier.next(0.05) is None


def test_retries_up_to_max_retries_then_final(tmp_path: Path) -> None:
    h = Harness(tmp_path, retries=RetriesConfig(max_retries=3, retry_delay_s=900))
    h.add("http://a.test/flaky")
    h.add("http://a.test/later")
    for attempt in (1, 2):
        curi = h.take()
        assert curi is not None and curi.uri == "http://a.test/flaky"
        assert curi.fetch_attempts == attempt - 1
        assert h.done(curi, FetchStatus.CONNECT_FAILED, retry_delay_s=900.0) is False
        assert h.finals == []
        assert h.take() is None  # the queue waits out the retry delay
        h.clock.advance(900)
    curi = h.take()
    assert curi is not None and curi.uri == "http://a.test/flaky"
    assert h.done(curi, FetchStatus.CONNECT_FAILED, retry_delay_s=900.0) is True
    assert [(c.uri, c.status, c.fetch_attempts) for c in h.finals] == [
        ("http://a.test/flaky", FetchStatus.CONNECT_FAILED, 3)
    ]
    assert h.frontier.snapshot().failed == 1
    nxt = h.take()
    assert nxt is not None and nxt.uri == "http://a.test/later"


def test_non_retryable_failure_is_final_at_once(h: Harness) -> None:
    h.add("http://a.test/")
    curi = h.take()
    assert curi is not None
    assert h.done(curi, FetchStatus.TIMEOUT) is True
    assert h.frontier.snapshot().failed == 1


def test_prerequisite_sorts_first_in_the_via_queue(h: Harness) -> None:
    seed = CrawlURI("https://a.test:8443/page", directive=SchedulingDirective.MEDIUM)
    h.frontier.schedule(seed)
    h.add("https://a.test:8443/other", directive=SchedulingDirective.HIGH)
    curi = h.take()
    assert curi is not None and curi.uri == "https://a.test:8443/other"
    h.done(curi)
    curi = h.take()
    assert curi is not None and curi.uri == "https://a.test:8443/page"
    prereq = curi.create_child("dns:a.test", Hop.PREREQ)
    prereq.force_fetch = True
    assert h.frontier.schedule(prereq)
    curi.prerequisite = prereq
    assert prereq.queue_key == curi.queue_key == "a.test#8443"
    assert prereq.directive < curi.directive
    assert h.done(curi, FetchStatus.DEFERRED) is False  # -50: retried with no delay
    first = h.take()
    assert first is not None and first.uri == "dns:a.test"
    h.done(first, FetchStatus.DNS_SUCCESS)
    again = h.take()
    assert again is not None and again.uri == "https://a.test:8443/page"
    # A deferral is no fetch attempt; it is counted apart.
    assert again.fetch_attempts == 0 and again.data[DEFERRALS_KEY] == 1


def test_prerequisite_of_highest_directive_uri_still_sorts_first(h: Harness) -> None:
    h.add("http://a.test/", directive=SchedulingDirective.HIGHEST, precedence=3)
    curi = h.take()
    assert curi is not None
    h.frontier.schedule(curi.create_child("http://a.test/robots.txt", Hop.PREREQ))
    h.done(curi, FetchStatus.DEFERRED)
    first = h.take()
    assert first is not None and first.uri == "http://a.test/robots.txt"


def test_already_seen_uri_is_not_queued_but_force_fetch_is(h: Harness) -> None:
    assert h.add("http://a.test/x") is True
    assert h.add("http://a.test/x") is False
    assert h.add("http://a.test/x", force_fetch=True) is True
    snap = h.frontier.snapshot()
    assert snap.discovered == 1 and snap.queued == 2


def test_bad_uri_goes_to_uri_errors_and_is_not_queued(h: Harness) -> None:
    assert h.add("http:///path", via="http://a.test/") is False
    assert h.add("no-scheme-at-all") is False
    assert [e[0] for e in h.uri_errors] == ["http://a.test/", None]
    assert h.frontier.is_empty()


def test_is_empty_only_after_the_last_final_listener_returned(h: Harness) -> None:
    seen_empty: list[bool] = []
    h.frontier._on_final = lambda curi: seen_empty.append(h.frontier.is_empty())
    h.add("http://a.test/")
    assert not h.frontier.is_empty()
    curi = h.take()
    assert curi is not None and not h.frontier.is_empty()
    h.done(curi)
    assert seen_empty == [False]
    assert h.frontier.is_empty()


def test_listener_error_does_not_break_the_frontier(h: Harness) -> None:
    def boom(curi: CrawlURI) -> None:
        raise RuntimeError("log disk full")

    h.frontier._on_final = boom
    h.add("http://a.test/")
    curi = h.take()
    assert curi is not None
    assert h.done(curi) is True
    assert h.frontier.is_empty()


def test_finishing_a_uri_twice_is_refused(h: Harness) -> None:
    h.add("http://a.test/")
    curi = h.take()
    assert curi is not None
    h.done(curi)
    with pytest.raises(ValueError):
        h.frontier.finished(curi)


def test_session_budget_rotates_to_waiting_queues(tmp_path: Path) -> None:
    h = Harness(tmp_path, balance_replenish_amount=2)
    for i in range(4):
        h.add(f"http://a.test/{i}")
    for i in range(2):
        h.add(f"http://b.test/{i}")
    order = drain_one_queue(h)
    assert [u.split("/")[2] for u in order] == ["a.test"] * 2 + ["b.test"] * 2 + ["a.test"] * 2


def test_queue_over_total_budget_is_retired(tmp_path: Path) -> None:
    h = Harness(tmp_path, queue_total_budget=2)
    for i in range(5):
        h.add(f"http://a.test/{i}")
    assert len(drain_one_queue(h)) == 2
    snap = h.frontier.snapshot()
    assert snap.queues["retired"] == 1 and snap.queued == 0
    assert h.frontier.is_empty()


def test_disregarded_and_succeeded_counts(h: Harness) -> None:
    h.add("http://a.test/1")
    h.add("http://b.test/1")
    c1, c2 = h.take(), h.take()
    assert c1 is not None and c2 is not None
    h.done(c1, FetchStatus.OUT_OF_SCOPE)
    h.done(c2, 404)
    snap = h.frontier.snapshot()
    assert (snap.succeeded, snap.failed, snap.disregarded) == (1, 0, 1)


def test_snapshot_depths_and_congestion(tmp_path: Path) -> None:
    h = Harness(tmp_path, politeness=PolitenessConfig(min_delay_ms=1000))
    for i in range(3):
        h.add(f"http://a.test/{i}")
    h.add("http://b.test/")
    snap = h.frontier.snapshot()
    assert (snap.queued, snap.max_depth, snap.avg_depth) == (4, 3, 2.0)
    assert math.isinf(snap.congestion)  # two eligible queues, none busy
    curi = h.take()
    assert curi is not None
    snap = h.frontier.snapshot()
    assert snap.congestion == 2.0  # (1 in process + 1 ready or inactive) / 1 in process
    assert snap.longest[0] == ("a.test", 3)


def test_close_wakes_blocked_next(h: Harness) -> None:
    got: list[CrawlURI | None] = [CrawlURI("x")]
    waiter = threading.Thread(target=lambda: got.__setitem__(0, h.frontier.next(30)))
    waiter.start()
    h.frontier.close()
    waiter.join(5)
    assert not waiter.is_alive() and got[0] is None
    assert h.add("http://a.test/") is False


def test_many_threads_get_every_uri_exactly_once(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    hosts, per_host = 40, 100
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
            with lock:
                if curi.queue_key in busy_queues:
                    violations.append(curi.queue_key)
                busy_queues.add(curi.queue_key)
                taken.append(curi.uri)
            if "child-" not in curi.uri:  # each page discovers one new link, as a crawl would
                h.add(curi.uri.replace(".test/", ".test/child-"))
            with lock:
                busy_queues.discard(curi.queue_key)
            h.done(curi)

    threads = [threading.Thread(target=toe) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not violations
    expected = 2 * hosts * per_host
    assert len(taken) == len(set(taken)) == expected
    assert h.frontier.snapshot().succeeded == expected
    assert h.frontier.is_empty()


def test_schedule_many_queues_a_pages_links_like_schedule_one_by_one(h: Harness) -> None:
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
    fetched = set()
    while (curi := h.take()) is not None:
        fetched.add(curi.uri)
        h.done(curi)
    assert fetched == {"http://a.test/one", "http://b.test/two", "http://a.test/"}
    assert [c.uri for c in h.finals].count("http://a.test/") == 2


def test_schedule_many_keeps_fifo_order_across_the_batch(h: Harness) -> None:
    uris = [f"http://a.test/{n}" for n in range(50)]
    assert all(h.frontier.schedule_many([CrawlURI(u) for u in uris]))
    assert drain_one_queue(h) == uris
