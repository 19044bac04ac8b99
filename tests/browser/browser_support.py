"""Helpers of the browser-capture tests: the skip marker, a crawl of the JS site, WARC reading
and a live (uncaptured) Chromium load to compare against."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support.crawllog_parser import CrawlLogLine, parse_file
from warcio.archiveiterator import ArchiveIterator

from crawler.control.controller import CrawlController
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
CHROMIUM = "/usr/bin/chromium"
needs_chromium = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason=f"no {CHROMIUM}: `make test` installs Debian's chromium"
)


def crawl(run: Path, seeds: list[str], *sets: str) -> list[CrawlLogLine]:
    """Crawl ``seeds`` with the example order (no politeness) and ``sets``; crawl.log lines."""
    quoted = ", ".join(f"'{s}'" for s in seeds)
    order = load_order(
        EXAMPLE, [f"seeds.urls=[{quoted}]", "seeds.file=null", "toe_threads=3", *sets]
    )
    assert CrawlController(order, run, install_signals=False).run() == 0
    return parse_file(run / "logs" / "crawl.log")


def warc_records(run: Path) -> list[tuple[str, str, str | None]]:
    """(type, target URI, content type) of every record of the run's WARCs."""
    out = []
    for path in sorted((run / "warcs").glob("*.warc.gz")):
        with path.open("rb") as fh:
            for record in ArchiveIterator(fh):
                headers = record.rec_headers
                out.append(
                    (
                        record.rec_type,
                        headers.get_header("WARC-Target-URI") or "",
                        headers.get_header("Content-Type"),
                    )
                )
    return out


def response_counts(run: Path) -> Counter[str]:
    """How many response or revisit records each URI has."""
    return Counter(u for kind, u, _ in warc_records(run) if kind in ("response", "revisit"))


def live_load(url: str, scrolls: int = 8, clicks: int = 4) -> set[str]:
    """The URLs a plain headless Chromium requests loading ``url`` live (no crawler in between),
    scrolling to the bottom and clicking "Load more" as a reader would."""
    from playwright.sync_api import sync_playwright

    args = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"]
    args += ["--disable-background-networking", "--disable-component-update", "--disable-sync"]
    seen: set[str] = set()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=args)
        try:
            page: Any = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("request", lambda r: seen.add(r.url))
            page.goto(url, wait_until="load")
            page.wait_for_load_state("networkidle")
            for _ in range(scrolls):
                page.evaluate("window.scrollTo(0, document.scrollingElement.scrollHeight)")
                page.wait_for_timeout(300)
                page.wait_for_load_state("networkidle")
            for _ in range(clicks):
                button = page.query_selector("button")
                if button is None:
                    break
                button.click()
                page.wait_for_timeout(300)
                page.wait_for_load_state("networkidle")
        finally:
            browser.close()
    return seen


def wait_gone(pids: list[int], timeout_s: float = 15.0) -> list[int]:
    """The pids of ``pids`` still alive after up to ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in alive if Path(f"/proc/{pid}").exists() and not _zombie(pid)]
        if alive:
            time.sleep(0.1)
    return alive


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2] == "Z"
