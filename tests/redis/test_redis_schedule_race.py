"""Two workers scheduling the same links at once: each URI is handed out once.

Both workers find a link not yet recorded, both queue it, one records it first and the other
takes its copy back (UNSCHEDULE). A worker whose exchange leased its copy before taking it back
would have it fetched twice. Real redis-server; threads of both workers wait in ``next`` while
the batches arrive, as toe threads do.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from support.redis_servers import RedisServer
from support.redis_worker_frontier import worker_frontier

from crawler.curi import CrawlURI

ROUNDS = 40
LINKS = 12
TAKERS = 6


def _frontier(url: str, wid: str) -> Any:
    return worker_frontier(url, wid, "race:")


@pytest.fixture
def workers(redis_server: RedisServer) -> Iterator[list[Any]]:
    made = [_frontier(redis_server.url, "wa"), _frontier(redis_server.url, "wb")]
    yield made
    for f in made:
        f.close()


def test_links_both_workers_schedule_at_once_are_handed_out_once(workers: list[Any]) -> None:
    handed: Counter[str] = Counter()
    lock = threading.Lock()
    stop = threading.Event()

    def take(frontier: Any) -> None:
        while not stop.is_set():
            curi = frontier.next(0.05)
            if curi is None:
                continue
            with lock:
                handed[curi.uri] += 1
            curi.status = 200
            frontier.finished(curi)

    takers = [
        threading.Thread(target=take, args=(f,), daemon=True)
        for f in workers
        for _ in range(TAKERS)
    ]
    for t in takers:
        t.start()
    expected: list[str] = []
    for r in range(ROUNDS):
        uris = [f"http://h{r}-{i % 3}.example/p{i}" for i in range(LINKS)]
        expected += uris
        start = threading.Barrier(len(workers))

        def schedule(frontier: Any, uris: list[str] = uris, start: Any = start) -> None:
            batch = [CrawlURI(u, via="http://seed.example/", hop_path="L") for u in uris]
            start.wait()
            frontier.schedule_many(batch)

        batches = [threading.Thread(target=schedule, args=(f,)) for f in workers]
        for t in batches:
            t.start()
        for t in batches:
            t.join()
    for f in workers:
        assert f.flush(5.0)
    deadline = threading.Event()
    for _ in range(400):  # up to 20 s on a loaded machine; done as soon as all were handed out
        with lock:
            if sum(handed.values()) >= len(expected):
                break
        deadline.wait(0.05)
    deadline.wait(0.5)  # a copy handed out late would show here
    stop.set()
    for t in takers:
        t.join(timeout=5)
    assert {u: handed[u] for u in expected if handed[u] != 1} == {}
