"""MemoryQueueStore and the sort-key layout shared by every QueueStore."""

from __future__ import annotations

from pathlib import Path

from crawler.frontier import MemoryQueueStore, StoreBatch, sort_key


def test_sort_key_orders_directive_then_precedence_then_ordinal() -> None:
    keys = [sort_key(3, 1, 5), sort_key(2, 9, 7), sort_key(3, 0, 9), sort_key(3, 1, 4)]
    assert sorted(keys) == [
        sort_key(2, 9, 7),
        sort_key(3, 0, 9),
        sort_key(3, 1, 4),
        sort_key(3, 1, 5),
    ]
    assert sort_key(3, 500, 1) == sort_key(3, 127, 1)  # precedence clipped to 127


def test_memory_store_head_put_delete_meta(tmp_path: Path) -> None:
    store = MemoryQueueStore()
    store.open(tmp_path)
    store.write(StoreBatch(puts=[("q", 5, b"five"), ("q", 3, b"three"), ("r", 1, b"one")]))
    assert store.head("q") == (3, b"three")
    store.write(StoreBatch(deletes=[("q", 3)], puts=[("q", 3, b"again")]))
    assert store.head("q") == (3, b"again")
    store.write(StoreBatch(deletes=[("q", 3)], meta={"q:q": b"m", "q:r": b"n", "x": b"y"}))
    assert store.head("q") == (5, b"five")
    store.write(StoreBatch(deletes=[("q", 5)], meta={"x": None}))
    assert store.head("q") is None
    assert list(store.scan_meta("q:")) == [("q:q", b"m"), ("q:r", b"n")]
    assert store.get_meta("x") is None
