"""Quick frontier throughput: schedule (new / already seen) and next+finished, URIs per second.

Run: ``.venv/bin/python bench/frontier_quick.py [N]``. Prints a table; asserts nothing. Beside
each wall-clock rate, the process's CPU-µs per URI (``time.process_time``, all threads): on a
shared machine the wall clock counts the time other processes had the cores, the CPU time not.
"""

from __future__ import annotations

import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from crawler.clock import SystemClock
from crawler.curi import CrawlURI
from crawler.frontier import (
    HostnameQueueAssignmentPolicy,
    LevelDBQueueStore,
    MemoryQueueStore,
    WorkQueueFrontier,
)
from crawler.order.schema import FrontierConfig, PolitenessConfig
from crawler.uniq import LevelDBUriUniqFilter, MemoryUriUniqFilter

CONFIG = FrontierConfig(politeness=PolitenessConfig(delay_factor=0, min_delay_ms=0, max_delay_ms=0))


def build(kind: str, state: Path) -> WorkQueueFrontier:
    store: Any = LevelDBQueueStore() if kind == "leveldb" else MemoryQueueStore()
    uniq: Any = LevelDBUriUniqFilter() if kind == "leveldb" else MemoryUriUniqFilter()
    frontier = WorkQueueFrontier(
        store, HostnameQueueAssignmentPolicy(), uniq, CONFIG, clock=SystemClock()
    )
    frontier.open(state)
    return frontier


def rate(n: int, seconds: float, cpu: float) -> str:
    each, cpu_each = seconds * 1e6 / n, cpu * 1e6 / n
    return f"{n / seconds:>10,.0f}/s  ({each:6.1f} us each, CPU {cpu_each:6.1f} us)"


def run(kind: str, n: int, threads: int) -> None:
    uris = [f"http://host{i % 1000}.example.com/section/page{i}.html?x={i}" for i in range(n)]
    with tempfile.TemporaryDirectory() as tmp:
        frontier = build(kind, Path(tmp))
        t0, c0 = time.perf_counter(), time.process_time()
        for uri in uris:
            frontier.schedule(CrawlURI(uri))
        t1, c1 = time.perf_counter(), time.process_time()
        for uri in uris:
            frontier.schedule(CrawlURI(uri))
        t2, c2 = time.perf_counter(), time.process_time()
        print(f"{kind:8} schedule new        {rate(n, t1 - t0, c1 - c0)}")
        print(f"{kind:8} schedule seen       {rate(n, t2 - t1, c2 - c1)}")

        def toe() -> None:
            while (curi := frontier.next(0.05)) is not None:
                curi.status = 200
                frontier.finished(curi)

        t3, c3 = time.perf_counter(), time.process_time()
        workers = [threading.Thread(target=toe) for _ in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        t4, c4 = time.perf_counter(), time.process_time()
        assert frontier.is_empty(), frontier.snapshot()
        print(f"{kind:8} next+finished x{threads:<3} {rate(n, t4 - t3 - 0.05, c4 - c3)}")
        frontier.close()


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    for kind in ("memory", "leveldb"):
        for threads in (1, 16):
            run(kind, n, threads)


if __name__ == "__main__":
    main()
