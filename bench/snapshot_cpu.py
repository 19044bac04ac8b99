"""CPU of the work-queue frontier's ``snapshot()`` (status.json every second) by queues in RAM.

Run: ``.venv/bin/python bench/snapshot_cpu.py [--queues 10000,100000] [--rounds 300]``.

For each size N: a frontier (memory store, politeness off, ``frontier.cached_queues`` N) gets one
URI on each of N hosts (N inactive queues, all in RAM), then 3 x N more on random hosts. Then
``--rounds`` rounds of a crawl's work between two status writes — ``--work`` pages, each
``next()``, 5 outlinks scheduled (2 on new hosts, 3 on hosts known), ``finished()`` — and one
``snapshot()``, timed alone (``time.process_time``). Prints CPU-us per snapshot call (mean and
median) and of the work between calls, with the load average. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from crawler.clock import SystemClock
from crawler.curi import CrawlURI, Hop
from crawler.frontier import HostnameQueueAssignmentPolicy, MemoryQueueStore, WorkQueueFrontier
from crawler.order.schema import FrontierConfig, PolitenessConfig
from crawler.uniq import MemoryUriUniqFilter


def build(queues: int, state: Path) -> WorkQueueFrontier:
    config = FrontierConfig(
        politeness=PolitenessConfig(delay_factor=0, min_delay_ms=0, max_delay_ms=0),
        cached_queues=queues,
    )
    f = WorkQueueFrontier(
        MemoryQueueStore(),
        HostnameQueueAssignmentPolicy(),
        MemoryUriUniqFilter(),
        config,
        clock=SystemClock(),
    )
    f.open(state)
    return f


def measure(queues: int, rounds: int, work: int) -> dict[str, float]:
    rnd = random.Random(queues)
    with tempfile.TemporaryDirectory() as tmp:
        f = build(queues, Path(tmp))
        batch = 1000
        for start in range(0, queues, batch):
            f.schedule_many(
                [CrawlURI(f"http://h{h}.test/") for h in range(start, min(queues, start + batch))]
            )
        extra = [CrawlURI(f"http://h{rnd.randrange(queues)}.test/x{i}") for i in range(3 * queues)]
        for start in range(0, len(extra), batch):
            f.schedule_many(extra[start : start + batch])
        new_host = queues
        snap_s: list[float] = []
        work_s = 0.0
        for _ in range(rounds):
            t0 = time.process_time()
            for _ in range(work):
                curi = f.next(0)
                if curi is None:
                    continue
                links = [f"http://h{new_host + j}.test/" for j in range(2)]
                links += [f"http://h{rnd.randrange(queues)}.test/{rnd.random()}" for _ in range(3)]
                new_host += 2
                f.schedule_many([curi.create_child(u, Hop.LINK) for u in links])
                curi.status = 200
                f.finished(curi)
            t1 = time.process_time()
            f.snapshot()
            t2 = time.process_time()
            work_s += t1 - t0
            snap_s.append(t2 - t1)
        in_ram = len(f.sched.queues)
        f.close()
    return {
        "queues_in_ram": in_ram,
        "snapshot_us_mean": statistics.fmean(snap_s) * 1e6,
        "snapshot_us_median": statistics.median(snap_s) * 1e6,
        "work_us_per_page": work_s / (rounds * work) * 1e6,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--queues", default="10000,100000", help="queues in RAM, comma-separated")
    p.add_argument("--rounds", type=int, default=300, help="snapshot calls timed per size")
    p.add_argument("--work", type=int, default=50, help="pages crawled between two snapshots")
    args = p.parse_args()
    print("| queues in RAM | snapshot CPU-us mean | median | work CPU-us per page | load |")
    print("|---:|---:|---:|---:|---:|")
    for n in (int(float(x)) for x in args.queues.split(",")):
        r = measure(n, args.rounds, args.work)
        print(
            f"| {r['queues_in_ram']:,} | {r['snapshot_us_mean']:,.1f} | "
            f"{r['snapshot_us_median']:,.1f} | {r['work_us_per_page']:,.1f} | "
            f"{os.getloadavg()[0]:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
