"""Every archived HTML page of the sample site through pywb in Debian's Chromium: crawl the
site (``--pages`` per host), stop it, replay every HTML page captured with 200 and count the
requests answered from the archive, pywb's 404s and requests escaping to the live web.

Run: ``python bench/replay_pages.py [--pages 100]`` (the size ``crawler demo`` crawls).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "archive"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # support.*

from replay_support import ReplayBrowser, archived_statuses, chromium, crawl, html_pages

from crawler.archive.collection import collection_from_run
from crawler.archive.replay import ReplayServer
from crawler.demo import SampleSite


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=100, help="pages per host of the site")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        run = Path(work) / "run"
        with SampleSite(pages_per_host=args.pages) as site:
            crawl(site, run)
        pages = html_pages(run)
        started = time.monotonic()
        with (
            chromium() as browser,
            ReplayServer(collection_from_run(run, Path(work) / "pywb")) as server,
        ):
            probe = ReplayBrowser(browser, server.prefix, archived_statuses(run))
            for capture in pages:
                probe.load(capture.url)
            probe.close()
        elapsed = time.monotonic() - started
    t = probe.tally
    print(f"sample site, {args.pages} pages per host: {len(pages)} archived HTML pages")
    print("| pages loaded | archive requests | pywb 404 | escaped | failed | pages/s |")
    print("|---|---|---|---|---|---|")
    print(f"| {t.pages} | {t.archive_requests} | {len(t.missing)} | {len(t.escaped)} | "
          f"{len(t.failed)} | {t.pages / elapsed:.1f} |")  # fmt: skip
    for url in (t.missing + t.escaped + t.failed)[:20]:
        print("  ", url)
    return 0 if not (t.missing or t.escaped or t.failed) else 1


if __name__ == "__main__":
    raise SystemExit(main())
