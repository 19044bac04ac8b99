"""Outlink scheduling: CPU per outlink of a page's post chain, through the real crawl's parts.

Builds the crawl of ``bench/web/order.yaml`` (the default order's scope: SURT prefixes of the
seeds, hops, transclusion, path rules, the trap budget; the LevelDB frontier with its uniq
filter and write-behind store) in a scratch run directory with a CrawlController, without
starting its threads, and hands the ``candidates`` processor pages shaped like the synthetic
web's (:mod:`bench.web.gen_web`: 40-100 links, ~20% to other hosts, 2% 404s, 1% 500s, 2% 301s,
1% under ``/private/``, 3-8 images and the style sheet as embeds). Every outlink goes the whole
way: normalize, the scope's rules, ``schedule_many`` (block rules, canonical key, the seen
filter, queue key, the queue store's batch and its sync), as in a crawl.

Three passes over the same pages: ``new`` (first visits: most links are new to the frontier),
``seen`` (the pages again: every link already seen) and ``seen-again`` (a third time, as a
site's navigation links are on every page). Reported: CPU-µs per outlink
(``time.thread_time``, the best of ``--repeat`` runs per pass on a fresh run directory) and,
under callgrind, instruction counts by difference of two sizes. ``--redis URL`` runs the same
pages as a worker of a distributed crawl (the Redis frontier and uniq filter, a fresh namespace
per run) and adds the redis-server's CPU per outlink of the ``new`` pass (``INFO cpu``).
``--cache-size N`` sets the LevelDB uniq filter's cache of recent keys: below a pass's links,
the ``seen`` pass is a page of a crawl many times larger than that cache (its links seen long
ago)::

    .venv/bin/python bench/outlinks.py [--pages 400] [--hosts 2000] [--repeat 3]
    valgrind --tool=callgrind --callgrind-out-file=/tmp/o100.out \
        .venv/bin/python bench/outlinks.py --pages 100 --repeat 1
    valgrind ... --pages 400 ...   # (Ir(400) - Ir(100)) / (outlinks(400) - outlinks(100))
    .venv/bin/python bench/outlinks.py --redis redis://127.0.0.1:6379/0
    .venv/bin/python bench/outlinks.py --cache-size 1000

One process, one thread: the figures are the processor's own CPU, not contention.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from crawler import CrawlURI, Hop, Link
from crawler.control.controller import CrawlController
from crawler.distributed.overrides import worker_overrides
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parent.parent
ORDER = ROOT / "bench" / "web" / "order.yaml"
PORT = 8443
PAGES_PER_HOST = 2000


def host(i: int) -> str:
    return f"https://h{i:05d}.web.test:{PORT}"


def page_links(rng: random.Random, origin: str, n: int, hosts: int) -> list[Link]:
    """The outlinks of page ``n`` of ``origin``, as the HTML extractor gives them (absolute)."""
    links: list[Link] = []
    for _ in range(rng.randint(40, 100)):
        r = rng.random()
        m = rng.randrange(PAGES_PER_HOST)
        path = "/" if m == 0 else f"/p{m}.html"
        if r < 0.20:
            uri = host(rng.randrange(hosts)) + path
        elif r < 0.22:
            uri = f"{origin}/gone/g{rng.randrange(500)}.html"
        elif r < 0.23:
            uri = f"{origin}/err/e{rng.randrange(50)}"
        elif r < 0.25:
            uri = f"{origin}/old/p{max(1, m)}.html"
        elif r < 0.26:
            uri = f"{origin}/private/q{rng.randrange(100)}.html"
        else:
            uri = origin + path
        links.append(Link(uri, Hop.LINK, "a/@href"))
    links.append(Link(f"{origin}/p{n + 1}.html", Hop.LINK, "a/@href"))
    links.append(Link(f"{origin}/css/site.css", Hop.EMBED, "link/@href"))
    for i in sorted({rng.randrange(20) for _ in range(rng.randint(3, 8))}):
        links.append(Link(f"{origin}/img/i{i}.png", Hop.EMBED, "img/@src"))
    return links


def pages(count: int, hosts: int) -> list[tuple[str, list[Link]]]:
    """``count`` pages spread over ``hosts`` hosts (seeded: the same pages every run)."""
    rng = random.Random(28)
    out: list[tuple[str, list[Link]]] = []
    for k in range(count):
        origin = host(k % hosts)
        n = 1 + k // hosts
        out.append((f"{origin}/p{n}.html", page_links(rng, origin, n, hosts)))
    return out


def controller(
    run_dir: Path, hosts: int, redis_url: str = "", cache_size: int | None = None
) -> CrawlController:
    job = run_dir.parent
    (job / "seeds.txt").write_text("".join(f"{host(i)}/\n" for i in range(hosts)))
    shutil.copy(ORDER, job / "order.yaml")
    sets = ["limits.max_time_s=0", "scope.8.params.max_uris_per_template=0"]
    if cache_size is not None:  # the uniq filter's RecentKeys, per generation
        sets.append(f"frontier.uniq_filter.params.cache_size={cache_size}")
    if redis_url:  # a worker of a distributed crawl, alone in its namespace
        store = {"class": "crawler.frontier.RedisQueueStore", "params": {"url": redis_url}}
        sets.append(f"frontier.store={json.dumps(store)}")
        base = load_order(job / "order.yaml", sets)
        sets += worker_overrides(base, redis_url, f"outlinks{uuid.uuid4().hex[:8]}:", "w01")
    order = load_order(job / "order.yaml", sets)
    crawl = CrawlController(order, run_dir, install_signals=False)
    crawl.prepare()
    # As CrawlController.run does once the crawl runs: what exists now is out of the cycle
    # collector's way, and the young generation is collected every 20,000 allocations.
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)
    return crawl


@contextmanager
def scratch_frontier(hosts: int, prefix: str) -> Iterator[Any]:
    """The frontier of :func:`controller`'s crawl in a temporary run directory, closed after."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        run_dir = Path(tmp) / "job" / "run"
        run_dir.mkdir(parents=True)
        crawl = controller(run_dir, hosts)
        frontier = crawl.frontier
        assert frontier is not None
        try:
            yield frontier
        finally:
            crawl.request_stop("bench done")
            crawl._finish()  # no threads were started: only the closing part


def children(uri: str, links: list[Link]) -> list[CrawlURI]:
    """The CrawlURIs of page ``uri``'s ``links`` (``create_child``: no normalizing, no scope)."""
    page = CrawlURI(uri, hop_path="L", via=uri.rsplit("/", 1)[0] + "/", status=200)
    return [page.create_child(link.uri, link.hop, link.context) for link in links]


def run_pass(proc: Any, work: list[tuple[str, list[Link]]]) -> tuple[float, int]:
    """CPU seconds of this thread processing ``work``, and the outlinks handed over."""
    links = 0
    cpu = 0.0
    for uri, outlinks in work:
        curi = CrawlURI(uri, hop_path="L", via=uri.rsplit("/", 1)[0] + "/", status=200)
        curi.outlinks = list(outlinks)
        links += len(outlinks)
        t = time.thread_time()
        proc.process(curi)
        cpu += time.thread_time() - t
    return cpu, links


def scheduled(report: list[str]) -> int:
    """The processor's "candidates scheduled" count, read from its report."""
    for line in report:
        if "candidates scheduled" in line:
            return int(line.rsplit(":", 1)[1])
    return -1


def redis_cpu_s(redis_url: str) -> float:
    """The redis-server's own CPU seconds so far (``INFO cpu``, user + system); 0 without one."""
    if not redis_url:
        return 0.0
    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        info = client.info("cpu")
    finally:
        client.close()
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def measure(
    count: int, hosts: int, redis_url: str = "", cache_size: int | None = None
) -> tuple[dict[str, float], int, int]:
    """One fresh crawl: CPU-µs per outlink of the ``new`` and ``seen`` passes (and, with
    ``redis_url``, the redis-server's CPU-µs per outlink of the ``new`` pass), the outlinks of a
    pass and how many the frontier queued."""
    work = pages(count, hosts)
    with tempfile.TemporaryDirectory(prefix="outlinks-") as tmp:
        run_dir = Path(tmp) / "job" / "run"
        run_dir.mkdir(parents=True)
        crawl = controller(run_dir, hosts, redis_url, cache_size)
        try:
            proc = crawl.chains.find("candidates")
            assert proc is not None, "the order has no candidates processor"
            before = redis_cpu_s(redis_url)
            new_cpu, links = run_pass(proc, work)
            redis_new = redis_cpu_s(redis_url) - before
            queued = scheduled(proc.report())
            seen_cpu, _ = run_pass(proc, work)
            again_cpu, _ = run_pass(proc, work)
        finally:
            crawl.request_stop("bench done")
            crawl._finish()  # no threads were started: only the closing part
    per = {
        "new": new_cpu * 1e6 / links,
        "seen": seen_cpu * 1e6 / links,
        "again": again_cpu * 1e6 / links,
        "redis": redis_new * 1e6 / links,
    }
    return per, links, queued


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=400)
    ap.add_argument("--hosts", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--redis",
        default="",
        metavar="URL",
        help="run as a worker of a distributed crawl on this redis-server (a fresh namespace "
        "per run): the Redis frontier and uniq filter instead of LevelDB",
    )
    ap.add_argument(
        "--cache-size",
        type=int,
        default=None,
        help="the LevelDB uniq filter's cache of recent keys per generation (default: the "
        "order's); below a pass's links, the seen pass stands for a crawl much larger than it",
    )
    args = ap.parse_args()
    best: dict[str, float] = {}
    links = queued = 0
    for _ in range(args.repeat):
        per, links, queued = measure(args.pages, args.hosts, args.redis, args.cache_size)
        for k, v in per.items():
            best[k] = min(best.get(k, v), v)
    print(
        f"pages={args.pages} hosts={args.hosts} outlinks/pass={links} "
        f"CPU-us/outlink: new {best['new']:.1f} seen {best['seen']:.1f} "
        f"seen-again {best['again']:.1f} (per page: new "
        f"{best['new'] * links / args.pages / 1000:.2f} ms) queued={queued}"
        + (f" redis-server CPU-us/outlink (new): {best['redis']:.1f}" if args.redis else "")
    )


if __name__ == "__main__":
    main()
