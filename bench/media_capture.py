"""Media capture on the media test site (tests/media/media_site.py, made by ffmpeg): play every
video page live in Debian's Chromium and list the URLs it requests, crawl the site, compare
with what the WARC holds, then play every page from the archive through pywb (no live request
possible: the site is stopped). Also the cost per page of choosing pages for yt-dlp (markup
scan and site-extractor URL check) on python3-doc's HTML, and the crawl's CPU with the yt-dlp
workers' own.

Run: ``python bench/media_capture.py`` (``make bench-media``).
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "media"))

from media_site import GOOD_PAGES, MediaSite  # noqa: E402
from warcio.archiveiterator import ArchiveIterator  # noqa: E402

from crawler.archive.collection import collection_from_run  # noqa: E402
from crawler.archive.replay import ReplayServer  # noqa: E402
from crawler.control.controller import CrawlController  # noqa: E402
from crawler.order.loader import load_order  # noqa: E402
from processors.media.extractor_url_index import ExtractorUrlIndex  # noqa: E402
from processors.media.media_page_rule import player_markup  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--autoplay-policy=no-user-gesture-required"]
PLAYING = "() => { const v = document.querySelector('video'); return v && v.currentTime > 1.5; }"


def _play(page: Any, url: str, frame_part: str | None = None) -> float:
    page.goto(url, wait_until="load", timeout=30_000)
    frame = page.main_frame
    if frame_part is not None:
        for _ in range(200):
            found = [f for f in page.frames if frame_part in f.url]
            if found:
                frame = found[0]
                break
            page.wait_for_timeout(50)
    frame.wait_for_function(PLAYING, timeout=30_000)
    return float(frame.evaluate("document.querySelector('video').currentTime"))


def rule_cost() -> tuple[int, float, float]:
    docs = sorted(Path("/usr/share/doc/python3-dev/html").rglob("*.html"))[:2000]
    bodies = [p.read_bytes()[: 512 * 1024] for p in docs]
    started = time.process_time()
    hits = sum(1 for b in bodies if player_markup(b))
    scan_us = (time.process_time() - started) / max(1, len(bodies)) * 1e6
    index = ExtractorUrlIndex()
    started = time.process_time()
    index.claimed_by("https://docs.python.org/3/library/index.html")
    build_ms = (time.process_time() - started) * 1000
    urls = [f"https://docs.python.org/3/{p.name}" for p in docs]
    started = time.process_time()
    for url in urls:
        index.claimed_by(url)
    url_us = (time.process_time() - started) / max(1, len(urls)) * 1e6
    print(f"rule: {len(bodies)} python3-doc pages, {hits} with player markup; markup scan "
          f"{scan_us:.0f} µs/page, URL check {url_us:.1f} µs/page, index built in "
          f"{build_ms:.0f} ms CPU")  # fmt: skip
    return hits, scan_us, url_us


def main() -> int:
    from playwright.sync_api import sync_playwright

    print(f"load average: {os.getloadavg()[0]:.2f}")
    rule_cost()
    with tempfile.TemporaryDirectory() as work, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        run = Path(work) / "run"
        with MediaSite() as site:
            base = site.base_url.rstrip("/")
            live: dict[str, set[str]] = {}
            for name in GOOD_PAGES:
                page = browser.new_page()
                seen: set[str] = set()
                page.on("request", lambda r, seen=seen: seen.add(r.url))
                _play(page, f"{base}/{name}")
                live[name] = {u for u in seen if u.startswith(base) and "/media/" in u}
                page.close()
            order = load_order(
                ROOT / "jobs" / "example" / "order.yaml",
                [f"seeds.urls={[site.base_url]!r}", "seeds.file=null",
                 "frontier.politeness.delay_factor=0", "frontier.politeness.min_delay_ms=0",
                 "frontier.politeness.max_delay_ms=0", "toe_threads=4",
                 "logging.console=false"],
            )  # fmt: skip
            cpu0 = resource.getrusage(resource.RUSAGE_SELF)
            kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.monotonic()
            assert CrawlController(order, run, install_signals=False).run() == 0
            wall = time.monotonic() - started
            cpu1 = resource.getrusage(resource.RUSAGE_SELF)
            kids1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        crawl_cpu = cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime
        worker_cpu = kids1.ru_utime + kids1.ru_stime - kids0.ru_utime - kids0.ru_stime
        archived: set[str] = set()
        for warc in (run / "warcs").glob("*.warc.gz"):
            with warc.open("rb") as f:
                archived |= {
                    r.rec_headers.get_header("WARC-Target-URI")
                    for r in ArchiveIterator(f)
                    if r.rec_type == "response"
                }
        print(f"crawl: {wall:.1f} s wall, {crawl_cpu:.2f} s CPU in the crawler, "
              f"{worker_cpu:.2f} s in yt-dlp workers (and other children)")  # fmt: skip
        print("| page | media URLs Chromium requested live | in the WARC | missing |")
        print("|---|---|---|---|")
        for name in GOOD_PAGES:
            missing = sorted(u[len(base) :] for u in live[name] - archived)
            print(f"| {name} | {len(live[name])} | {len(live[name] & archived)} | "
                  f"{', '.join(missing) or '-'} |")  # fmt: skip
        escaped: list[str] = []
        with ReplayServer(collection_from_run(run, Path(work) / "pywb")) as server:
            context = browser.new_context()
            origin = "/".join(server.prefix.split("/", 3)[:3]) + "/"

            def route(r: Any) -> None:
                if r.request.url.startswith(origin):
                    r.continue_()
                else:
                    escaped.append(r.request.url)
                    r.abort()

            context.route("**/*", route)
            page = context.new_page()
            for name in GOOD_PAGES:
                try:
                    at = _play(page, f"{server.prefix}{base}/{name}", "mp_/")
                    print(f"replay {name}: plays (currentTime {at:.2f} s)")
                except Exception as exc:  # noqa: BLE001 - reported, the bench goes on
                    print(f"replay {name}: does not play ({type(exc).__name__})")
            print(f"requests escaping the archive during replay: {len(escaped)}")
        browser.close()
    print(f"load average: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
