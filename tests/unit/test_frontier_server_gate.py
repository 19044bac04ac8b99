"""The server politeness cap across queues, Retry-After back-off and bandwidth holds."""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import pytest

from crawler.clock import ManualClock
from crawler.curi import CrawlURI
from crawler.frontier import (
    BACKOFF_MS_KEY,
    SERVER_HOLD_MS_KEY,
    MemoryQueueStore,
    QueueAssignmentPolicy,
    ServerGate,
    WorkQueueFrontier,
)
from crawler.order.schema import FrontierConfig, PolitenessConfig
from crawler.params import NoParams
from crawler.uniq import MemoryUriUniqFilter


class OneQueuePerUri(QueueAssignmentPolicy[NoParams]):
    """The extreme spreading policy: every URI its own queue (as a hash policy with many
    buckets would do to one site)."""

    def key(self, curi: CrawlURI) -> str:
        return curi.uri


def frontier(
    tmp: Path, store: MemoryQueueStore | None = None, **politeness: Any
) -> tuple[WorkQueueFrontier, ManualClock]:
    pol = {"delay_factor": 0, "min_delay_ms": 0, "max_delay_ms": 0} | politeness
    clock = ManualClock()
    f = WorkQueueFrontier(
        store or MemoryQueueStore(),
        OneQueuePerUri(),
        MemoryUriUniqFilter(),
        FrontierConfig(politeness=PolitenessConfig(**pol)),
        clock=clock,
    )
    f.open(tmp)
    return f, clock


def take_all(f: WorkQueueFrontier) -> list[CrawlURI]:
    out = []
    while (curi := f.next(0)) is not None:
        out.append(curi)
    return out


def done(f: WorkQueueFrontier, curi: CrawlURI, **data: Any) -> None:
    curi.status = 200
    curi.data.update(data)
    f.finished(curi)


def test_max_connections_holds_across_queues(tmp_path: Path) -> None:
    f, _ = frontier(tmp_path, host_max_connections=2)
    for i in range(10):
        f.schedule(CrawlURI(f"http://site.test/{i}"))
    f.schedule(CrawlURI("http://other.test/"))
    out = take_all(f)
    assert sorted(c.uri.split("/")[2] for c in out) == ["other.test", "site.test", "site.test"]
    assert f.snapshot().queues["snoozed"] == 8  # parked on site.test:80
    site = [c for c in out if c.uri.startswith("http://site.test/")]
    done(f, site[0])
    again = take_all(f)
    assert len(again) == 1 and again[0].uri.startswith("http://site.test/")
    for curi in [*out, *again]:
        if curi is not site[0]:
            done(f, curi)
    while curi := f.next(0):
        done(f, curi)
    assert f.is_empty() and f.snapshot().succeeded == 11


def test_https_and_http_of_a_host_are_different_servers(tmp_path: Path) -> None:
    f, _ = frontier(tmp_path, host_max_connections=1)
    f.schedule(CrawlURI("http://site.test/a"))
    f.schedule(CrawlURI("https://site.test/a"))
    f.schedule(CrawlURI("http://site.test/b"))
    assert len(take_all(f)) == 2


def test_zero_means_unlimited(tmp_path: Path) -> None:
    f, _ = frontier(tmp_path, host_max_connections=0)
    for i in range(30):
        f.schedule(CrawlURI(f"http://site.test/{i}"))
    assert len(take_all(f)) == 30


def test_parked_queues_do_not_spin(tmp_path: Path) -> None:
    f, _ = frontier(tmp_path, host_max_connections=1)
    heads = 0
    read_head = f._store.head  # the frontier's view of its store: count its queue looks

    def counting_head(queue_key: str) -> tuple[int, bytes] | None:
        nonlocal heads
        heads += 1
        return read_head(queue_key)

    f._store.head = counting_head  # type: ignore[method-assign]
    for i in range(50):
        f.schedule(CrawlURI(f"http://site.test/{i}"))
    first = take_all(f)
    assert len(first) == 1
    heads = 0
    for _ in range(20):
        assert f.next(0) is None
    assert heads == 0  # blocked queues are parked, not polled
    done(f, first[0])
    assert len(take_all(f)) == 1
    assert heads == 1  # one slot freed: exactly one parked queue woken


def test_min_interval_between_fetch_starts(tmp_path: Path) -> None:
    f, clock = frontier(tmp_path, host_max_connections=0, host_min_interval_ms=500)
    for i in range(3):
        f.schedule(CrawlURI(f"http://site.test/{i}"))
    starts = []
    for _ in range(30):
        for curi in take_all(f):
            starts.append(clock.monotonic())
            done(f, curi)
        clock.advance(0.1)
    assert len(starts) == 3
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert all(g >= 0.5 - 1e-9 for g in gaps) and max(gaps) < 0.65


def test_retry_after_backs_off_the_queue_and_its_server(tmp_path: Path) -> None:
    f, clock = frontier(tmp_path, host_max_connections=0)
    f.schedule(CrawlURI("http://site.test/busy"))
    busy = f.next(0)
    assert busy is not None
    f.schedule(CrawlURI("http://site.test/other"))
    f.schedule(CrawlURI("http://elsewhere.test/"))
    curi_other_host = take_all(f)
    assert [c.uri for c in curi_other_host] == ["http://site.test/other", "http://elsewhere.test/"]
    for curi in curi_other_host:
        done(f, curi)
    f.schedule(CrawlURI("http://site.test/later"))
    busy.status = 503
    busy.data[BACKOFF_MS_KEY] = 120_000
    f.finished(busy)
    assert BACKOFF_MS_KEY not in busy.data  # consumed by the frontier
    assert f.next(0) is None
    clock.advance(119)
    assert f.next(0) is None
    clock.advance(1.5)
    # The 503 is retried (frontier.retries.http_statuses) once the back-off is over.
    assert sorted(c.uri for c in take_all(f)) == ["http://site.test/busy", "http://site.test/later"]


def test_bandwidth_holds_add_up_over_concurrent_fetches(tmp_path: Path) -> None:
    f, clock = frontier(tmp_path, host_max_connections=0)
    for i in range(3):
        f.schedule(CrawlURI(f"http://site.test/{i}"))
    a, b, c = take_all(f)
    f.schedule(CrawlURI("http://site.test/next"))
    done(f, a, **{SERVER_HOLD_MS_KEY: 1000.0})
    done(f, b, **{SERVER_HOLD_MS_KEY: 1000.0})
    clock.advance(1.5)
    assert f.next(0) is None  # two seconds of debt
    clock.advance(0.6)
    nxt = f.next(0)
    assert nxt is not None and nxt.uri == "http://site.test/next"
    done(f, c)
    done(f, nxt)


def test_dns_uris_are_not_capped(tmp_path: Path) -> None:
    f, _ = frontier(tmp_path, host_max_connections=1)
    f.schedule(CrawlURI("dns:site.test"))
    f.schedule(CrawlURI("dns:other.test"))
    assert len(take_all(f)) == 2


def test_gate_alone() -> None:
    gate: ServerGate[str] = ServerGate(max_connections=1, min_interval_s=1.0)
    assert gate.try_start("s:80", 0.0) is None
    assert gate.try_start("s:80", 0.0) == math.inf
    gate.park("s:80", "q1")
    gate.park("s:80", "q2")
    assert gate.wakeable("s:80", 0.0) == ([], None)  # no free slot
    gate.finish("s:80", 0.5)
    assert gate.wakeable("s:80", 0.5) == ([], 1.0)  # slot free, interval not over: a timer
    assert gate.timer_fired("s:80", 1.0)
    assert gate.wakeable("s:80", 1.0) == (["q1"], None)
    assert gate.wakeable("s:80", 1.0) == ([], None)  # q1 not tried yet: no second wake
    gate.woken_attempted("s:80")
    assert gate.try_start("s:80", 1.0) is None
    assert gate.active("s:80") == 1
    assert gate.busiest(5) == [("s:80", 1, 1)]


@pytest.mark.parametrize("bad", ["http://", "http:///x"])
def test_unparsable_uris_never_reach_the_gate(tmp_path: Path, bad: str) -> None:
    f, _ = frontier(tmp_path, host_max_connections=1)
    assert f.schedule(CrawlURI(bad)) is False
