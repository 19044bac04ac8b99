"""QueueUris: the frontier report's last queued/peeked URIs, bounded to recent queues."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler.curi import CrawlURI
from crawler.frontier import HostnameQueueAssignmentPolicy, MemoryQueueStore, WorkQueueFrontier
from crawler.frontier.store.queue_uris import QueueUris
from crawler.order.schema import FrontierConfig, PolitenessConfig
from crawler.uniq import MemoryUriUniqFilter

pytestmark = pytest.mark.timeout(30)


def test_keeps_the_most_recently_touched_queues_only() -> None:
    uris = QueueUris(capacity=3)
    for i in range(5):
        uris.queued(f"q{i}", f"http://q{i}.test/a")
    uris.queued("q2", "http://q2.test/b")  # touched again: now the most recent
    uris.queued("q5", "http://q5.test/a")
    assert len(uris) == 3
    assert uris.last("q0") == ("", "") and uris.last("q3") == ("", "")
    assert uris.last("q2") == ("http://q2.test/b", "")
    assert uris.last("q4")[0] == "http://q4.test/a"


def test_queued_and_peeked_are_separate() -> None:
    uris = QueueUris(capacity=2)
    uris.queued("a", "http://a.test/1")
    uris.peeked("a", "http://a.test/0")
    assert uris.last("a") == ("http://a.test/1", "http://a.test/0")
    with pytest.raises(ValueError, match="capacity"):
        QueueUris(capacity=0)


def test_frontier_report_shows_last_queued_and_peeked(tmp_path: Path) -> None:
    politeness = PolitenessConfig(delay_factor=0, min_delay_ms=0, max_delay_ms=0)
    f = WorkQueueFrontier(
        MemoryQueueStore(),
        HostnameQueueAssignmentPolicy(),
        MemoryUriUniqFilter(),
        FrontierConfig(politeness=politeness),
    )
    f.open(tmp_path)
    for path in ("one", "two", "three"):
        assert f.schedule(CrawlURI(f"http://a.test/{path}"))
    curi = f.next(1.0)
    assert curi is not None
    details = {d.key: d for d in f.queue_details(10)}
    assert details["a.test"].last_queued == "http://a.test/three"
    assert details["a.test"].last_peeked == curi.uri == "http://a.test/one"
    f.close()


def test_each_queues_last_uri_told_once_leaves_the_map_uri_by_uri_would() -> None:
    # The frontier tells a batch's queues their last URI once each, in the order they were last
    # touched: the bounded map must end as if it had been told every URI in turn.
    import random

    rng = random.Random(7)
    for _ in range(200):
        steps = [(f"q{rng.randrange(6)}", f"u{i}") for i in range(rng.randrange(1, 12))]
        one_by_one, deduped = QueueUris(capacity=3), QueueUris(capacity=3)
        for key in ("q0", "q4", "q5"):
            one_by_one.queued(key, "old")
            deduped.queued(key, "old")
        for key, uri in steps:
            one_by_one.queued(key, uri)
        last: dict[str, str] = {}
        for key, uri in steps:
            last.pop(key, None)
            last[key] = uri
        for key, uri in last.items():
            deduped.queued(key, uri)
        for key in [f"q{k}" for k in range(6)]:
            assert one_by_one.last(key) == deduped.last(key), steps
        assert len(one_by_one) == len(deduped)
