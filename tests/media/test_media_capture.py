"""Media capture end to end on a local site whose video ffmpeg made at test time: the chosen
rendition of every stream (progressive MP4, HLS with all its segments, DASH with all its
fragments, HLS named by a player's JSON setup) is in the WARC with the page's info JSON beside
it, the other rendition is not; hostile pages (an endless manifest, a live stream, broken
player JSON, a manifest off the crawl's scope) end as annotations; yt-dlp reached nothing but
through the crawler. Then every video plays in Chromium from the archive through pywb, with no
live request (the site is gone by then)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from media_site import GOOD_PAGES, MediaSite
from warcio.archiveiterator import ArchiveIterator

from crawler.control.controller import CrawlController
from crawler.order.loader import load_order
from processors.media.extractor_media import INFO_TYPE

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(300)]
ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"


class Crawled:
    """What one crawl of the media site left: crawl.log lines by URL, WARC records, requests."""

    def __init__(self, run: Path, site: MediaSite, files: list[str]) -> None:
        self.run = run
        self.base = site.base_url.rstrip("/")
        self.files = files
        self.requests = list(site.requests)
        self.log: dict[str, list[str]] = {}
        for line in (run / "logs" / "crawl.log").read_text().splitlines():
            cols = line.split()
            self.log[cols[3]] = cols
        self.records: list[Any] = []
        for warc in sorted((run / "warcs").glob("*.warc.gz")):
            with warc.open("rb") as f:
                for rec in ArchiveIterator(f):
                    body = rec.content_stream().read() if rec.rec_type == "metadata" else b""
                    self.records.append((rec.rec_type, dict(rec.rec_headers.headers), body))

    def responses(self) -> set[str]:
        return {h["WARC-Target-URI"] for t, h, _ in self.records if t == "response"}

    def notes(self, path: str) -> str:
        return self.log[self.base + path][11]


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Crawled:
    if shutil.which("ffmpeg") is None:
        pytest.fail("no ffmpeg: `make test` installs Debian's ffmpeg")
    run = tmp_path_factory.mktemp("media") / "run"
    with MediaSite() as site:
        order = load_order(
            ROOT / "jobs" / "example" / "order.yaml",
            [
                f"seeds.urls={[site.base_url]!r}",
                "seeds.file=null",
                "frontier.politeness.delay_factor=0",
                "frontier.politeness.min_delay_ms=0",
                "frontier.politeness.max_delay_ms=0",
                "toe_threads=4",
                "logging.console=false",
                "chains.extract.extractor_media.params.timeout_s=5",
            ],
        )
        assert CrawlController(order, run, install_signals=False).run() == 0
        return Crawled(run, site, site.files)


def test_the_chosen_rendition_of_every_stream_is_archived_whole(crawled: Crawled) -> None:
    archived = crawled.responses()
    chosen = [f for f in crawled.files if "/hls/v0/" not in f]
    missing = [f for f in chosen if crawled.base + f not in archived]
    assert missing == []
    other = [f for f in crawled.files if "/hls/v0/" in f and crawled.base + f in archived]
    assert other == []  # 160x90 and 320x180 on offer: one rendition, the taller
    for page in GOOD_PAGES:
        assert "mediaPage:markup" in crawled.notes(f"/{page}")
        assert ",media:" in crawled.notes(f"/{page}")
    assert "mediaPage" not in crawled.notes("/plain.html")
    segment = crawled.log[crawled.base + "/media/dash/seg-0-1.m4s"]
    assert segment[4].endswith("E") and segment[5] == crawled.base + "/dash.html"


def test_the_info_json_is_a_metadata_record_beside_the_page(crawled: Crawled) -> None:
    ids = {
        h["WARC-Target-URI"]: h["WARC-Record-ID"] for t, h, _ in crawled.records if t == "response"
    }
    for page in GOOD_PAGES:
        url = f"{crawled.base}/{page}"
        found = [
            (h, body)
            for t, h, body in crawled.records
            if t == "metadata" and h["WARC-Target-URI"] == f"youtube-dl:{url}"
        ]
        assert len(found) == 1, page
        headers, body = found[0]
        assert headers["Content-Type"] == INFO_TYPE
        assert headers["WARC-Concurrent-To"] == ids[url]
        info = json.loads(body)
        assert info["webpage_url"] == url and info["formats"]
        assert all("fragments" not in f for f in info["formats"])


def test_hostile_pages_end_as_annotations(crawled: Crawled) -> None:
    assert "mediaTimeout" in crawled.notes("/hostile/million.html")
    live = crawled.notes("/hostile/live.html") + crawled.notes("/hostile/live.m3u8")
    assert "mediaLive" in live
    assert not any(path.startswith("/hostile/live7") for path, _, _ in crawled.requests)
    assert "mediaNone" in crawled.notes("/hostile/badjson.html")
    assert "mediaNone" in crawled.notes("/hostile/offsite.html")
    for cols in crawled.log.values():
        assert int(cols[1]) > 0 or "localhost" in cols[3] or cols[3].endswith("robots.txt"), cols


def test_yt_dlp_reached_nothing_but_through_the_crawler(crawled: Crawled) -> None:
    agents = {agent for _, _, agent in crawled.requests}
    assert len(agents) == 1 and "crawler" in next(iter(agents)).lower()
    hosts = {host.split(":")[0] for _, host, _ in crawled.requests}
    assert hosts == {"127.0.0.1"}  # the offsite manifest was refused by the scope
    fetched_for_yt_dlp = [c for c in crawled.log.values() if c[11].split(",")[0] == "media"]
    assert {c[3].rsplit("/", 1)[1] for c in fetched_for_yt_dlp} >= {"master.m3u8", "manifest.mpd"}


@pytest.mark.e2e
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no chromium: `make test` installs it")
def test_every_video_plays_from_the_archive(crawled: Crawled, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    from crawler.archive.collection import collection_from_run
    from crawler.archive.replay import ReplayServer

    escaped: list[str] = []
    missing: list[str] = []
    played: dict[str, float] = {}
    with ReplayServer(collection_from_run(crawled.run, tmp_path)) as server, sync_playwright() as p:
        origin = server.prefix.split("/", 3)[:3]
        origin_url = "/".join(origin) + "/"
        browser = p.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--autoplay-policy=no-user-gesture-required"],
        )  # fmt: skip
        context = browser.new_context()

        def route(r: Any) -> None:
            if r.request.url.startswith(origin_url):
                r.continue_()
            else:
                escaped.append(r.request.url)
                r.abort()

        context.route("**/*", route)
        page = context.new_page()
        page.on(
            "response",
            lambda resp: missing.append(resp.url) if resp.status == 404 else None,
        )
        for name in GOOD_PAGES:
            page.goto(f"{server.prefix}{crawled.base}/{name}", wait_until="load", timeout=30_000)
            frame = next(f for f in _frames(page) if "mp_/" in f.url)
            frame.wait_for_function(
                "() => { const v = document.querySelector('video');"
                " return v && v.currentTime > 0.5; }",
                timeout=30_000,
            )
            played[name] = float(frame.evaluate("document.querySelector('video').currentTime"))
        browser.close()
    assert sorted(played) == sorted(GOOD_PAGES)
    assert escaped == []
    # Chromium's own HLS player, given the <source>, asks for the first rendition listed
    # before the page's player takes over; the policy captured one rendition, the other
    unplayed = "/media/hls/v0/"
    assert [u for u in missing if ("/media/" in u and unplayed not in u) or u.endswith(".js")] == []


def _frames(page: Any) -> list[Any]:
    for _ in range(100):
        frames = [f for f in page.frames if "mp_/" in f.url]
        if frames:
            return frames
        page.wait_for_timeout(50)
    raise AssertionError(f"no replay frame in {page.url}")
