"""Browser-capture benchmark: browser pages/s, CPU-ms and memory per browser page on the JS
site's small script-built pages, and the HTTP-only crawl with the browser off (FetchBrowser in
the chain but disabled) against the same crawl without FetchBrowser in the chain at all.

Prints a table. Usage: ``python bench/browser.py [--pages 120] [--at-once 1 2 4]``.
CPU-ms is the crawler's and its Chromium processes' user+system time (gathered when the
browsers exit) divided by browser pages; memory is the peak proportional set size (PSS) of a
browser's processes divided by the pages it had open at once.
"""

from __future__ import annotations

import argparse
import re
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crawler.control.controller import CrawlController  # noqa: E402
from crawler.demo.js_site import JsSite  # noqa: E402
from crawler.demo.sample_site import SampleSite  # noqa: E402
from crawler.order.loader import load_order  # noqa: E402

EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"


def _cpu_s() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def browser_run(
    pages: int, at_once: int, threads: int, extra: tuple[str, ...] = ()
) -> dict[str, float]:
    with JsSite(bench_pages=pages) as site, tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        sets = [f"seeds.urls=['{site.url('/bench/0.html')}']", "seeds.file=null"]
        sets += [f"toe_threads={threads}", "browser.enabled=true", "browser.all_html=true"]
        sets += [f"browser.pages_at_once={at_once}", "robots.policy=ignore"]
        # One host: split it over queues so that several pages are in the browser at once.
        sets += [f"frontier.queue_assignment.params.parallel_queues={2 * at_once}"]
        sets += ["frontier.queue_assignment.params.parallel_queues_random_assignment=true"]
        sets += ["frontier.politeness.host_max_connections=0"]  # our own local server
        sets += ["chains.extract.extractor_http.params.infer_favicon=false", *extra]
        order = load_order(EXAMPLE, sets)
        cpu0, t0 = _cpu_s(), time.monotonic()
        CrawlController(order, run, install_signals=False).run()
        wall, cpu = time.monotonic() - t0, _cpu_s() - cpu0
        log = (run / "logs" / "crawl.log").read_text()
        done = len(re.findall(r"browser:html", log))
        report = (run / "reports" / "processors-report.txt").read_text()
        peak = re.search(r"peak browser memory (\d+) MB", report)
        peak_mb = float(peak.group(1)) if peak else 0.0
    return {
        "pages": done,
        "wall_s": wall,
        "pages_s": done / wall if wall else 0.0,
        "cpu_ms_page": 1000 * cpu / done if done else 0.0,
        "mb_per_open_page": peak_mb / at_once,
        "peak_mb": peak_mb,
    }


def http_run(with_browser_processor: bool, pages_per_host: int) -> tuple[int, float]:
    site = SampleSite(pages_per_host=pages_per_host)
    seeds = site.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            quoted = ", ".join(f"'{s}'" for s in seeds)
            order = load_order(EXAMPLE, [f"seeds.urls=[{quoted}]", "seeds.file=null"])
            if not with_browser_processor:
                fetch = [p for p in order.chains.fetch if p.name != "fetch_browser"]
                chains = order.chains.model_copy(update={"fetch": fetch})
                order = order.model_copy(update={"chains": chains})
            t0 = time.monotonic()
            CrawlController(order, Path(tmp) / "run", install_signals=False).run()
            wall = time.monotonic() - t0
            n = sum(1 for _ in (Path(tmp) / "run" / "logs" / "crawl.log").open())
    finally:
        site.stop()
    return n, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=120)
    parser.add_argument("--at-once", type=int, nargs="+", default=[2, 4, 8])
    parser.add_argument("--http-pages", type=int, default=300, help="sample-site pages per host")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--costs", action="store_true", help="only the cost of text and screenshots, 4 at once"
    )
    args = parser.parse_args()
    if args.costs:
        costs(args.pages)
        return
    print(f"JS site, {args.pages} small script-built pages, every one through the browser")
    print(f"{'at once':>8} {'pages':>6} {'wall s':>7} {'pages/s':>8} {'CPU-ms/pg':>10} "
          f"{'MB/open pg':>11} {'peak MB':>8}")  # fmt: skip
    for at_once in args.at_once:
        r = browser_run(args.pages, at_once, threads=max(4, 2 * at_once))
        cells = f"{r['pages']:>6.0f} {r['wall_s']:>7.1f} {r['pages_s']:>8.2f} "
        cells += f"{r['cpu_ms_page']:>10.0f} {r['mb_per_open_page']:>11.0f} {r['peak_mb']:>8.0f}"
        print(f"{at_once:>8} {cells}")
    print()
    print("HTTP-only crawl of the sample site (browser off), URIs/s, alternating rounds")
    print(f"{'chain':>28} {'URIs':>6} {'best URIs/s':>12} {'median URIs/s':>14}")
    rates: dict[str, list[float]] = {"without FetchBrowser": [], "FetchBrowser disabled": []}
    counts: dict[str, int] = {}
    for _ in range(args.rounds):
        for name, present in (("without FetchBrowser", False), ("FetchBrowser disabled", True)):
            n, wall = http_run(present, args.http_pages)
            rates[name].append(n / wall)
            counts[name] = n
    for name, values in rates.items():
        if not values:
            continue
        values.sort()
        best, median = values[-1], values[len(values) // 2]
        print(f"{name:>28} {counts[name]:>6} {best:>12.0f} {median:>14.0f}")


def costs(pages: int) -> None:
    """Pages/s and CPU-ms per page at 4 at once with each capture on its own."""
    variants = {
        "text off, no screenshots": ("browser.text=false",),
        "text (default)": (),
        "text + view": ("browser.screenshots=[view]",),
        "text + full": ("browser.screenshots=[full]",),
        "text + thumbnail": ("browser.screenshots=[thumbnail]",),
        "text + all three": ("browser.screenshots=[view, full, thumbnail]",),
    }
    print(f"JS site, {pages} pages through the browser, 4 at once")
    print(f"{'captures':>26} {'pages/s':>8} {'CPU-ms/pg':>10}")
    for name, extra in variants.items():
        r = browser_run(pages, 4, threads=8, extra=extra)
        print(f"{name:>26} {r['pages_s']:>8.2f} {r['cpu_ms_page']:>10.0f}")


if __name__ == "__main__":
    main()
