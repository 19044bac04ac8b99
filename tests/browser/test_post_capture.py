"""A page whose results come from ``POST /api/search``: captured through the browser (the request
record keeps the body, crawl.log says the method, two bodies are two captures, a repeat within
the page is sent once), indexed under pywb's POST key (at crawl time and by ``crawler index``,
as cdxj-indexer keys it), replayed in Chromium through pywb with the same results; block rules
keep requests from ever reaching a server and are counted in their report."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from browser_support import crawl, needs_chromium
from post_site import PostSite, results
from support.crawllog_parser import CrawlLogLine
from warcio.archiveiterator import ArchiveIterator

from crawler.archive.indexer import CdxjIndexer
from crawler.archive.run_layout import warc_dirs

pytestmark = [pytest.mark.integration, needs_chromium, pytest.mark.timeout(120)]

OWL = json.dumps({"q": "owl", "page": 1}, separators=(",", ":")).encode()
CAT = json.dumps({"q": "cat", "page": 1}, separators=(",", ":")).encode()


class Crawled:
    def __init__(self, run: Path, base: str, lines: list[CrawlLogLine], site: PostSite) -> None:
        self.run, self.base, self.lines, self.site = run, base, lines, site


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Crawled:
    run = tmp_path_factory.mktemp("post") / "run"
    with PostSite() as site:
        lines = crawl(
            run,
            [site.base + "/"],
            "browser.enabled=true",
            "browser.all_html=true",
            "browser.block=['/ads/', 'surt:http://127.0.0.1/nothing/']",
            "browser.block_lists=[ads]",
        )
    return Crawled(run, site.base, lines, site)


def _index_lines(run: Path) -> list[str]:
    return [
        line
        for wdir in warc_dirs(run)
        for index in wdir.index_files()
        for line in index.read_text().splitlines()
    ]


def test_posts_are_sent_once_per_body_and_logged_with_their_method(crawled: Crawled) -> None:
    site, base = crawled.site, crawled.base
    assert site.seen[("POST", "/api/search", OWL)] == 1  # the page's repeat was not sent again
    assert site.seen[("POST", "/api/search", CAT)] == 1
    assert site.seen[("POST", "/api/form", b"q=owl+eyes&n=2")] == 1
    assert site.requests("DELETE", "/api/item/1") == 0
    posts = [line for line in crawled.lines if line.uri == base + "/api/search"]
    assert [p.status for p in posts] == [200, 200]
    for line in posts:
        assert {"browser", "method:POST"} <= set(line.annotations)
        assert line.hops == "S" and line.via == base + "/"
    page = next(line for line in crawled.lines if line.uri == base + "/")
    assert "browser:nonGetBlocked" in page.annotations  # the DELETE
    # A POST to another host is out of the crawl's scope: logged, never sent.
    assert site.seen[("POST", "/api/search", b"elsewhere")] == 0
    elsewhere = next(line for line in crawled.lines if line.uri.startswith("http://localhost:"))
    assert elsewhere.status == -5000 and "method:POST" in elsewhere.annotations


def test_the_request_records_hold_the_bodies(crawled: Crawled) -> None:
    bodies = []
    for path in sorted((crawled.run / "warcs").glob("*.warc.gz")):
        with path.open("rb") as fh:
            for record in ArchiveIterator(fh):
                uri = record.rec_headers.get_header("WARC-Target-URI")
                if record.rec_type == "request" and uri == crawled.base + "/api/search":
                    assert record.http_headers.protocol == "POST"
                    assert record.http_headers.get_header("Content-Type") == "application/json"
                    assert record.http_headers.get_header("X-Api-Key") == "k1"  # the page's own
                    bodies.append(record.content_stream().read())
    assert sorted(bodies) == sorted([OWL, CAT])


def test_the_index_keys_posts_by_body_at_crawl_time_and_after(
    crawled: Crawled, tmp_path: Path
) -> None:
    lines = _index_lines(crawled.run)
    search = sorted(line for line in lines if "/api/search" in line.split(" ", 1)[0])
    port = crawled.base.rsplit(":", 1)[1]
    assert [line.split(" ", 1)[0] for line in search] == [
        f"1,0,0,127:{port})/api/search?__wb_method=post&page=1&q=cat",
        f"1,0,0,127:{port})/api/search?__wb_method=post&page=1&q=owl",
    ]
    doc = json.loads(search[0].split(" ", 2)[2])
    assert doc["method"] == "POST" and doc["requestBody"] == "q=cat&page=1"
    form = [line for line in lines if "/api/form" in line.split(" ", 1)[0]]
    assert [line.split(" ", 1)[0] for line in form] == [
        f"1,0,0,127:{port})/api/form?__wb_method=post&n=2&q=owl%20eyes"
    ]
    # `crawler index` (the scan of the file) and cdxj-indexer --post-append agree with the crawl.
    indexer = CdxjIndexer()
    for wdir in warc_dirs(crawled.run):
        for warc in sorted(wdir.warcs.glob("*.warc.gz")):
            scanned = indexer.index(warc, tmp_path / "scan")
            library = indexer._index_with_library(warc, tmp_path / "library")
            assert scanned.index is not None and library.index is not None
            mine = scanned.index.read_text().splitlines()
            assert [line for line in mine if "__wb_method" in line] == [
                line for line in lines if "__wb_method" in line and warc.name in line
            ]
            theirs = [line.split(" ", 1)[0] for line in library.index.read_text().splitlines()]
            assert [line.split(" ", 1)[0] for line in mine] == theirs


def test_blocked_requests_never_reach_a_server_and_are_reported(crawled: Crawled) -> None:
    assert crawled.site.requests("GET", "/ads/tracker.js") == 0
    by_uri = {line.uri: line for line in crawled.lines}
    tracker = by_uri[crawled.base + "/ads/tracker.js"]
    assert tracker.status == -5007 and "browser:blocked:/ads/" in tracker.annotations
    pixel = by_uri["http://www.google-analytics.com/collect?v=1"]
    assert pixel.status == -5007 and "browser:blocked:ads" in pixel.annotations
    report = (crawled.run / "reports" / "browser-blocks-report.txt").read_text()
    rows = report.splitlines()
    assert rows[0] == "[requests] [urls] [rule]"
    assert set(rows[1:]) == {"1 1 /ads/", "1 1 ads", "0 0 surt:http://127.0.0.1/nothing/"}


@pytest.mark.e2e
@pytest.mark.timeout(240)
def test_the_posted_results_replay_through_pywb(crawled: Crawled, tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "archive"))
    import replay_support

    from crawler.archive.collection import collection_from_run
    from crawler.archive.replay import ReplayServer, find_wayback

    find_wayback()
    collection = collection_from_run(crawled.run, tmp_path / "coll")
    with replay_support.chromium() as browser, ReplayServer(collection) as server:
        probe = replay_support.ReplayBrowser(
            browser, server.prefix, replay_support.archived_statuses(crawled.run)
        )
        probe.load(crawled.base + "/")
        frame = next(f for f in probe.page.frames if "mp_/" in f.url)
        frame.wait_for_selector("#results li", timeout=20_000)
        frame.wait_for_function(
            "document.getElementById('form').textContent.length > 0", timeout=20_000
        )
        shown = frame.eval_on_selector_all("#results li", "els => els.map(e => e.textContent)")
        other = frame.text_content("#other")
        form = frame.text_content("#form")
        probe.close()
    assert shown == results("owl")
    assert other == " ".join(results("cat"))
    assert form == "form got owl eyes"
    assert probe.tally.escaped == []
