"""The bar chart of the crawl benchmark: pages/s and CPU-ms per page, per corpus and peer.

``plot(report, path)`` draws from a ``results.json`` report; ``python bench/crawl/chart.py
[results.json] [out.png]`` redraws it without crawling again.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib import ticker

ORDER = ("crawler", "scrapy", "scrapy-jobdir", "wget2", "wget")
COLOURS = {
    "crawler": "#1d3557",
    "scrapy": "#e76f51",
    "scrapy-jobdir": "#f4a261",
    "wget2": "#2a9d8f",
    "wget": "#8ab17d",
}
TITLES = {"docs": "Python 3.11 docs", "gen": "generated site"}


def plot(report: dict[str, Any], path: Path) -> None:
    summary = report["summary"]
    corpora = list(summary)
    fig, axes = plt.subplots(2, len(corpora), figsize=(4.2 * len(corpora), 5.6), squeeze=False)
    for col, corpus in enumerate(corpora):
        by_peer = summary[corpus]
        names = [p for p in ORDER if p in by_peer]
        colours = [COLOURS[p] for p in names]
        for row, (key, label, fmt) in enumerate(
            (
                ("pages_per_s", "pages/s (log)", "{:.0f}"),
                ("cpu_ms_per_page", "CPU ms / page", "{:.1f}"),
            )
        ):
            ax = axes[row][col]
            values = [by_peer[p][key] for p in names]
            bars = ax.bar(names, values, color=colours)
            if key == "pages_per_s":
                ax.set_yscale("log")
                ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
                ax.yaxis.set_minor_formatter(ticker.NullFormatter())
                truth = report["ground_truth"][corpus]["urls"]
                ax.set_title(f"{TITLES.get(corpus, corpus)} ({truth} URLs)", fontsize=10)
            ax.set_ylabel(label, fontsize=9)
            ax.tick_params(axis="x", labelsize=8, rotation=20)
            ax.tick_params(axis="y", labelsize=8)
            for bar, value in zip(bars, values, strict=True):
                ax.annotate(
                    fmt.format(value),
                    (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center",
                    va="bottom",
                    fontsize=7,
                )
            ax.margins(y=0.15)
    runs = report["config"]["runs"]
    fig.suptitle(f"Crawl benchmark, concurrency 16, medians of {runs} run(s)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def main() -> int:
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("bench/out/results.json")
    dst = Path(sys.argv[2]) if len(sys.argv) > 2 else Path("bench/out/crawl-results.png")
    plot(json.loads(src.read_text()), dst)
    print(dst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
