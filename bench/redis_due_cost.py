"""Redis's cost of a worker's read of the due queues (DUE) on one redis-server.

A fresh redis-server holds a frontier of ``--queues`` queues spread over the 16 shards of the
default layout: ``--due`` of them due now, the rest leased and finished with a politeness delay
of a minute (snoozed), plus ``--inactive`` queues never activated. The script then reads the due
queues ``--reads`` times as a worker does (8 per shard, ``--want`` inactive ones named) and
reports Redis's CPU per read (``INFO cpu``) and its commands per read, the scripts' inner calls
included (``INFO commandstats``). Deterministic apart from the CPU figure. ``--compare`` also
reads as on a Cluster (no node-wide bounds and counts: every shard read), in alternating blocks
of 100 reads, so that both figures are taken at the same load of the machine.

Run: ``python bench/redis_due_cost.py [--queues 400] [--due 4] [--reads 2000]``. Needs
redis-server. Compare trees by running it with ``PYTHONPATH`` set to each.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.redis_servers import RedisServer  # noqa: E402

from crawler.frontier.redis import redis_conn  # noqa: E402
from crawler.frontier.redis.redis_leases import CLAIM_INACTIVE, finish_args  # noqa: E402
from crawler.frontier.redis.redis_store import (  # noqa: E402
    RedisQueueStore,
    RedisQueueStoreParams,
)


def fill(st: RedisQueueStore, queues: int, due: int, inactive: int) -> None:
    """``queues`` queues of two URIs each, activated, leased and finished: ``due`` of them due
    now, the others in a minute; then ``inactive`` more never activated."""
    names = [f"h{i}.example" for i in range(queues + inactive)]
    by_shard: dict[int, list[tuple[str, int, bytes]]] = {}
    for n, server in enumerate(names):
        qid = f"{server}\t{server}"
        for k in (0, 1):
            member = (2 * n + k).to_bytes(8, "big") + f"http://{server}/{k}".encode()
            by_shard.setdefault(st.shard_of(server), []).append((qid, 0, member))
    st.schedule_many(by_shard)
    heads = st.leases.candidates(1, inactive=queues).inactive[:queues]
    claims = [(c.shard, c.qid, c.qid.split("\t")[1], CLAIM_INACTIVE) for c in heads]
    _, got, _ = st.leases.exchange([], claims, 0, 0, 0)
    finishes = []
    for i, (claim, lease) in enumerate(zip(claims, got, strict=True)):
        assert lease is not None
        delay = 0 if i < due else 60_000
        finishes.append((*claim[:3], finish_args(lease.member, "succeeded", delay_ms=delay)))
    st.leases.exchange(finishes, [], 0, 0, 0)


def compare(st: RedisQueueStore, client: Any, reads: int, want: int) -> dict[str, float]:
    """Redis CPU µs per read over the bounds and per read of every shard, alternating."""
    keys = [k for s in range(st.shards) for k in st.due_keys(s)]
    args = [8, st.worker, 0, 0, st.precedence_args[2], want, -2, st.lease_ms]
    full = [(st.script("DUE"), keys, args)]
    spent = {"bounded": 0.0, "every_shard": 0.0}
    for _ in range(max(1, reads // 100)):
        for kind in spent:
            before = client.info("cpu")
            for _ in range(100):
                if kind == "bounded":
                    st.leases.candidates(8, inactive=want)
                else:
                    redis_conn.run_calls(st.client, full)
            after = client.info("cpu")
            spent[kind] += sum(after[k] - before[k] for k in ("used_cpu_user", "used_cpu_sys"))
    blocks = max(1, reads // 100) * 100
    return {f"{k}_redis_cpu_us_per_read": round(v * 1e6 / blocks, 1) for k, v in spent.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queues", type=int, default=400)
    parser.add_argument("--due", type=int, default=4)
    parser.add_argument("--inactive", type=int, default=200)
    parser.add_argument("--want", type=int, default=2, help="inactive queues each read names")
    parser.add_argument("--reads", type=int, default=2000)
    parser.add_argument("--compare", action="store_true", help="also read every shard")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="due-cost-") as tmp:
        server = RedisServer(Path(tmp)).start()
        try:
            st = RedisQueueStore(
                RedisQueueStoreParams(url=server.url, namespace="d:", worker_id="w1", shards=16)
            )
            st.open(Path(tmp))
            fill(st, args.queues, args.due, args.inactive)
            st.leases.candidates(8, inactive=args.want)  # first read (and bounds, if kept)
            client = redis.Redis(port=server.port)
            client.config_resetstat()
            before = client.info("cpu")
            for _ in range(args.reads):
                read = st.leases.candidates(8, inactive=args.want)
            after = client.info("cpu")
            stats = client.info("commandstats")
            cpu_s = sum(after[k] - before[k] for k in ("used_cpu_user", "used_cpu_sys"))
            calls = {k.removeprefix("cmdstat_"): v["calls"] for k, v in stats.items()}
            out: dict[str, Any] = {
                "due_found": len(read.queues),
                "active": read.active,
                "redis_cpu_us_per_read": round(cpu_s * 1e6 / args.reads, 1),
                "evalsha_us_per_call": round(stats["cmdstat_evalsha"]["usec_per_call"], 1),
                "commands_per_read": round(
                    sum(v for k, v in calls.items() if k not in ("config|resetstat", "info"))
                    / args.reads,
                    1,
                ),
                "by_command_per_read": {
                    k: round(v / args.reads, 2)
                    for k, v in sorted(calls.items(), key=lambda kv: -kv[1])
                    if k not in ("config|resetstat", "info")
                },
            }
            if args.compare:
                out["compare"] = compare(st, client, args.reads, args.want)
            print(json.dumps(out, indent=1))
            client.close()
            st.close()
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
