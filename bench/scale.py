"""Scale-out benchmark (``make bench-scale``): the Redis frontier's speed, memory and capacity.

1. Pages/s of a real crawl with 1 and 2 worker processes (``crawler run --workers N``) of a
   generated site served by nginx (bench/crawl/gensite.py), politeness off, WARC on, against a
   redis-server with AOF (``appendfsync everysec``): the median of ``--repeat`` runs, with the
   load average before each; Redis CPU per page. Then one more crawl per worker count with
   MONITOR on, counting the commands the workers send (scripts' inner calls excluded) per page,
   by command and script: pipelined calls share a round trip, so round trips are at most this.
2. Redis memory per seen URL (RedisUriUniqFilter), per queued URL and per queue
   (RedisQueueStore), with 10^6 URLs, from ``INFO memory`` deltas.
3. Claim+complete (``next()`` + ``finished()``) throughput of the Redis frontier from one
   process (1, 4 and 16 threads), and the projection for 10 machines x 16 workers.

Run: ``python bench/scale.py [--pages 15000] [--threads 25] [--seen 1000000] [--quick]``.
Needs redis-server
(and nginx for part 1; without it part 1 is skipped).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench" / "crawl"))
sys.path.insert(0, str(ROOT / "tests"))

from support.redis_servers import RedisServer  # noqa: E402

from crawler.curi import CrawlURI  # noqa: E402
from crawler.frontier import HostnameQueueAssignmentPolicy  # noqa: E402
from crawler.frontier.redis import redis_scripts  # noqa: E402
from crawler.frontier.redis.redis_frontier import RedisFrontier  # noqa: E402
from crawler.frontier.redis.redis_store import RedisQueueStore, RedisQueueStoreParams  # noqa: E402
from crawler.frontier.store.queue_store import sort_key  # noqa: E402
from crawler.order.schema import FrontierConfig, PolitenessConfig  # noqa: E402
from crawler.uniq import redis_uniq  # noqa: E402
from crawler.uniq.redis_uniq import RedisUriUniqFilter, RedisUriUniqFilterParams  # noqa: E402

PORT_BASE = 18301
THREADS = [25]
"""Toe threads per worker (``--threads``; default: the default order's ``toe_threads``)."""
PARALLEL_QUEUES = 16
"""Queues per host of the generated site (4 hosts): 64 queues for up to 2 x 16 threads, so each
thread can have a queue of its own (with politeness off a queue is one fetch at a time)."""


def redis_server(tmp: Path) -> RedisServer:
    server = RedisServer(tmp)
    server.start()
    client = redis.Redis(port=server.port)
    client.config_set("appendfsync", "everysec")  # the recommended production setting
    client.close()
    return server


def used_memory(client: Any) -> int:
    return int(client.info("memory")["used_memory"])


# ------------------------------------------------------------------------------ 1. crawl
def crawl_bench(
    pages: int, tmp: Path, repeat: int, count_calls: bool = True
) -> tuple[list[dict[str, Any]], list[Any]]:
    """Median rows (by pages/s) of ``repeat`` crawls per worker count, and the MONITOR counts."""
    if shutil.which("nginx") is None and not Path("/usr/sbin/nginx").exists():
        print("nginx not found: skipping the crawl benchmark", file=sys.stderr)
        return [], []
    from gensite import generate
    from nginx_server import NginxServer

    hosts = 4
    site = tmp / "site"
    generate(site, pages, hosts, PORT_BASE)
    sites = {PORT_BASE + h: site / f"h{h:02d}" for h in range(hosts)}
    nginx = NginxServer(tmp / "nginx", sites, workers=1)
    nginx.start()
    rows: list[dict[str, Any]] = []
    calls: list[Any] = []
    n = 0
    try:
        for workers in (1, 2):
            runs = []
            for _ in range(repeat):
                n += 1
                server = redis_server(tmp / f"redis{n}")
                try:
                    runs.append(run_crawl(workers, server, nginx, hosts, tmp / f"run{n}"))
                finally:
                    server.stop()
                print(f"  {workers} worker(s): {runs[-1]['pages_per_s']:.0f} pages/s "
                      f"(load before {runs[-1]['load_before']:.2f})", file=sys.stderr)  # fmt: skip
            runs.sort(key=lambda r: r["pages_per_s"])
            row = dict(runs[len(runs) // 2])
            row["all_pages_per_s"] = [r["pages_per_s"] for r in runs]
            row["loads"] = [r["load_before"] for r in runs]
            rows.append(row)
        for workers in (1, 2) if count_calls else ():
            n += 1
            server = redis_server(tmp / f"redis{n}")
            try:
                counter = CommandCounter(server.port)
                counter.start()
                row = run_crawl(workers, server, nginx, hosts, tmp / f"run{n}")
                counter.stop()
                calls.append((workers, row["pages"], counter.counts))
            finally:
                server.stop()
    finally:
        nginx.stop()
    return rows, calls


def script_names() -> dict[bytes, str]:
    """SHA1 -> name of the frontier's and the uniq filter's scripts (as EVALSHA names them)."""
    named = {n: getattr(redis_scripts, n) for n in dir(redis_scripts) if n.isupper()}
    named |= {"UNIQ_ADD": redis_uniq._ADD_SCRIPT, "UNIQ_CONTAINS": redis_uniq._CONTAINS_SCRIPT}
    return {
        hashlib.sha1(text.encode()).hexdigest().encode(): name
        for name, text in named.items()
        if isinstance(text, str)
    }


DIGEST_FLUSH = "(digest HSETNX pipelines without a lookup)"
"""A pseudo-command :class:`CommandCounter` counts: the digest index's flushes (round trips)."""
DIGEST_RIDE = "(digest HSETNX riding with the frontier)"
"""A pseudo-command: digest ``HSETNX`` runs ended by the same client's already-seen check or
SCHEDULE (they rode in the frontier's round trip; no round trip of their own)."""
_RIDDEN = ("UNIQ_CONTAINS", "CONTAINS_SCRIPT", "SCHEDULE")
"""The scripts a ride goes with, as either counter names them (``redis_uniq.CONTAINS_SCRIPT``
in bench/workers_scale.py)."""


class CommandCounter(threading.Thread):
    """Counts the commands clients send a redis-server (MONITOR), by command (EVALSHA by script
    name); commands run inside scripts are not counted."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.sendall(b"MONITOR\r\n")
        self.names = script_names()
        self.counts: dict[str, int] = {}

    def run(self) -> None:
        counts, names = self.counts, self.names
        run_client = b""  # the client whose digest HSETNXes have not met an HGET yet
        with self.sock.makefile("rb") as stream:
            for line in stream:
                if b" lua] " in line or not line.startswith(b"+"):
                    continue
                parts = line.split(b'"', 4)
                if len(parts) < 3:
                    continue
                cmd = parts[1].decode("ascii", "replace").upper()
                if cmd == "EVALSHA" and len(parts) > 3:
                    cmd = names.get(parts[3][:40], "EVALSHA ?")
                counts[cmd] = counts.get(cmd, 0) + 1
                # Digest-index sends without a lookup: a client's run of HSETNX into a digest
                # bucket ("dg:") not ended by its HGET (a pipeline split by another client's
                # commands counts twice: an upper bound).
                client = parts[0].partition(b"[")[2]
                digest = len(parts) > 3 and b"dg:" in parts[3]
                if run_client and (client != run_client or not digest or cmd != "HSETNX"):
                    if client == run_client and cmd.rpartition(".")[2] in _RIDDEN:
                        counts[DIGEST_RIDE] = counts.get(DIGEST_RIDE, 0) + 1
                    elif not (client == run_client and digest and cmd == "HGET"):
                        counts[DIGEST_FLUSH] = counts.get(DIGEST_FLUSH, 0) + 1
                    run_client = b""
                if digest and cmd == "HSETNX" and not run_client:
                    run_client = client

    def stop(self) -> None:
        time.sleep(0.2)  # the last replies of the monitor stream
        self.sock.shutdown(socket.SHUT_RDWR)
        self.join(5)
        self.sock.close()


def run_crawl(
    workers: int, server: RedisServer, nginx: Any, hosts: int, run_dir: Path
) -> dict[str, Any]:
    seeds = [f"http://127.0.0.1:{PORT_BASE + h}/" for h in range(hosts)]
    store = {
        "class": "crawler.frontier.RedisQueueStore",
        "params": {"url": server.url},
    }
    sets = [
        f"seeds.urls={json.dumps(seeds)}",
        f"frontier.store={json.dumps(store)}",
        "frontier.politeness.host_max_connections=0",
        f"frontier.queue_assignment.params.parallel_queues={PARALLEL_QUEUES}",
        f"toe_threads={THREADS[0]}",
        f"name=scale-{workers}",
    ]
    client = redis.Redis(port=server.port)
    load_before = os.getloadavg()[0]
    nginx_s0 = nginx_cpu_s(nginx)
    cpu0 = client.info("cpu")
    stats0 = client.info("commandstats")
    calls0 = sum(v["calls"] for v in stats0.values())
    offset = nginx.log_offset()
    args = [sys.executable, "-m", "crawler", "run", str(ROOT / "bench" / "crawl" / "order.yaml")]
    args += ["--workers", str(workers), "--run-dir", str(run_dir)]
    # Numbered pages (/d000/p1.html) share one URL template per host: no trap budget here.
    args += ["--set", "scope.8.params.max_series_length=0"]
    for item in sets:
        args += ["--set", item]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    worker_cpu_s = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    nginx_s = nginx_cpu_s(nginx) - nginx_s0
    entries = nginx.read_log(offset)
    cpu1 = client.info("cpu")
    stats1 = client.info("commandstats")
    calls1 = sum(v["calls"] for v in stats1.values())
    usec = {
        name.removeprefix("cmdstat_"): v["usec"] - stats0.get(name, {}).get("usec", 0)
        for name, v in stats1.items()
    }
    client.close()
    fetched = [e for e in entries if e.status == 200]
    span_s = max(e.time_s for e in entries) - min(e.time_s for e in entries)
    redis_cpu_s = sum(cpu1[k] - cpu0[k] for k in ("used_cpu_sys", "used_cpu_user"))
    return {
        "workers": workers,
        "pages": len(fetched),
        "seconds": span_s,
        "pages_per_s": len(fetched) / span_s if span_s else 0.0,
        "redis_cpu_ms_per_page": 1000 * redis_cpu_s / max(1, len(fetched)),
        "crawler_cpu_ms_per_page": 1000 * worker_cpu_s / max(1, len(fetched)),
        "nginx_cpu_ms_per_page": 1000 * nginx_s / max(1, len(fetched)),
        "redis_calls_per_page": (calls1 - calls0) / max(1, len(fetched)),
        "load_before": load_before,
        "redis_usec_per_page": {k: v / max(1, len(fetched)) for k, v in usec.items()},
    }


def nginx_cpu_s(nginx: Any) -> float:
    """CPU seconds (user + system) used so far by nginx's worker processes (Linux /proc)."""
    master = nginx.proc.pid if nginx.proc is not None else None
    total = 0
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == master:  # ppid; utime and stime are fields 14 and 15 of stat
            total += int(fields[11]) + int(fields[12])
    return total / tick


# ------------------------------------------------------------------------------ 2. memory
def memory_bench(n: int, tmp: Path) -> dict[str, float]:
    server = redis_server(tmp / "redis-mem")
    client = redis.Redis(port=server.port)
    try:
        base = used_memory(client)
        uniq = RedisUriUniqFilter(
            RedisUriUniqFilterParams(url=server.url, namespace="m1:", cache_size=0)
        )
        uniq.open(tmp)
        batch = 2000
        for start in range(0, n, batch):
            uniq.add_many(url(i) for i in range(start, min(n, start + batch)))
        uniq.close()
        per_seen = (used_memory(client) - base) / n

        store = RedisQueueStore(RedisQueueStoreParams(url=server.url, namespace="m2:"))
        store.open(tmp)
        base = used_memory(client)
        queues = 1000
        fill(store, n, queues)
        per_queued = (used_memory(client) - base) / n

        store3 = RedisQueueStore(RedisQueueStoreParams(url=server.url, namespace="m3:"))
        store3.open(tmp)
        base = used_memory(client)
        many = max(1000, n // 10)
        fill(store3, many, many)
        per_queue = (used_memory(client) - base) / many - per_queued
        store.close()
        store3.close()
    finally:
        client.close()
        server.stop()
    return {"seen": per_seen, "queued": per_queued, "queue": per_queue}


def url(i: int) -> str:
    return f"http://www{i % 5000}.example{i % 7}.com/section{i % 13}/page-{i}.html?q={i % 97}"


def fill(store: RedisQueueStore, n: int, queues: int) -> None:
    """``n`` realistic queued URIs (a link two hops from a seed) over ``queues`` hosts."""
    by_shard: dict[int, list[tuple[str, int, bytes]]] = {}
    for i in range(n):
        host = f"www{i % queues}.example.com"
        curi = CrawlURI(
            f"http://{host}/section{i % 13}/page-{i}.html",
            via=f"http://{host}/section{i % 13}/",
            hop_path="LL",
        )
        curi.queue_key = host
        curi.ordinal = i + 1
        skey = sort_key(curi.directive, 1, curi.ordinal)
        server = f"{host}:80"
        entries = by_shard.setdefault(store.shard_of(server), [])
        entries.append((f"{host}\t{server}", skey >> 48, skey.to_bytes(8, "big") + curi.to_bytes()))
        if len(entries) >= 500:
            store.schedule(store.shard_of(server), entries)
            by_shard[store.shard_of(server)] = []
    for shard, entries in by_shard.items():
        if entries:
            store.schedule(shard, entries)


# ------------------------------------------------------------------------------ 3. claims
def claim_bench(n: int, tmp: Path) -> list[dict[str, Any]]:
    rows = []
    for threads in (1, 4, 16):
        server = redis_server(tmp / f"redis-claim{threads}")
        try:
            store = RedisQueueStore(RedisQueueStoreParams(url=server.url, namespace="b1:"))
            store.open(tmp)
            fill(store, n, 2000)
            store.close()
            pol = PolitenessConfig(
                delay_factor=0, min_delay_ms=0, max_delay_ms=0, host_max_connections=0
            )
            frontier = RedisFrontier(
                RedisQueueStore(RedisQueueStoreParams(url=server.url, namespace="b1:")),
                HostnameQueueAssignmentPolicy(),
                RedisUriUniqFilter(RedisUriUniqFilterParams(url=server.url, namespace="b1:")),
                FrontierConfig(politeness=pol),
            )
            frontier.open(tmp)
            done = [0]

            def work(frontier: RedisFrontier = frontier, done: list[int] = done) -> None:
                while (curi := frontier.next(0.2)) is not None:
                    curi.status = 200
                    frontier.finished(curi)
                    done[0] += 1  # a racy count is close enough for a rate

            client = redis.Redis(port=server.port)
            rcpu0 = client.info("cpu")
            cpu0 = time.process_time()
            started = time.perf_counter()
            pool = [threading.Thread(target=work) for _ in range(threads)]
            for t in pool:
                t.start()
            for t in pool:
                t.join()
            frontier.flush()
            elapsed = time.perf_counter() - started
            cpu_s = time.process_time() - cpu0
            rcpu1 = client.info("cpu")
            client.close()
            redis_s = sum(rcpu1[k] - rcpu0[k] for k in ("used_cpu_sys", "used_cpu_user"))
            frontier.close()
            n_done = max(1, done[0])
            rows.append(
                {
                    "threads": threads,
                    "uris": done[0],
                    "per_s": done[0] / elapsed,
                    "cpu_us": 1e6 * cpu_s / n_done,
                    "redis_us": 1e6 * redis_s / n_done,
                    "rounds": frontier._exchange.rounds,
                    "load": os.getloadavg()[0],
                }
            )
        finally:
            server.stop()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=15000)
    parser.add_argument("--seen", type=int, default=1_000_000)
    parser.add_argument("--claims", type=int, default=40_000)
    parser.add_argument("--repeat", type=int, default=3, help="crawls per worker count (median)")
    parser.add_argument(
        "--threads", type=int, default=25, help="toe threads per worker (default order: 25)"
    )
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument(
        "--no-monitor", action="store_true", help="skip the crawls that count commands"
    )
    parser.add_argument("--only", choices=("crawl", "memory", "claims"), help="run one part")
    args = parser.parse_args()
    if args.quick:
        args.pages, args.seen, args.claims, args.repeat = 2000, 100_000, 5000, 1
    THREADS[0] = args.threads
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as name:
        tmp = Path(name)
        part = args.only
        crawl, calls = (
            crawl_bench(args.pages, tmp, args.repeat, not args.no_monitor)
            if part in (None, "crawl")
            else ([], [])
        )
        memory = memory_bench(args.seen, tmp) if part in (None, "memory") else {}
        claims = claim_bench(args.claims, tmp) if part in (None, "claims") else []
    print(f"\n## Crawl: pages/s by worker processes (politeness off, WARC on; median of "
          f"{args.repeat})")  # fmt: skip
    print(f"{'workers':>7} {'pages':>7} {'s':>7} {'pages/s':>8} {'crawler CPU ms/page':>20} "
          f"{'Redis CPU ms/page':>18} {'nginx CPU ms/page':>18} {'all runs pages/s':>22} "
          f"{'load before each':>18}")  # fmt: skip
    for r in crawl:
        runs = "/".join(f"{v:.0f}" for v in r["all_pages_per_s"])
        loads = "/".join(f"{v:.1f}" for v in r["loads"])
        print(
            f"{r['workers']:>7} {r['pages']:>7} {r['seconds']:>7.1f} {r['pages_per_s']:>8.0f} "
            f"{r['crawler_cpu_ms_per_page']:>20.2f} {r['redis_cpu_ms_per_page']:>18.3f} "
            f"{r['nginx_cpu_ms_per_page']:>18.3f} {runs:>22} {loads:>18}"
        )
    print(f"(load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    if len(crawl) == 2 and crawl[0]["pages_per_s"]:
        print(f"speed-up 2 workers / 1: {crawl[1]['pages_per_s'] / crawl[0]['pages_per_s']:.2f}x")
    for r in crawl:
        top = sorted(r["redis_usec_per_page"].items(), key=lambda kv: -kv[1])[:6]
        print(f"Redis command time per page, {r['workers']} worker(s), us: "
              + ", ".join(f"{k} {v:.0f}" for k, v in top))  # fmt: skip
    for workers, pages, counts in calls:
        total = sum(v for k, v in counts.items() if k != DIGEST_FLUSH)
        top = sorted(counts.items(), key=lambda kv: -kv[1])[:8]
        detail = ", ".join(f"{k} {v / max(1, pages):.2f}" for k, v in top)
        print(f"Redis commands sent per page, {workers} worker(s): {total / max(1, pages):.2f} "
              f"({detail})")  # fmt: skip
    if memory:
        print(f"\n## Redis memory ({args.seen:,} URLs)")
        print(f"per seen URL:   {memory['seen']:6.1f} bytes (goal <= 16)")
        print(f"per queued URL: {memory['queued']:6.1f} bytes")
        print(f"per queue:      {memory['queue']:6.1f} bytes")
    print("\n## Claim + complete from one process")
    for r in claims:
        print(
            f"{r['threads']:>2} threads: {r['per_s']:8.0f} URIs/s ({r['uris']} URIs; "
            f"{r['uris'] / max(1, r['rounds']):.1f} per round trip; CPU per URI: crawler "
            f"{r['cpu_us']:.0f} us, Redis {r['redis_us']:.0f} us; load {r['load']:.1f})"
        )
    if crawl:
        per_page_ms = crawl[-1]["redis_cpu_ms_per_page"] or 1e-9
        cap = 1000 / per_page_ms if per_page_ms else float("inf")
        want = 10 * 16 * crawl[0]["pages_per_s"]
        print(
            f"\n## Projection: 10 machines x 16 workers at {crawl[0]['pages_per_s']:.0f} pages/s "
            f"each want {want:,.0f} pages/s; one Redis main thread at "
            f"{per_page_ms:.3f} CPU-ms/page carries ~{cap:,.0f} pages/s, so the crawl gets "
            f"{min(want, cap):,.0f} pages/s (bottleneck: "
            f"{'the Redis main thread: use a Cluster of >= ' if cap < want else 'the workers'}"
            f"{int(want / cap) + 1 if cap < want else ''}{' masters' if cap < want else ''})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
