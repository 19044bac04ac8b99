"""Digest index benchmark (``make bench-digest-index``): what the URL-agnostic dedup index costs.

1. Size per digest: ``--digests`` entries shaped like a crawl's (a ~70-character URI, WARC-Date,
   ``urn:uuid`` record id, a WARC file name shared by runs of records, an offset) added to
   a LevelDB index (bytes on disk after a full compaction) and to a Redis index (``INFO memory``
   ``used_memory`` delta, on a fresh redis-server).
2. Cost per fetch, one thread, ``--lookups`` fetches each: what the WARC writer does for a new
   payload (a lookup that misses, then the add) and for a duplicate (a lookup that hits), for a
   single-process run (its own LevelDB in front of the job's LevelDB holding the ``--digests``)
   and for a ``--workers`` crawl (Redis: one round trip a lookup, one script call an add): wall
   time, and CPU time (this process's plus the redis-server's), which a busy machine inflates
   far less; after a warm-up of as many other lookups (as a long crawl is warm).

Run: ``python bench/digest_index.py [--digests 1000000] [--lookups 20000]``. Needs redis-server.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from support.redis_servers import RedisServer  # noqa: E402

from crawler.continuity import DigestEntry, LevelDBDigestIndex  # noqa: E402
from crawler.continuity.digest_index import DigestIndex  # noqa: E402
from crawler.continuity.redis_digest_index import RedisDigestIndex  # noqa: E402
from crawler.continuity.run_digest_index import open_run_digest_index  # noqa: E402


def digest(i: int) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(b"payload %d" % i).digest()).decode()


def entry(i: int) -> DigestEntry:
    host = f"www.site{i % 5000}.example.org"
    uri = f"https://{host}/section/{i % 97}/article-{i}.html"
    serial = i // 2000  # ~2,000 records per WARC file
    return DigestEntry(
        uri,
        f"2026-11-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{(i * 7) % 60:02d}Z",
        f"urn:uuid:{hashlib.md5(b'%d' % i).hexdigest()[:8]}-0000-4000-8000-{i:012x}",
        f"WEB-20261127093700123-{serial:05d}-4242~crawler-host.warc.gz",
        (i % 2000) * 9000,
    )


def pairs(n: int, start: int = 0) -> Iterator[tuple[str, DigestEntry]]:
    for i in range(start, start + n):
        yield digest(i), entry(i)


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def leveldb_size(n: int, tmp: Path) -> float:
    index = LevelDBDigestIndex(tmp / "job" / "digest-index")
    for d, e in pairs(n):
        index.add(d, e)
    index.compact()  # the bench measures settled files
    index.close()
    return dir_bytes(tmp / "job" / "digest-index") / n


def redis_size(n: int, server: RedisServer) -> float:
    client = redis.Redis(port=server.port)
    base = int(client.info("memory")["used_memory"])
    index = RedisDigestIndex.connect(server.url, "m1:")
    index.add_many(pairs(n))
    index.close()
    used = int(client.info("memory")["used_memory"]) - base
    client.close()
    return used / n


def server_cpu_s(server: RedisServer | None) -> float:
    """CPU seconds the redis-server has used (0 without one)."""
    if server is None:
        return 0.0
    client = redis.Redis(port=server.port)
    info = client.info("cpu")
    client.close()
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def per_fetch_us(
    index: DigestIndex, lookups: int, n: int, server: RedisServer | None = None
) -> dict[str, float]:
    """Per new payload (lookup miss + add) and per duplicate (lookup hit): wall µs and CPU µs
    (this process's, plus the redis-server's); CPU does not grow with a busy machine's load."""
    out: dict[str, float] = {}
    step = max(1, n // lookups)

    def new() -> None:
        for d, e in pairs(lookups, start=n + 10_000_000):
            if index.lookup(d) is None:
                index.add(d, e)

    def dup() -> None:
        for i in range(0, step * lookups, step):
            if index.lookup(digest(i % n)) is None:
                raise AssertionError(f"digest {i} not found")

    # Warm up as a long crawl is: the tables' index and filter blocks read once.
    for d, _ in pairs(lookups, start=n + 20_000_000):
        index.lookup(d)
    for i in range(step // 2, step * lookups, step):
        index.lookup(digest(i % n))
    for name, run in (("new", new), ("dup", dup)):
        wall, cpu, srv = time.perf_counter(), time.process_time(), server_cpu_s(server)
        run()
        out[name] = (time.perf_counter() - wall) / lookups * 1e6
        cpu_s = time.process_time() - cpu + server_cpu_s(server) - srv
        out[name + "_cpu"] = cpu_s / lookups * 1e6
    return out


def report(what: str, f: dict[str, float]) -> None:
    print(f"{what}: new payload {f['new']:.1f} µs ({f['new_cpu']:.1f} µs CPU), duplicate "
          f"{f['dup']:.1f} µs ({f['dup_cpu']:.1f} µs CPU) per fetch (load {load()})")  # fmt: skip


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--digests", type=float, default=1e6)
    ap.add_argument("--lookups", type=int, default=20_000)
    args = ap.parse_args()
    n = int(args.digests)
    with tempfile.TemporaryDirectory(prefix="bench-digest-") as raw:
        tmp = Path(raw)
        t0 = time.perf_counter()
        per_leveldb = leveldb_size(n, tmp)
        print(f"LevelDB: {per_leveldb:.1f} bytes per digest on disk ({n:,} digests, "
              f"{time.perf_counter() - t0:.0f} s to add; load {load()})")  # fmt: skip
        server = RedisServer(tmp / "redis").start()
        try:
            client = redis.Redis(port=server.port)
            client.config_set("appendfsync", "everysec")  # the recommended production setting
            client.close()
            per_redis = redis_size(n, server)
            print(f"Redis:   {per_redis:.1f} bytes per digest of used_memory ({n:,} digests; "
                  f"load {load()})")  # fmt: skip
            run = open_run_digest_index(tmp / "job" / "runs" / "r1" / "state",
                                        job_index=tmp / "job" / "digest-index",
                                        runs_dir=tmp / "job" / "runs")  # fmt: skip
            try:
                figures = per_fetch_us(run, args.lookups, n)
                report("single process (run's LevelDB + the job's)", figures)
            finally:
                run.close()
            shared = RedisDigestIndex.connect(server.url, "m1:")
            try:
                figures = per_fetch_us(shared, args.lookups, n, server)
                report("--workers (Redis on loopback)", figures)
            finally:
                shared.close()
            version = subprocess.run(
                [server_binary(), "--version"], capture_output=True, text=True, check=False
            ).stdout.split()[2:3]
            print(f"redis-server {' '.join(version)}")
        finally:
            server.stop()


def server_binary() -> str:
    from support.redis_servers import REDIS_SERVER

    return REDIS_SERVER or "redis-server"


if __name__ == "__main__":
    main()
