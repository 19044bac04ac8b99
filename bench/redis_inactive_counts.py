"""What a worker's status read of the inactive queues per precedence costs, by queue count.

``python bench/redis_inactive_counts.py [--queues 1000,10000,100000] [--calls 20]`` starts a
redis-server on loopback, fills a 16-shard RedisQueueStore's inactive sets with that many
queues (precedence 1, a few at 2 and 3, as a crawl of many hosts has them), and times each way
of counting them per precedence: ``members`` reads every queue's score (ZRANGE WITHSCORES of
every shard, counted in Python: the read before) and ``counted`` is
``RedisQueueStore.inactive_by_precedence`` (INACTIVE_BY_PRECEDENCE counts in Redis). Prints the
client's CPU-ms per call (``time.process_time``) and the redis-server's (its
``used_cpu_sys`` + ``used_cpu_user``), best of three rounds of ``--calls`` calls. Every worker
makes one such read a second (``status.json``). Asserts that both ways agree.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from support.redis_servers import RedisServer  # noqa: E402

from crawler.frontier.policy.eligible_order import (  # noqa: E402
    eligible_score,
    score_precedence,
)
from crawler.frontier.redis.redis_store import (  # noqa: E402
    RedisQueueStore,
    RedisQueueStoreParams,
)

SHARDS = 16


def members(st: RedisQueueStore) -> dict[int, int]:
    """Counts from every queue's score, read whole (the read before)."""
    pipe = st.client.pipeline(transaction=False)
    for shard in range(st.shards):
        pipe.zrange(f"{st.tag(shard)}i", 0, -1, withscores=True)
        pipe.zrange(f"{st.tag(shard)}n", 0, -1, withscores=True)
    counts: Counter[int] = Counter()
    for i, rows in enumerate(pipe.execute()):
        for _, score in rows:
            counts[int(score) if i % 2 == 0 else score_precedence(int(score))] += 1
    return dict(sorted(counts.items()))


def fill(st: RedisQueueStore, queues: int) -> None:
    st.client.delete(*(f"{st.tag(s)}{k}" for s in range(st.shards) for k in "in"))
    now_ms = int(time.time() * 1000)
    pipe = st.client.pipeline(transaction=False)
    for q in range(queues):
        prec = 1 if q % 100 else 2 + q % 2
        pipe.zadd(f"{st.tag(q % SHARDS)}n", {f"h{q}.test\t": eligible_score(prec, now_ms + q)})
        if len(pipe) >= 5000:
            pipe.execute()
    pipe.execute()


def redis_cpu_s(st: RedisQueueStore) -> float:
    info: dict[str, Any] = st.client.info("cpu")
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


def cost(st: RedisQueueStore, how: Any, calls: int) -> tuple[float, float]:
    """(client CPU-ms, server CPU-ms) per call, best of three rounds."""
    best = (float("inf"), float("inf"))
    for _ in range(3):
        server0, client0 = redis_cpu_s(st), time.process_time()
        for _ in range(calls):
            how(st)
        client = (time.process_time() - client0) / calls * 1e3
        server = (redis_cpu_s(st) - server0) / calls * 1e3
        best = (min(best[0], client), min(best[1], server))
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queues", default="1000,10000,100000")
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="redis-inactive-") as tmp:
        server = RedisServer(Path(tmp) / "redis").start()
        st = RedisQueueStore(
            RedisQueueStoreParams(url=server.url, namespace="b:", worker_id="w1", shards=SHARDS)
        )
        st.open(None)  # type: ignore[arg-type]
        try:
            for queues in (int(q) for q in args.queues.split(",")):
                fill(st, queues)
                assert members(st) == st.inactive_by_precedence()
                old = cost(st, members, args.calls)
                new = cost(st, RedisQueueStore.inactive_by_precedence, args.calls)
                rows.append((queues, old, new))
        finally:
            st.close()
            server.stop()
    print("| inactive queues | members: client / redis CPU-ms | counted: client / redis CPU-ms |")
    print("|--:|--:|--:|")
    for queues, old, new in rows:
        print(f"| {queues:,} | {old[0]:.2f} / {old[1]:.2f} | {new[0]:.3f} / {new[1]:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
