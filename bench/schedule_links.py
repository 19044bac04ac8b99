"""Scheduling a page's new links alone: ``WorkQueueFrontier.schedule_many`` per new link.

The pages of :mod:`bench.outlinks` (the synthetic web's shape, 1,000 hosts), each page's links
made into CrawlURIs (``create_child``, no normalizing or scope) and handed to the frontier of
``bench/web/order.yaml`` (LevelDB store and uniq filter, write-behind store) in one
``schedule_many`` call: the seen filter's check-and-add, queue keys, records, the store's batch
and its sync. Prints the thread's CPU-µs per link in those calls.

``--mode make`` builds the same CrawlURIs without scheduling them: under callgrind, the
instructions of scheduling per link are ``(Ir(schedule) - Ir(make)) / links``::

    valgrind --tool=callgrind --callgrind-out-file=/tmp/s.out \\
        .venv/bin/python bench/schedule_links.py --pages 200
    valgrind --tool=callgrind --callgrind-out-file=/tmp/m.out \\
        .venv/bin/python bench/schedule_links.py --pages 200 --mode make
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import outlinks  # bench/outlinks.py, beside this file


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=400)
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--mode", choices=("schedule", "make"), default="schedule")
    args = ap.parse_args()
    work = outlinks.pages(args.pages, args.hosts)
    links = queued = 0
    cpu = 0.0
    with outlinks.scratch_frontier(args.hosts, "schedule-links-") as frontier:
        for uri, found in work:
            kids = outlinks.children(uri, found)
            links += len(kids)
            if args.mode == "schedule":
                t = time.thread_time()
                queued += sum(frontier.schedule_many(kids))
                cpu += time.thread_time() - t
    print(
        f"mode={args.mode} pages={args.pages} hosts={args.hosts} links={links} "
        f"queued={queued} CPU-us/link={cpu * 1e6 / max(links, 1):.2f}"
    )


if __name__ == "__main__":
    main()
