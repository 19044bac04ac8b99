"""Client CPU per Redis call of the crawler's hot paths (CPU-µs, not wall time: a figure that
does not move much with the machine's load).

``python bench/redis_call_cost.py [--calls 20000]`` starts a redis-server on loopback and, from
one thread, times (``time.process_time``) each way a worker talks to Redis per fetch: a plain
redis-py ``HGET``, the same through ``redis_conn.send_commands`` (the raw write), a script call
through ``redis_conn.run_calls`` and ``redis_conn.is_cluster``. The server's own CPU is not
counted.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from support.redis_servers import RedisServer  # noqa: E402

from crawler.frontier.redis import redis_conn  # noqa: E402


def cpu_us(call: Callable[[], object], n: int) -> float:
    """CPU-µs per call of ``call``, best of three runs of ``n`` calls."""
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for _ in range(n):
            call()
        best = min(best, (time.process_time() - start) / n * 1e6)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    n = args.calls
    with tempfile.TemporaryDirectory(prefix="redis-call-cost-") as tmp:
        server = RedisServer(Path(tmp) / "redis").start()
        try:
            client = redis_conn.connect(server.url)
            client.hset("h", "f", b"x" * 100)
            script = client.register_script("return redis.call('HGET', KEYS[1], ARGV[1])")
            figures = {
                "is_cluster": cpu_us(lambda: redis_conn.is_cluster(client), n * 10),
                "redis-py hget": cpu_us(lambda: client.hget("h", "f"), n),
                "send_commands HGET": cpu_us(
                    lambda: redis_conn.send_commands(client, [("HGET", "h", "f")]), n
                ),
                "run_calls EVALSHA x1": cpu_us(
                    lambda: redis_conn.run_calls(client, [(script, ["h"], ["f"])]), n
                ),
            }
            client.close()
        finally:
            server.stop()
    for name, us in figures.items():
        print(f"{name:24} {us:8.2f} CPU-µs/call")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
