"""Crawl the sample site, then load archived pages through pywb in Debian's Chromium and account
for every request: answered from the archive, missing from it (pywb's 404), or escaping to the
live web (aborted and counted). Shared by the replay tests and ``bench/replay_pages.py``."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support.sample_crawl import crawl_sample_site
from warcio.archiveiterator import ArchiveIterator

from crawler.archive.run_layout import warc_dirs
from crawler.demo import SampleSite

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
                 "--disable-background-networking", "--disable-component-update"]  # fmt: skip


def crawl(site: SampleSite, run_dir: Path, *extra: str) -> None:
    """Crawl ``site`` into ``run_dir`` with the example job, politeness off."""
    crawl_sample_site(site, run_dir, *extra)


@dataclass(frozen=True)
class Capture:
    """One line of a run's CDXJ indexes."""

    url: str
    timestamp: str
    mime: str
    status: str
    digest: str
    warc: Path
    offset: int


def captures(run_dir: Path) -> list[Capture]:
    """Every indexed capture of the run (its own WARC directories only)."""
    found = []
    for wdir in warc_dirs(run_dir):
        for index in wdir.index_files():
            for line in index.read_text().splitlines():
                _key, ts, data = line.split(" ", 2)
                f = json.loads(data)
                found.append(
                    Capture(f["url"], ts, f.get("mime", ""), f.get("status", ""),
                            f.get("digest", ""), wdir.warcs / f["filename"], int(f["offset"]))
                )  # fmt: skip
    return found


def html_pages(run_dir: Path) -> list[Capture]:
    """The run's HTML pages captured with 200 (one per URL)."""
    pages = {c.url: c for c in captures(run_dir) if c.mime == "text/html" and c.status == "200"}
    return sorted(pages.values(), key=lambda c: c.url)


def payload(capture: Capture) -> bytes:
    """The archived payload of ``capture`` (read from its WARC)."""
    with capture.warc.open("rb") as fh:
        fh.seek(capture.offset)
        record = next(iter(ArchiveIterator(fh)))
        return bytes(record.content_stream().read())


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # an archived redirect is the answer, not a way elsewhere


_OPENER = urllib.request.build_opener(_NoRedirect)


def original_bytes(prefix: str, capture: Capture) -> tuple[int, bytes]:
    """Status and body pywb replays for ``capture`` unmodified (the ``id_`` modifier)."""
    url = f"{prefix}{capture.timestamp}id_/{capture.url}"
    try:
        with _OPENER.open(url, timeout=30) as response:
            return int(response.status), bytes(response.read())
    except urllib.error.HTTPError as error:  # an archived 3xx or 4xx, or pywb's 404
        return error.code, bytes(error.read())


@dataclass
class ReplayTally:
    """Requests seen while loading pages through pywb."""

    pages: int = 0
    archive_requests: int = 0  # under the collection prefix
    pywb_requests: int = 0  # pywb's own banner, scripts and styles
    missing: list[str] = field(default_factory=list)  # pywb answered 404: not in the archive
    escaped: list[str] = field(default_factory=list)  # not to pywb: aborted
    failed: list[str] = field(default_factory=list)  # no response at all

    def summary(self) -> str:
        return (
            f"{self.pages} pages, {self.archive_requests} archive requests, "
            f"{self.pywb_requests} pywb requests, {len(self.missing)} missing (404), "
            f"{len(self.escaped)} escaped, {len(self.failed)} failed"
        )


class ReplayBrowser:
    """One Chromium page that loads ``prefix + URL`` and tallies every request it makes.

    ``archived_statuses`` maps each archived URL to the statuses it was captured with, so an
    archived 404 replayed as 404 is told from pywb's "not in archive" 404."""

    def __init__(self, browser: Any, prefix: str, archived_statuses: dict[str, set[str]]) -> None:
        self.prefix = prefix
        self.origin = re.match(r"https?://[^/]+/", prefix).group(0)  # type: ignore[union-attr]
        self._archived = archived_statuses
        self._replayed = re.compile(re.escape(prefix) + r"\d{1,14}(?:[a-z]{2}_)?/(.+)$")
        self.tally = ReplayTally()
        self._context = browser.new_context()
        self._context.route("**/*", self._route)
        self.page = self._context.new_page()
        self.page.on("response", self._response)
        self.page.on("requestfailed", self._failed)

    def _route(self, route: Any) -> None:
        url = route.request.url
        if url.startswith(self.origin):
            route.continue_()
        else:
            self.tally.escaped.append(url)
            route.abort()

    def _response(self, response: Any) -> None:
        url = response.url
        if not url.startswith(self.origin):
            return
        match = self._replayed.match(url)
        if match is None and (not url.startswith(self.prefix) or "cdx?" in url):
            self.tally.pywb_requests += 1
            return
        self.tally.archive_requests += 1
        if response.status == 404:
            target = match.group(1) if match else url[len(self.prefix) :]
            if "404" not in self._archived.get(target, set()):
                self.tally.missing.append(url)

    def _failed(self, request: Any) -> None:
        # Only archived content counts: pywb's banner asks its CDX API for the page's captures
        # (``<prefix>cdx?url=…``), which a navigation to the next page may abort.
        if self._replayed.match(request.url):
            self.tally.failed.append(f"{request.url} ({request.failure})")

    def load(self, url: str) -> str:
        """Load ``prefix + url`` (pywb's framed replay) until the archived page's frame has
        loaded; returns that frame's title."""
        self.page.goto(self.prefix + url, wait_until="load", timeout=30_000)
        frame = self._content_frame()
        frame.wait_for_load_state("load", timeout=30_000)
        self.tally.pages += 1
        return str(frame.title())

    def _content_frame(self) -> Any:
        # pywb's banner adds the frame by script after "load": up to 30 s like the loads
        # around it (5 s was once too short in a loaded full suite).
        for _ in range(600):
            for frame in self.page.frames:
                if "mp_/" in frame.url:
                    return frame
            self.page.wait_for_timeout(50)
        raise AssertionError(f"no replay frame in {self.page.url}")

    def close(self) -> None:
        self._context.close()


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Debian Chromium driven by Playwright (its bundled driver; no download)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def archived_statuses(*run_dirs: Path) -> dict[str, set[str]]:
    """URL -> statuses captured, over the runs."""
    statuses: dict[str, set[str]] = {}
    for run in run_dirs:
        for c in captures(run):
            statuses.setdefault(c.url, set()).add(c.status)
    return statuses
