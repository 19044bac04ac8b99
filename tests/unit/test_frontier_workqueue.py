"""WorkQueueFrontier alone (memory store, manual clock): session budgets, snapshot depths and
congestion, close. What every store shares is in tests/contracts/."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from crawler.clock import ManualClock
from crawler.curi import CrawlURI
from crawler.frontier import (
    HostnameQueueAssignmentPolicy,
    MemoryQueueStore,
    QueueStore,
    WorkQueueFrontier,
)
from crawler.order.schema import FrontierConfig, PolitenessConfig
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


def test_session_budget_rotates_to_waiting_queues(tmp_path: Path) -> None:
    h = Harness(tmp_path, balance_replenish_amount=2)
    for i in range(4):
        h.add(f"http://a.test/{i}")
    for i in range(2):
        h.add(f"http://b.test/{i}")
    order = drain_one_queue(h)
    assert [u.split("/")[2] for u in order] == ["a.test"] * 2 + ["b.test"] * 2 + ["a.test"] * 2


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
