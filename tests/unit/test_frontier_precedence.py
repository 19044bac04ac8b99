"""Scheduling policies: URI precedence, cost, queue precedence and its floor, canonicalization
rules from the order, and the frontier summary report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from crawler.clock import ManualClock
from crawler.curi import CrawlURI
from crawler.frontier import (
    HostnameQueueAssignmentPolicy,
    MemoryQueueStore,
    WorkQueueFrontier,
    frontier_summary_report,
)
from crawler.frontier.frontier_abilities import FrontierAbilities
from crawler.frontier.intake.precedence import wag_cost
from crawler.order.schema import FrontierConfig, PolitenessConfig
from crawler.uniq import MemoryUriUniqFilter


def make(tmp: Path, **config: Any) -> WorkQueueFrontier:
    config.setdefault(
        "politeness", PolitenessConfig(delay_factor=0, min_delay_ms=0, max_delay_ms=0)
    )
    f = WorkQueueFrontier(
        MemoryQueueStore(),
        HostnameQueueAssignmentPolicy(),
        MemoryUriUniqFilter(),
        FrontierConfig(**config),
        clock=ManualClock(),
    )
    f.open(tmp)
    return f


def drain(f: WorkQueueFrontier, status: int = 200) -> list[str]:
    out = []
    while (curi := f.next(0)) is not None:
        out.append(curi.uri)
        curi.status = status
        f.finished(curi)
    return out


def child(via: str, uri: str, hops: str) -> CrawlURI:
    return CrawlURI(uri, via=via, hop_path=hops)


def test_hops_precedence_crawls_shallow_pages_first(tmp_path: Path) -> None:
    f = make(tmp_path, uri_precedence_policy="hops")
    f.schedule(child("http://a.test/", "http://a.test/deep", "LLL"))
    f.schedule(child("http://a.test/", "http://a.test/shallow", "L"))
    f.schedule(child("http://a.test/", "http://a.test/embed", "LE"))
    assert drain(f) == ["http://a.test/shallow", "http://a.test/embed", "http://a.test/deep"]


def test_cost_precedence_with_wag_cost_puts_queries_last(tmp_path: Path) -> None:
    f = make(tmp_path, cost_policy="wag")
    f.schedule(child("http://a.test/list", "http://a.test/list?page=2", "L"))
    f.schedule(child("http://a.test/", "http://a.test/search?q=x", "L"))
    f.schedule(child("http://a.test/", "http://a.test/plain", "L"))
    assert drain(f) == [
        "http://a.test/plain",
        "http://a.test/search?q=x",
        "http://a.test/list?page=2",
    ]
    assert wag_cost(CrawlURI("http://a.test/x?y", via="http://a.test/x?z")) == 3


def test_highest_uri_queue_precedence_activates_urgent_queues_first(tmp_path: Path) -> None:
    f = make(tmp_path, queue_precedence_policy="highest_uri", uri_precedence_policy="preset")
    f.schedule(CrawlURI("http://late.test/", precedence=9))
    f.schedule(CrawlURI("http://soon.test/", precedence=1))
    assert f.snapshot().inactive_by_precedence == {4: 1, 12: 1}
    assert drain(f) == ["http://soon.test/", "http://late.test/"]


def test_success_counts_precedence_demotes_big_queues(tmp_path: Path) -> None:
    f = make(tmp_path, queue_precedence_policy="success_counts", balance_replenish_amount=50)
    for i in range(160):
        f.schedule(CrawlURI(f"http://big.test/{i}"))
    order = []
    for _ in range(110):
        curi = f.next(0)
        assert curi is not None
        order.append(curi.uri)
        curi.status = 200
        f.finished(curi)
        if len(order) == 105:
            f.schedule(CrawlURI("http://small.test/"))
    # after 100 successes big.test's precedence is 4: small.test (3) goes first at its turn
    assert "http://small.test/" in order


def test_canonicalization_rules_come_from_the_order(tmp_path: Path) -> None:
    default = make(tmp_path / "a")
    assert default.schedule(CrawlURI("http://a.test/p?b=2&a=1"))
    assert default.schedule(CrawlURI("http://a.test/p?a=1&b=2"))
    assert default.schedule(CrawlURI("http://www.a.test/")) is True
    sorting = make(tmp_path / "b", canonicalization=["lowercase", "sort_query", "strip_www"])
    assert sorting.schedule(CrawlURI("http://a.test/p?b=2&a=1"))
    assert not sorting.schedule(CrawlURI("http://a.test/p?a=1&b=2"))
    assert sorting.schedule(CrawlURI("http://www.a.test/x"))
    assert not sorting.schedule(CrawlURI("http://a.test/x"))


def test_unknown_canonicalization_rule_is_an_order_error() -> None:
    with pytest.raises(ValidationError, match="strip_evrything"):
        FrontierConfig(canonicalization=["lowercase", "strip_evrything"])


def test_summary_report_has_heritrix_blocks(tmp_path: Path) -> None:
    f = make(tmp_path, politeness=PolitenessConfig(min_delay_ms=2000, max_delay_ms=2000))
    for i in range(3):
        f.schedule(CrawlURI(f"http://a.test/{i}"))
    f.schedule(CrawlURI("http://b.test/"))
    curi = f.next(0)
    assert curi is not None
    curi.status = 200
    f.finished(curi)
    other = f.next(0)
    assert other is not None
    text = frontier_summary_report(FrontierAbilities.of(f), "job", 1_700_000_000.0)
    lines = text.splitlines()
    assert lines[0] == "Frontier report - 202311142213"
    assert " Job being crawled: job" in lines
    assert " -----===== STATS =====-----" in lines and " -----===== QUEUES =====-----" in lines
    assert " Queued:        3" in lines and "  Successfully: 1" in lines
    assert (
        "                    In-process: 1" in lines
        and "                       Snoozed: 1" in lines
    )
    assert any(line.startswith("Queue a.test (p3)") for line in lines)
    assert "   wakes in: 2s" in lines
    details = {d.key: d for d in f.queue_details(10)}
    assert details["a.test"].size == 2 and details["a.test"].state == "snoozed"
    assert details["a.test"].total_spent == 1 and details["a.test"].last_fetch_s > 0
