"""Wake-ups of the threads blocked in a Redis worker's ``next()``, and CPU per URI, in one process.

A fresh redis-server holds a frontier of ``--hosts`` hosts (``--per-host`` URIs each) with a
politeness delay of ``--delay-ms``; ``--threads`` toe-like threads loop on ``next(2.0)``, hold
each URI ``--fetch-ms`` (a sleep: the fetch's I/O) and ``finished()`` it, for ``--seconds``.
Reported: URIs handed out, wake-ups of the threads waiting in ``next()`` (every return from
their condition's ``wait``, counted by wrapping the frontier's conditions, so the script runs
on any tree), wake-ups of the exchange thread, exchange rounds, this process's CPU-µs per
``next()`` + ``finished()`` (all its threads: toe threads, exchange, lease keeper) and
Redis's, with the load average before and after. ``--hosts 0``: an empty frontier (idle
threads; see the per-second figures).

Run: ``python bench/redis_next_herd.py [--threads 300] [--hosts 2000] [--delay-ms 5000]``.
Needs redis-server. Compare trees by running it with ``PYTHONPATH`` set to each.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from support.redis_servers import RedisServer

from crawler.curi import CrawlURI
from crawler.frontier import HostnameQueueAssignmentPolicy
from crawler.frontier.redis.redis_frontier import RedisFrontier
from crawler.frontier.redis.redis_store import (
    RedisQueueStore,
    RedisQueueStoreParams,
)
from crawler.order.schema import FrontierConfig, PolitenessConfig
from crawler.uniq.redis_uniq import RedisUriUniqFilter, RedisUriUniqFilterParams


class WaitCounter:
    """Counts the returns from ``wait`` of the conditions it wraps (each one a wake-up)."""

    def __init__(self) -> None:
        self.count = 0

    def wrap(self, cond: threading.Condition) -> None:
        inner: Callable[..., bool] = cond.wait

        def wait(timeout: float | None = None) -> bool:
            try:
                return inner(timeout)
            finally:
                self.count += 1  # the condition's lock is held again here

        cond.wait = wait  # type: ignore[method-assign]


def build(url: str, delay_ms: int) -> RedisFrontier:
    store = RedisQueueStore(RedisQueueStoreParams(url=url, namespace="herd:", worker_id="w1"))
    uniq = RedisUriUniqFilter(RedisUriUniqFilterParams(url=url, namespace="herd:"))
    pol = PolitenessConfig(
        delay_factor=0, min_delay_ms=delay_ms, max_delay_ms=delay_ms, host_max_connections=0
    )
    config = FrontierConfig(politeness=pol)
    return RedisFrontier(store, HostnameQueueAssignmentPolicy(), uniq, config)


def run(args: argparse.Namespace, url: str, workdir: Path) -> dict[str, Any]:
    frontier = build(url, args.delay_ms)
    frontier.open(workdir / "state")
    batch = [
        CrawlURI(f"http://h{h}.example/{k}")
        for k in range(args.per_host)
        for h in range(args.hosts)
    ]
    for i in range(0, len(batch), 1000):
        frontier.schedule_many(batch[i : i + 1000])
    waiters, exchange_waits = WaitCounter(), WaitCounter()
    for name in ("_wake", "_answer"):
        cond = getattr(frontier, name, None)
        if isinstance(cond, threading.Condition):
            waiters.wrap(cond)
    exchange: Any = frontier._exchange
    exchange_waits.wrap(exchange._cond)
    handed = [0]
    stop = threading.Event()
    fetch_s = args.fetch_ms / 1000.0

    def toe() -> None:
        while not stop.is_set():
            curi = frontier.next(2.0)
            if curi is None:
                continue
            handed[0] += 1
            time.sleep(fetch_s)
            curi.status = 200
            curi.fetch_start_ms = int(time.time() * 1000) - args.fetch_ms
            curi.fetch_duration_ms = args.fetch_ms
            frontier.finished(curi)

    import redis

    client = redis.Redis.from_url(url)

    def redis_cpu() -> float:
        info = client.info("cpu")
        return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])

    threads = [threading.Thread(target=toe, daemon=True) for _ in range(args.threads)]
    load_before = os.getloadavg()[0]
    for t in threads:
        t.start()
    time.sleep(args.warmup)
    h0, w0, x0, r0 = handed[0], waiters.count, exchange_waits.count, exchange.rounds
    c0, rc0, t0 = time.process_time(), redis_cpu(), time.monotonic()
    time.sleep(args.seconds)
    h1, w1, x1, r1 = handed[0], waiters.count, exchange_waits.count, exchange.rounds
    c1, rc1, t1 = time.process_time(), redis_cpu(), time.monotonic()
    load_after = os.getloadavg()[0]
    stop.set()
    frontier.wake_waiters() if hasattr(frontier, "wake_waiters") else None
    for t in threads:
        t.join(5)
    frontier.close()
    uris = max(1, h1 - h0)
    return {
        "threads": args.threads,
        "hosts": args.hosts,
        "delay_ms": args.delay_ms,
        "fetch_ms": args.fetch_ms,
        "seconds": round(t1 - t0, 2),
        "uris": h1 - h0,
        "uris_per_s": round((h1 - h0) / (t1 - t0), 1),
        "waiter_wakeups": w1 - w0,
        "waiter_wakeups_per_uri": round((w1 - w0) / uris, 2),
        "waiter_wakeups_per_s": round((w1 - w0) / (t1 - t0), 1),
        "cpu_ms_per_s": round((c1 - c0) * 1e3 / (t1 - t0), 1),
        "exchange_wakeups_per_uri": round((x1 - x0) / uris, 2),
        "rounds_per_uri": round((r1 - r0) / uris, 3),
        "cpu_us_per_uri": round((c1 - c0) * 1e6 / uris, 1),
        "redis_cpu_us_per_uri": round((rc1 - rc0) * 1e6 / uris, 1),
        "load_before": round(load_before, 2),
        "load_after": round(load_after, 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=300)
    ap.add_argument("--hosts", type=int, default=2000)
    ap.add_argument("--per-host", type=int, default=20)
    ap.add_argument("--delay-ms", type=int, default=5000, help="politeness delay per host")
    ap.add_argument("--fetch-ms", type=int, default=20, help="how long a thread holds a URI")
    ap.add_argument("--seconds", type=float, default=20.0, help="measured time")
    ap.add_argument("--warmup", type=float, default=5.0, help="seconds before measuring")
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="redisherd-") as tmp:
        server = RedisServer(Path(tmp) / "redis").start()
        import redis

        redis.Redis.from_url(server.url).config_set("appendonly", "no")  # no fsync per write
        try:
            out = run(args, server.url, Path(tmp))
        finally:
            server.stop()
    out["label"] = args.label
    print(json.dumps(out))


if __name__ == "__main__":
    main()
