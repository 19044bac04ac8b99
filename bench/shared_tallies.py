"""Shared tallies benchmark (``make bench-shared-tallies``): what crawl-wide quotas, trap budgets
and form logins cost a URI when a ``--workers`` crawl keeps them in Redis instead of in each
worker's memory.

Each row runs one code path ``--uris`` times in one thread, as a toe thread runs it for a URI:

* *quota*: the QuotaEnforcer's check before the fetch (``host_max_urls`` set, 500 hosts, never
  reached) and the statistics' count of the success at its final disposition;
* *no quota*: the same with every quota at 0 (the default): the processor does nothing;
* *trap budget*: the scope's TrapBudgetDecideRule asked about a candidate of a two-number series
  past its free steps (the costliest case: its members are counted), 500 series;
* *form login*: FetchHTTP's login gate for a URI of a host whose login is done.

Backends: *memory* (a crawl of one process, and what each worker did before the tallies were
shared) and *redis* (a fresh redis-server on loopback). Columns: Redis round trips per URI
(counted by the store), CPU µs per URI of this process and of the redis-server (``INFO cpu``),
wall µs per URI. Run: ``python bench/shared_tallies.py [--uris 20000]``; note ``uptime`` beside.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "redis"))

from processor_context import make_context  # noqa: E402
from redis_servers import RedisServer  # noqa: E402

from crawler.curi import VIA_SERIES_ID_KEY, VIA_SERIES_RUN_KEY, CrawlURI  # noqa: E402
from crawler.decide.trap_budget import TrapBudgetDecideRule, TrapBudgetParams  # noqa: E402
from crawler.stats import CrawlStats  # noqa: E402
from crawler.tally import TallyStore  # noqa: E402
from crawler.tally.redis_tally_store import RedisTallyStore  # noqa: E402
from processors.cookies.cookie_store import CookieStore  # noqa: E402
from processors.login import FormCredential, FormLogin  # noqa: E402
from processors.prefetch import QuotaEnforcer, QuotaEnforcerParams  # noqa: E402

HOSTS = 500


class _Quiet:
    def info(self, *args: Any, **kw: Any) -> None: ...
    def warning(self, *args: Any, **kw: Any) -> None: ...


def quota_path(tallies: TallyStore | None, n: int, quota: int) -> Callable[[int], None]:
    stats = CrawlStats()
    proc = QuotaEnforcer("quota_enforcer", QuotaEnforcerParams(host_max_urls=quota))
    tmp = Path(tempfile.mkdtemp(prefix="bench-tallies-"))
    proc.start(dataclasses.replace(make_context(tmp, stats=stats), tallies=tallies))
    curis = [
        CrawlURI(f"http://h{i % HOSTS}.example.org/page/{i}", hop_path="L", content_size=15_000)
        for i in range(n)
    ]

    def one(i: int) -> None:
        curi = curis[i]
        proc.process(curi)
        curi.status = 200
        stats.record_final(curi)

    return one


def trap_path(tallies: TallyStore | None, n: int) -> Callable[[int], None]:
    rule = TrapBudgetDecideRule(TrapBudgetParams(max_series_length=0, max_series_uris=60))
    if tallies is not None:
        rule.share(tallies, "trap0:")
    curis = []
    for i in range(n):
        host = f"h{i % HOSTS}.example.org"
        curi = CrawlURI(
            f"http://{host}/cal/{2000 + i // 12 % 40}/{i % 12 + 1}",
            via=f"http://{host}/cal/1999/1",
            hop_path="LLLLL",
        )
        curi.data[VIA_SERIES_RUN_KEY] = 5
        curi.data[VIA_SERIES_ID_KEY] = i % HOSTS + 1
        curis.append(curi)

    def one(i: int) -> None:
        rule.decide(curis[i])

    return one


def login_path(tallies: TallyStore | None, n: int) -> Callable[[int], None]:
    cred = FormCredential(
        domain="h1.example.org", login_uri="http://h1.example.org/login", fields={"u": "x"}
    )
    login = FormLogin([cred], _Quiet())
    if tallies is not None:
        login.share(tallies, CookieStore())
    login._record(cred, "ok", "")  # the login is done (by this worker or another)
    curis = [CrawlURI(f"http://h1.example.org/p/{i}") for i in range(n)]

    def one(i: int) -> None:
        login.gate(curis[i], 0.0)

    return one


def redis_cpu_s(client: Any) -> float:
    info = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def measure(
    name: str, backend: str, one: Callable[[int], None], n: int, store: Any, client: Any
) -> list[str]:
    trips0 = store.round_trips if store is not None else 0
    server0 = redis_cpu_s(client) if client is not None else 0.0
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for i in range(n):
        one(i)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    server = (redis_cpu_s(client) - server0) if client is not None else 0.0
    trips = ((store.round_trips - trips0) / n) if store is not None else 0.0
    return [
        name,
        backend,
        f"{trips:.2f}",
        f"{cpu / n * 1e6:.0f}",
        f"{server / n * 1e6:.0f}" if client is not None else "-",
        f"{wall / n * 1e6:.0f}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uris", type=int, default=20_000)
    n = parser.parse_args().uris
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp) / "redis").start()
        client = redis.Redis.from_url(server.url)
        try:
            for backend in ("memory", "redis"):
                store = (
                    RedisTallyStore.connect(server.url, "bench:") if backend == "redis" else None
                )
                cases = [
                    ("quota: check + count", quota_path(store, n, 10 * n)),
                    ("no quota", quota_path(store, n, 0)),
                    ("trap budget (counted)", trap_path(store, n)),
                    ("form login (done)", login_path(store, n)),
                ]
                for name, one in cases:
                    one(0)  # warm-up: imports, caches
                    rows.append(measure(name, backend, one, n, store, client if store else None))
                if store is not None:
                    store.close()
        finally:
            client.close()
            server.stop()
    head = ["path", "backend", "round trips/URI", "CPU µs/URI", "redis CPU µs/URI", "wall µs/URI"]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    for row in [head, ["-" * w for w in widths], *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))


if __name__ == "__main__":
    main()
