"""Recrawl benchmark (``make bench-recrawl``): a recrawl importing the first crawl's history
(``history.import_from``) against a site that answers conditional requests.

Serves the sample site (crawler/demo/site_generator.py; ``--hosts`` hosts of ``--pages`` pages,
on 127.0.0.1, with ETag/Last-Modified and 304 on a match), crawls it with the default order
(politeness off), then recrawls it naming the first run: unchanged, and with every tenth HTML
page edited (10%). Prints, per crawl, the URLs reached (and their share of the first crawl's),
the 304s, the WARC bytes against the first crawl's, pages/s and CPU-ms per page (the crawler
process's user+system time over the URLs it logged), and the cost of reading a stored payload
back (µs per 304) and of what is kept per URL (the history database's bytes per URL).

Run: ``python bench/recrawl.py [--pages 300] [--hosts 3]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crawler.demo import SampleSite  # noqa: E402

ORDER = ROOT / "jobs" / "example" / "order.yaml"


def run_crawl(seeds: list[str], run_dir: Path, *sets: str) -> tuple[float, float]:
    """One crawl with the CLI (default order, politeness off): (wall s, CPU s of the crawler)."""
    args = [
        sys.executable, "-m", "crawler", "run", str(ORDER), "--run-dir", str(run_dir),
        "--no-display", "--set", f"seeds.urls={seeds!r}", "--set", "seeds.file=null",
        "--set", "frontier.politeness.delay_factor=0",
        "--set", "frontier.politeness.min_delay_ms=0",
        "--set", "frontier.politeness.max_delay_ms=0", "--set", "logging.console=false",
    ]  # fmt: skip
    for value in sets:
        args += ["--set", value]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def log_lines(run_dir: Path) -> list[list[str]]:
    with (run_dir / "logs" / "crawl.log").open(encoding="utf-8") as fh:
        return [line.split() for line in fh]


def reached(run_dir: Path) -> set[str]:
    """http(s) URLs the run fetched (any status the server gave, 304 included)."""
    return {f[3] for f in log_lines(run_dir) if int(f[1]) > 0 and f[3].startswith("http")}


def warc_bytes(run_dir: Path) -> int:
    return sum(p.stat().st_size for p in (run_dir / "warcs").iterdir())


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def change_tenth(site: SampleSite) -> int:
    """Edit every tenth HTML page of the site (sorted by URL); returns how many."""
    changed = 0
    for origin in site.content.origins:
        pages = sorted(
            path
            for path, res in site.content.hosts[origin].items()
            if res.status == 200 and res.content_type.startswith("text/html")
        )
        for path in pages[::10]:
            body = site.content.hosts[origin][path].body
            site.change(origin + path, body.replace(b"</body>", b"<p>Edited.</p></body>"))
            changed += 1
    return changed


def load_cost(first: Path, repeat: int) -> tuple[float, int]:
    """µs per :meth:`EarlierPayload.load` of each 200 HTML page of ``first`` (a warm page
    cache, as a recrawl of recent WARCs has), and how many pages were read."""
    from crawler import CrawlURI, Recording
    from crawler.continuity.earlier_payload import EarlierPayload
    from crawler.history import CrawlHistory

    with tempfile.TemporaryDirectory() as tmp, CrawlHistory.open(Path(tmp), first) as history:
        loader = EarlierPayload.for_crawl(Path(tmp), history, None, with_outlinks=False)
        pages = [f[3] for f in log_lines(first) if f[1] == "200" and f[6] == "text/html"]
        entries = [(uri, history.fetch_history(uri)) for uri in pages]
        started = time.process_time()
        loaded = 0
        for _ in range(repeat):
            for uri, entry in entries:
                if entry is None:
                    continue
                curi = CrawlURI(uri)
                rec = Recording()
                loaded += loader.load(curi, rec, entry)
                rec.close()
        spent = time.process_time() - started
    return spent / max(loaded, 1) * 1e6, loaded // repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=300, help="pages per host")
    parser.add_argument("--hosts", type=int, default=3)
    args = parser.parse_args()
    results: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-recrawl-") as name:
        tmp = Path(name)
        first = tmp / "first"
        imported = f"history.import_from={str(first)!r}"
        with SampleSite(
            ports=(0,) * args.hosts, pages_per_host=args.pages, validators=True
        ) as site:
            seeds = site.base_urls
            results["first"] = run_crawl(seeds, first)
            results["unchanged"] = run_crawl(seeds, tmp / "unchanged", imported)
            changed = change_tenth(site)
            results["10% changed"] = run_crawl(seeds, tmp / "10% changed", imported)
        load_us, loaded = load_cost(first, 3)
        urls_first = reached(first)
        history_bytes = dir_bytes(first / "state" / "history")
        print(
            f"\nRecrawl of the sample site ({args.hosts} hosts x {args.pages} pages, "
            f"validators on; {changed} HTML pages edited for the 10% run); "
            f"load average {os.getloadavg()[0]:.1f}\n"
        )
        print("| crawl | URLs reached | vs first | 304s | WARC bytes | vs first | pages/s | "
              "CPU-ms/page |")  # fmt: skip
        print("|---|--:|--:|--:|--:|--:|--:|--:|")
        base = warc_bytes(first)
        for crawl, (wall, cpu) in results.items():
            run_dir = tmp / crawl
            urls = reached(run_dir)
            lines = log_lines(run_dir)
            n304 = sum(1 for f in lines if f[1] == "304")
            total = warc_bytes(run_dir)
            print(
                f"| {crawl} | {len(urls):,} | {len(urls & urls_first) / len(urls_first):.1%} | "
                f"{n304:,} | {total:,} | {total / base:.1%} | {len(lines) / wall:.0f} | "
                f"{cpu * 1000 / len(lines):.2f} |"
            )
        print(
            f"\nReading a stored payload back (EarlierPayload.load, {loaded} HTML pages, warm "
            f"cache): {load_us:.0f} µs per 304. Kept per URL: nothing new (the history entry "
            f"the crawl keeps anyway: {history_bytes / len(urls_first):.0f} bytes per URL on "
            f"disk, {history_bytes:,} bytes for {len(urls_first):,} URLs)."
        )


if __name__ == "__main__":
    main()
