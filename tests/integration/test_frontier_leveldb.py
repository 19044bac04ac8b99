"""The LevelDB queue store and uniq filter alone: byte-order heads, seek floors, memory use,
the filter's cache and persistence. The frontier's resume over every persistent store is in
tests/contracts/test_resume_contract.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler.clock import ManualClock
from crawler.curi import CrawlURI
from crawler.frontier import (
    HostnameQueueAssignmentPolicy,
    LevelDBQueueStore,
    StoreBatch,
    WorkQueueFrontier,
    sort_key,
)
from crawler.frontier.store import leveldb_store
from crawler.order.schema import FrontierConfig, PolitenessConfig
from crawler.uniq import LevelDBUriUniqFilter, LevelDBUriUniqFilterParams

pytestmark = pytest.mark.integration

NO_DELAY = FrontierConfig(
    politeness=PolitenessConfig(delay_factor=0, min_delay_ms=0, max_delay_ms=0)
)


def make_frontier(
    state: Path, config: FrontierConfig = NO_DELAY, finals: list[CrawlURI] | None = None
) -> WorkQueueFrontier:
    frontier = WorkQueueFrontier(
        LevelDBQueueStore(),
        HostnameQueueAssignmentPolicy(),
        LevelDBUriUniqFilter(),
        config,
        clock=ManualClock(),
        on_final=finals.append if finals is not None else None,
    )
    frontier.open(state)
    return frontier


def test_store_orders_by_key_bytes_and_skips_deleted_heads(tmp_path: Path) -> None:
    store = LevelDBQueueStore()
    store.open(tmp_path)
    try:
        # "a" must not see records of "a.b" although one key prefixes the other.
        store.write(
            StoreBatch(
                puts=[
                    ("a.b", sort_key(0, 0, 1), b"other queue"),
                    ("a", sort_key(3, 1, 2), b"normal"),
                    ("a", sort_key(2, 1, 3), b"medium"),
                ]
            )
        )
        assert store.head("a") == (sort_key(2, 1, 3), b"medium")
        for n in range(10, 2010):
            store.write(StoreBatch(puts=[("a", sort_key(3, 1, n), b"x%d" % n)]))
        head = store.head("a")
        assert head is not None
        store.write(StoreBatch(deletes=[("a", head[0])]))
        for n in (2, *range(10, 2009)):
            head = store.head("a")
            assert head == (sort_key(3, 1, n), b"normal" if n == 2 else b"x%d" % n)
            store.write(StoreBatch(deletes=[("a", head[0])]))
        # A new record below everything deleted is still found (the floor moves back down).
        store.write(StoreBatch(puts=[("a", sort_key(1, 1, 9999), b"prereq")]))
        assert store.head("a") == (sort_key(1, 1, 9999), b"prereq")
        store.write(StoreBatch(deletes=[("a", sort_key(1, 1, 9999))]))
        assert store.head("a") == (sort_key(3, 1, 2009), b"x2009")
        store.write(StoreBatch(meta={"q:a": b"1", "q:b": b"2", "frontier": b"3"}))
        assert list(store.scan_meta("q:")) == [("q:a", b"1"), ("q:b", b"2")]
    finally:
        store.close()


def test_only_the_latest_queues_keep_a_seek_floor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(leveldb_store, "FLOORS_KEPT", 3)
    store = LevelDBQueueStore()
    store.open(tmp_path)
    try:
        queues = [f"q{i}" for i in range(8)]
        store.write(
            StoreBatch(puts=[(q, n, b"%s-%d" % (q.encode(), n)) for q in queues for n in (1, 2, 3)])
        )
        for n in (1, 2, 3):  # take every queue's head in turn: floors come and go
            for q in queues:
                assert store.head(q) == (n, b"%s-%d" % (q.encode(), n))
                store.write(StoreBatch(deletes=[(q, n)]))
                assert len(store._floor) <= 3
        assert [store.head(q) for q in queues] == [None] * 8
        # a queue without a floor seeks from its first key, over its deleted records
        store.write(StoreBatch(puts=[("q0", 4, b"later")]))
        assert "q0" not in store._floor and store.head("q0") == (4, b"later")
    finally:
        store.close()


def test_store_memory_bytes_counts_what_leveldb_holds(tmp_path: Path) -> None:
    store = LevelDBQueueStore()
    store.open(tmp_path)
    empty = store.memory_bytes()
    store.write(StoreBatch(puts=[("q", n, b"x" * 100) for n in range(5000)]))
    assert store.memory_bytes() > empty + 5000 * 100  # in the memtable
    store.close()
    assert store.memory_bytes() == 0


def test_uniq_filter_persists_and_caches(tmp_path: Path) -> None:
    f = LevelDBUriUniqFilter(LevelDBUriUniqFilterParams(cache_size=10))
    f.open(tmp_path)
    assert f.add_many([f"http://a.test/{i}" for i in range(100)]) == [True] * 100
    assert f.add("http://a.test/5") is False  # found in LevelDB past the small cache
    assert f.add("http://a.test/new") is True
    f.add_force("http://a.test/new")
    f.close()
    g = LevelDBUriUniqFilter()
    g.open(tmp_path)
    assert g.count() == 101
    assert g.add("http://a.test/99") is False
    assert g.add("http://b.test/") is True
    g.close()
