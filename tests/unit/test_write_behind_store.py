"""WriteBehindStore: cached queue heads stay exact, writes reach the store in order on sync."""

from __future__ import annotations

import threading
from pathlib import Path

from crawler.frontier import LevelDBQueueStore
from crawler.frontier.store.queue_store import StoreBatch
from crawler.frontier.store.write_behind_store import WriteBehindStore


def opened(tmp_path: Path, head_records: int = 4) -> WriteBehindStore:
    store = WriteBehindStore(LevelDBQueueStore(), head_records=head_records, max_cached_queues=2)
    store.open(tmp_path)
    return store


def put(store: WriteBehindStore, queue: str, *keys: int) -> None:
    store.write(StoreBatch(puts=[(queue, k, f"v{k}".encode()) for k in keys]))


def drain(store: WriteBehindStore, queue: str) -> list[int]:
    out = []
    while (head := store.head(queue)) is not None:
        out.append(head[0])
        store.write(StoreBatch(deletes=[(queue, head[0])]))
    return out


def test_heads_come_out_in_key_order_past_the_cached_few(tmp_path: Path) -> None:
    store = opened(tmp_path)
    put(store, "q", *range(10, 20))
    assert store.head("q") == (10, b"v10")  # read from the store: 4 cached, more behind
    put(store, "q", 5, 25, 12)  # 5 joins the cache at the front, 25 waits in the store
    assert drain(store, "q") == [5, *range(10, 20), 25]


def test_sync_makes_every_write_durable_in_order(tmp_path: Path) -> None:
    store = opened(tmp_path)
    put(store, "q", 1, 2)
    store.write(StoreBatch(deletes=[("q", 1)], meta={"m": b"1"}))
    store.write(StoreBatch(meta={"m": b"2"}))
    store.sync()
    store.close()
    reopened = LevelDBQueueStore()
    reopened.open(tmp_path)
    assert reopened.head("q") == (2, b"v2")
    assert reopened.get_meta("m") == b"2"  # the later write won
    reopened.close()


def test_meta_reads_see_pending_writes_and_evicted_queues_are_reread(tmp_path: Path) -> None:
    store = opened(tmp_path)
    for name in ("a", "b", "c"):  # three queues, two cached
        put(store, name, 1, 2)
        assert store.head(name) == (1, b"v1")
    store.write(StoreBatch(meta={"x": b"y"}))
    assert store.get_meta("x") == b"y"
    assert drain(store, "a") == [1, 2]  # "a" was evicted: read again, pending deletes included
    store.close()


def test_concurrent_sync_callers_all_return_durable(tmp_path: Path) -> None:
    store = opened(tmp_path)
    lock = threading.Lock()  # stands for the frontier's lock around write()

    def worker(n: int) -> None:
        for i in range(200):
            with lock:
                put(store, f"q{n}", i)
            store.sync()

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    store.close()
    reopened = LevelDBQueueStore()
    reopened.open(tmp_path)
    assert [len(reopened.head_many(f"q{n}", 1000)) for n in range(4)] == [200] * 4
    reopened.close()


def test_read_meta_sees_remembered_values_until_durable(tmp_path: Path) -> None:
    store = opened(tmp_path)
    store.write(StoreBatch(meta={"q:a": b"1"}))
    store.write(StoreBatch(meta={"q:a": b"2", "q:b": b"x"}))
    store.remember("q:a", b"2")
    store.remember("q:b", b"x")
    assert store.inner.get_meta("q:a") is None  # nothing written yet
    assert (store.read_meta("q:a"), store.read_meta("q:b")) == (b"2", b"x")
    assert store.inner.get_meta("q:a") is None  # read without writing what is pending
    store.sync()
    store.write(StoreBatch(meta={"q:b": None}))
    store.remember("q:b", None)
    assert (store.read_meta("q:a"), store.read_meta("q:b")) == (b"2", None)
    store.sync()
    assert (store.read_meta("q:a"), store.read_meta("q:b"), store.read_meta("q:c")) == (
        b"2",
        None,
        None,
    )
    # a few entries from a point on, in name order
    store.write(StoreBatch(meta={f"i:{n:02d}": b"" for n in (3, 1, 2, 5)}))
    assert [n for n, _ in store.scan_meta_range("i:", "i:01", 2)] == ["i:02", "i:03"]
    store.close()
