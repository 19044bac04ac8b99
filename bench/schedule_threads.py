"""Many threads scheduling pages' links at once: CPU and thread switches per page.

The crawl's toe threads each end a page with one ``schedule_many`` of its links, while the
other threads parse, write and fetch. Here ``--threads`` threads share the pages of
:mod:`bench.outlinks` (the synthetic web's shape: 40-100 links a page, ``--hosts`` hosts) and
the frontier of ``bench/web/order.yaml`` (LevelDB store and uniq filter, write-behind store);
each spends ``--work-us`` of CPU per page in plain Python (standing for the page's other
stages, calibrated alone at start), then schedules the page's links (``create_child`` of each,
no scope). The first ``--warm`` pages are scheduled before the clock starts, and each later
page takes ``--seen-share`` of its links from them, so most of a page's links are already
seen, as in a crawl.

Prints, for the timed pages: process CPU-µs per page (``time.process_time``, every thread),
thread switches per page (voluntary + involuntary, ``getrusage``). Asserts nothing::

    .venv/bin/python bench/schedule_threads.py [--threads 300] [--pages 6000] [--work-us 2000]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import outlinks  # bench/outlinks.py, beside this file
from busy_work import calibrate, spin  # bench/busy_work.py

from crawler import Link


def mixed_pages(
    count: int, warm: int, hosts: int, seen_share: float
) -> tuple[list[tuple[str, list[Link]]], list[tuple[str, list[Link]]]]:
    """``warm`` pages to schedule first, then ``count`` pages whose links are ``seen_share``
    links of the warm pages (already seen) and the rest their own."""
    rng = random.Random(7)
    all_pages = outlinks.pages(warm + count, hosts)
    warm_pages, timed = all_pages[:warm], all_pages[warm:]
    old = [link for _, links in warm_pages for link in links]
    mixed = []
    for uri, links in timed:
        n_seen = int(len(links) * seen_share)
        mixed.append((uri, rng.sample(old, n_seen) + links[n_seen:]))
    return warm_pages, mixed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=300)
    ap.add_argument("--pages", type=int, default=6000)
    ap.add_argument("--warm", type=int, default=2000)
    ap.add_argument("--hosts", type=int, default=2000)
    ap.add_argument("--seen-share", type=float, default=0.85)
    ap.add_argument("--work-us", type=int, default=2000)
    ap.add_argument(
        "--spins", type=int, default=0, help="turns of work per page (instead of calibrating)"
    )
    args = ap.parse_args()
    warm_pages, timed = mixed_pages(args.pages, args.warm, args.hosts, args.seen_share)
    spins = args.spins or calibrate(args.work_us)
    with outlinks.scratch_frontier(args.hosts, "schedule-threads-") as frontier:
        for uri, links in warm_pages:
            frontier.schedule_many(outlinks.children(uri, links))
        work = iter(timed)
        take = threading.Lock()
        gate = threading.Barrier(args.threads + 1)

        def toe() -> None:
            gate.wait()
            while True:
                with take:
                    page = next(work, None)
                if page is None:
                    return
                spin(spins)
                frontier.schedule_many(outlinks.children(*page))

        threads = [threading.Thread(target=toe) for _ in range(args.threads)]
        for t in threads:
            t.start()
        ru0 = resource.getrusage(resource.RUSAGE_SELF)
        cpu0, wall0 = time.process_time(), time.monotonic()
        gate.wait()
        for t in threads:
            t.join()
        cpu = time.process_time() - cpu0
        wall = time.monotonic() - wall0
        ru1 = resource.getrusage(resource.RUSAGE_SELF)
    n = len(timed)
    switches = (ru1.ru_nvcsw - ru0.ru_nvcsw) + (ru1.ru_nivcsw - ru0.ru_nivcsw)
    print(
        f"threads={args.threads} pages={n} spins={spins} "
        f"CPU-us/page={cpu * 1e6 / n:.0f} switches/page={switches / n:.1f} "
        f"pages/s={n / wall:.0f} load={os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
