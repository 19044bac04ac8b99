"""Frontier throughput: schedule() of new and already-seen URIs, next()+finished(), per second.

The real WorkQueueFrontier over the LevelDB store and the default uniq filter
(LevelDBUriUniqFilter), hostname queues, politeness off, URIs spread over 10^3 and 10^5 hosts.
"Seen (cold)" re-schedules with the recent-fingerprint cache off, so every answer comes from
LevelDB (what a URI seen long ago costs). A second table times each uniq filter's ``add()`` alone.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from crawler.curi import CrawlURI
from crawler.frontier import HostnameQueueAssignmentPolicy, LevelDBQueueStore, WorkQueueFrontier
from crawler.order.schema import FrontierConfig, PolitenessConfig
from crawler.uniq import (
    BloomUriUniqFilter,
    BloomUriUniqFilterParams,
    LevelDBUriUniqFilter,
    LevelDBUriUniqFilterParams,
    MemoryUriUniqFilter,
    UriUniqFilter,
)

GOALS = {"new": 30_000, "seen": 100_000, "next+finished": 10_000}


def config() -> FrontierConfig:
    politeness = {"delay_factor": 0, "min_delay_ms": 0, "max_delay_ms": 0}
    fields = set(PolitenessConfig.model_fields)
    if "host_max_connections" in fields:
        politeness["host_max_connections"] = 0
    return FrontierConfig(politeness=PolitenessConfig.model_validate(politeness))


def uris(n: int, hosts: int) -> list[str]:
    return [
        f"http://www{i % hosts}.example{i % hosts % 7}.com/s{i % 13}/page{i}.html?q={i}"
        for i in range(n)
    ]


def frontier(state: Path, uniq: UriUniqFilter[Any]) -> WorkQueueFrontier:
    f = WorkQueueFrontier(LevelDBQueueStore(), HostnameQueueAssignmentPolicy(), uniq, config())
    f.open(state)
    return f


def timed(fn: Callable[[], object], repeat: int = 1) -> float:
    """Best wall time of ``repeat`` calls (the machine may be shared: the best is the least
    disturbed)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def drain(f: WorkQueueFrontier, threads: int) -> None:
    def toe() -> None:
        while (curi := f.next(0.2)) is not None:
            curi.status = 200
            f.finished(curi)

    workers = [threading.Thread(target=toe) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()


def frontier_rates(n: int, hosts: int, threads: int) -> dict[str, float]:
    """URIs/s for each operation (one frontier, fresh state)."""
    batch = uris(n, hosts)
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-frontier-") as tmp:
        f = frontier(Path(tmp), LevelDBUriUniqFilter())
        out["new"] = n / timed(lambda: [f.schedule(CrawlURI(u)) for u in batch])
        out["seen"] = n / timed(lambda: [f.schedule(CrawlURI(u)) for u in batch], 3)
        elapsed = timed(lambda: drain(f, threads)) - 0.2  # the last next() waits out its timeout
        assert f.is_empty(), f.snapshot()
        out["next+finished"] = n / elapsed
        f.close()
        cold = frontier(Path(tmp), LevelDBUriUniqFilter(LevelDBUriUniqFilterParams(cache_size=0)))
        out["seen (cold)"] = n / timed(lambda: [cold.schedule(CrawlURI(u)) for u in batch], 3)
        cold.close()
    return out


def uniq_rates(n: int) -> list[tuple[str, float, float]]:
    """(filter, µs per add() of a new URI, µs per add() of a seen one)."""
    batch = uris(n, 1000)
    filters: list[tuple[str, Callable[[], UriUniqFilter[Any]]]] = [
        ("memory", MemoryUriUniqFilter),
        ("leveldb mmh3", LevelDBUriUniqFilter),
        (
            "leveldb mmh3, no cache",
            lambda: LevelDBUriUniqFilter(LevelDBUriUniqFilterParams(cache_size=0)),
        ),
        (
            "leveldb md5",
            lambda: LevelDBUriUniqFilter(LevelDBUriUniqFilterParams(fingerprint="md5")),
        ),
        (
            "bloom mmh3 p=1e-6",
            lambda: BloomUriUniqFilter(
                BloomUriUniqFilterParams(expected_items=n, false_positive_rate=1e-6)
            ),
        ),
        (
            "bloom mmh3 p=1e-6, no cache",
            lambda: BloomUriUniqFilter(
                BloomUriUniqFilterParams(expected_items=n, false_positive_rate=1e-6, cache_size=0)
            ),
        ),
    ]
    rows = []
    for name, make in filters:
        with tempfile.TemporaryDirectory(prefix="bench-uniq-") as tmp:
            uniq = make()
            uniq.open(Path(tmp))
            add = uniq.add
            new = timed(lambda: [add(u) for u in batch])  # noqa: B023 - used at once
            seen = timed(lambda: [add(u) for u in batch], 3)  # noqa: B023
            uniq.close()
        rows.append((name, new * 1e6 / n, seen * 1e6 / n))
    return rows


def run_all(n: int, threads: int) -> tuple[str, dict[str, Any]]:
    results: dict[str, Any] = {}
    lines = [
        "| hosts   | URIs    | schedule new | schedule seen | seen (cold) "
        f"| next+finished x{threads} |",
        "|---------|---------|--------------|---------------|-------------|------------------|",
    ]
    for hosts in (1_000, 100_000):
        r = frontier_rates(n, hosts, threads)
        results[f"hosts={hosts}"] = r
        lines.append(
            f"| {hosts:>7,} | {n:>7,} | {r['new']:>10,.0f}/s | {r['seen']:>11,.0f}/s "
            f"| {r['seen (cold)']:>9,.0f}/s | {r['next+finished']:>14,.0f}/s |"
        )
    goals = ", ".join(f"{k} >= {v:,}/s" for k, v in GOALS.items())
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    lines.append(f"\nGoals: {goals}. Load average during the run: {load} (2 cores).\n")
    lines += [
        "| uniq filter                  | add() new | add() seen |",
        "|------------------------------|-----------|------------|",
    ]
    rows = uniq_rates(min(n, 200_000))
    results["uniq_add_us"] = {name: {"new": a, "seen": b} for name, a, b in rows}
    for name, a, b in rows:
        lines.append(f"| {name:<28} | {a:>6.2f} us | {b:>7.2f} us |")
    return "\n".join(lines), results


if __name__ == "__main__":
    print(run_all(200_000, 8)[0])
