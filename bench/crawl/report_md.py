"""Markdown tables of a crawl-benchmark report, for bench/RESULTS.md.

``python bench/crawl/report_md.py [bench/out/results.json]`` prints one table per corpus (the
medians) and the run conditions; ``run_bench.py`` also writes it to ``bench/out/results.md``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ORDER = ("crawler", "scrapy", "scrapy-jobdir", "wget2", "wget")
TITLES = {"docs": "Python 3.11 documentation (python3-doc)", "gen": "Generated site"}


def markdown(report: dict[str, Any]) -> str:
    cfg = report["config"]
    out = []
    for corpus, by_peer in report["summary"].items():
        truth = report["ground_truth"][corpus]
        title = TITLES.get(corpus, corpus)
        if corpus == "gen":
            title += f" ({cfg['pages']:,} pages on {cfg['hosts']} ports)"
        out += [
            f"**{title}**: ground truth {truth['urls']:,} URLs answering 200 "
            f"({truth['html_pages']:,} HTML), {truth['missing']} linked but missing; "
            f"medians of {cfg['runs']} run(s).",
            "",
            "| peer | pages | dup. fetches | coverage | wall s | pages/s | CPU s | CPU ms/page "
            "| peak RSS MB | crawler's pages/s ÷ peer's |",
            "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
        ]
        for peer in [p for p in ORDER if p in by_peer]:
            s = by_peer[peer]
            out.append(
                f"| {peer} | {s['pages']:,.0f} | {s['duplicates']:.0f} | "
                f"{100 * s['coverage']:.2f}% | {s['wall_s']:.1f} | {s['pages_per_s']:,.0f} | "
                f"{s['cpu_s']:.1f} | {s['cpu_ms_per_page']:.2f} | {s['peak_rss_mb']:.0f} | "
                f"{s.get('crawler_speedup', 0):.2f} |"
            )
        out.append("")
    loads = [r["load_1m_before"] for r in report["runs"] if "load_1m_before" in r]
    if loads:
        out.append(
            f"Load average (1 min) before the crawls: {min(loads):.1f} to {max(loads):.1f} "
            f"on {report['machine']['cpus']} CPUs; total {cfg['seconds'] / 60:.0f} min."
        )
    return "\n".join(out) + "\n"


def main() -> int:
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("bench/out/results.json")
    print(markdown(json.loads(src.read_text())), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
