"""A URI's turn through the frontier alone: ``next()``, then ``finished()`` with ``on_final``.

What the crawl's ``frontier`` stage (``bench/web/cpu_probe.py``) charges to every URI, with
nothing else running: the real WorkQueueFrontier over LevelDB (store and uniq filter), hostname
queues, politeness off, and an ``on_final`` doing what the controller's does (the crawl.log line
with its extra-info JSON, the statistics, the recording closed). One thread; the URIs are queued
first (not timed). Prints CPU-µs per turn, the best of ``--repeat`` rounds.

    .venv/bin/python bench/frontier_turn.py [--uris 20000] [--hosts 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from frontier_throughput import config, uris

from crawler.curi import CrawlURI
from crawler.frontier import (
    HostnameQueueAssignmentPolicy,
    LevelDBQueueStore,
    WorkQueueFrontier,
)
from crawler.logs.crawl_logs import CrawlLogs
from crawler.stats import CrawlStats
from crawler.uniq import LevelDBUriUniqFilter, LevelDBUriUniqFilterParams

EXTRA = {"warcFilename": "WEB-20261129055139085-00000-12902~vm.warc.gz", "warcFileOffset": 274490}


def one_round(n: int, hosts: int) -> float:
    """CPU-µs per next()+finished() over ``n`` URIs queued on ``hosts`` hosts."""
    with tempfile.TemporaryDirectory() as tmp:
        logs = CrawlLogs(Path(tmp) / "logs")
        stats = CrawlStats()

        def on_final(curi: CrawlURI) -> None:
            logs.log_final(curi, time.time())
            stats.record_final(curi)
            curi.close_recording()

        uniq = LevelDBUriUniqFilter(LevelDBUriUniqFilterParams())
        frontier = WorkQueueFrontier(
            LevelDBQueueStore(), HostnameQueueAssignmentPolicy(), uniq, config(), on_final=on_final
        )
        frontier.open(Path(tmp) / "state")
        links = uris(n, hosts)
        for i in range(0, n, 50):
            frontier.schedule_many(
                [CrawlURI(u, via="https://example.org/", hop_path="LE") for u in links[i : i + 50]]
            )
        turns = 0
        started = time.process_time()
        while (curi := frontier.next(0)) is not None:
            curi.status = 200
            curi.content_size = 12_345
            curi.fetch_start_ms = int(time.time() * 1000)
            curi.fetch_duration_ms = 12
            curi.payload_digest = "sha1:PJZHKY73YL4CLA27RSACHQURME3PJ5AD"
            curi.content_type = "image/png"
            curi.extra_info = dict(EXTRA)
            curi.annotations.append("duplicate:digest")
            frontier.finished(curi)
            turns += 1
        elapsed = time.process_time() - started
        frontier.close()
    return 1e6 * elapsed / max(1, turns)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uris", type=int, default=20_000)
    parser.add_argument("--hosts", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rounds = [one_round(args.uris, args.hosts) for _ in range(args.repeat)]
    print("| URIs | hosts | CPU-µs per next()+finished(), rounds | best |")
    print("|--:|--:|---|--:|")
    cells = " / ".join(f"{r:.1f}" for r in rounds)
    print(f"| {args.uris:,} | {args.hosts:,} | {cells} | {min(rounds):.1f} |")


if __name__ == "__main__":
    main()
