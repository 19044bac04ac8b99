"""QueueCache: a queue dropped from RAM comes back as its last batch left it, durable or not."""

from __future__ import annotations

from pathlib import Path

from crawler.frontier import LevelDBQueueStore
from crawler.frontier.store.queue_cache import QueueCache
from crawler.frontier.store.queue_store import StoreBatch
from crawler.frontier.store.write_behind_store import WriteBehindStore
from crawler.frontier.workqueue import INACTIVE, READY, WorkQueue


def test_a_queue_evicted_before_its_batch_is_durable_comes_back_as_written(
    tmp_path: Path,
) -> None:
    store = WriteBehindStore(LevelDBQueueStore())
    store.open(tmp_path)
    cache = QueueCache(store, capacity=1)
    queues = []
    for key in ("a.test", "b.test"):
        q = WorkQueue(key)
        q.state, q.size, q.precedence, q.inactive_seq = INACTIVE, 7, 4, 42
        cache.add(q)
        store.write(StoreBatch(meta={q.meta_name: q.to_meta()}))
        queues.append(q)
    active = WorkQueue("c.test")
    active.state, active.size = READY, 1
    cache.add(active)  # in rotation: never evicted
    assert cache.trim() == 1 and len(cache) == 2 and cache.get("a.test") is None
    assert store.inner.get_meta("q:a.test") is None  # its batch is not written yet
    back = cache.load("a.test")
    assert back is not None and back is not queues[0]
    assert (back.state, back.size, back.precedence, back.inactive_seq) == (INACTIVE, 7, 4, 42)
    assert cache.loads == 1
    store.sync()
    assert cache.trim() == 1 and cache.get("c.test") is active
    assert cache.load("never.test") is None
    store.close()
