"""The QueueStore contract every store keeps (memory, LevelDB, Redis, a Redis Cluster): a queue's
head is its lowest key, deletes and puts of one batch apply together, meta keys are read, listed
by prefix in key order and deleted with None; a persistent store keeps it all across a reopen."""

from __future__ import annotations

import pytest
from support.stores import FrontierMaker

from crawler.frontier import StoreBatch

pytestmark = pytest.mark.timeout(60)


def test_store_head_put_delete_meta(stores: FrontierMaker) -> None:
    store = stores.queue_store("s")
    store.write(
        StoreBatch(
            puts=[("q", 5, b"five"), ("q", 3, b"three"), ("r", 1, b"one")],
            meta={"q:q": b"m", "q:r": b"n", "x": b"y"},
        )
    )
    assert store.head("q") == (3, b"three")
    store.write(StoreBatch(deletes=[("q", 3)], puts=[("q", 3, b"again")]))
    assert store.head("q") == (3, b"again")
    store.write(StoreBatch(deletes=[("q", 3)], meta={"q:r": None}))
    assert store.head("q") == (5, b"five")
    assert store.head("r") == (1, b"one")
    assert store.head("missing") is None
    assert store.get_meta("x") == b"y"
    assert list(store.scan_meta("q:")) == [("q:q", b"m")]
    store.write(StoreBatch(deletes=[("q", 5)], meta={"x": None}))
    assert store.head("q") is None
    assert store.get_meta("x") is None
    if stores.persists:
        store.write(StoreBatch(puts=[("q", 7, b"seven")]))
        store.close()
        reopened = stores.queue_store("s")
        assert reopened.head("q") == (7, b"seven")
        assert list(reopened.scan_meta("q:")) == [("q:q", b"m")]
