"""``make bench-frontier``: the frontier benchmarks, printed as tables.

Sections (``--only`` picks some): ``throughput`` (schedule new / seen, next+finished over 10^3
and 10^5 hosts; each uniq filter's add()), ``bloom`` (false-positive rate vs formula),
``papers`` (the single-site experiment with four queue policies, PNG plot), ``rss`` (peak RSS
with 10^7 URIs queued; several minutes). Results go to ``bench/out/frontier.md`` (the tables),
``bench/out/frontier.json`` and ``bench/out/frontier_papers.png``. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import frontier_memory
import frontier_papers
import frontier_throughput

OUT = Path(__file__).resolve().parent / "out"
SECTIONS = ("throughput", "bloom", "papers", "rss")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", action="append", choices=SECTIONS, help="run only this section")
    parser.add_argument("--uris", type=int, default=200_000, help="URIs per throughput run")
    parser.add_argument("--rss-uris", type=int, default=10_000_000, help="URIs for the RSS run")
    parser.add_argument("--papers-s", type=float, default=15.0, help="seconds per crawl run")
    parser.add_argument("--pages", type=int, default=20_000, help="pages of the test site")
    args = parser.parse_args()
    sections = args.only or list(SECTIONS)
    OUT.mkdir(parents=True, exist_ok=True)
    report: list[str] = ["# Frontier benchmarks", ""]
    results: dict[str, Any] = {}

    def emit(title: str, text: str, seconds: float) -> None:
        block = f"## {title} ({seconds:.0f} s)\n\n{text}\n"
        print(block, flush=True)
        report.append(block)

    for section in sections:
        t = time.perf_counter()
        print(f"... {section}", flush=True)
        if section == "throughput":
            text, results[section] = frontier_throughput.run_all(args.uris, 8)
            title = "Throughput (LevelDB store, LevelDB uniq filter, hostname queues)"
        elif section == "bloom":
            text, results[section] = frontier_memory.bloom_run(10**6, 10**6)
            title = "Bloom filter: false-positive rate, 10^6 URIs added, 10^6 others probed"
        elif section == "papers":
            text, runs = frontier_papers.run_all(OUT, args.papers_s, args.pages)
            results[section] = [r.label for r in runs]
            title = (
                f"The papers' experiment: one site, {frontier_papers.THREADS} threads, "
                f"{frontier_papers.LATENCY_S * 1000:.0f} ms per answer, {args.papers_s:.0f} s "
                f"per run, cap = host_max_connections {frontier_papers.CAP}"
            )
            text += "\n\nPlot: bench/out/frontier_papers.png"
        else:
            text, results[section] = frontier_memory.rss_run(args.rss_uris)
            title = "Peak RSS with the frontier on disk"
        emit(title, text, time.perf_counter() - t)
    stem = "frontier" if not args.only else "frontier-" + "-".join(sections)
    (OUT / f"{stem}.md").write_text("\n".join(report))
    (OUT / f"{stem}.json").write_text(json.dumps(results, indent=1, default=str))
    print(f"written: {OUT / (stem + '.md')}, {OUT / (stem + '.json')}")


if __name__ == "__main__":
    main()
