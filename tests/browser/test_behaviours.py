"""Behaviours, profiles' localStorage, screenshots and page text: one browser crawl of the
behaviour site (tests/browser/behave_site.py) with everything on, read from several sides."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from behave_site import BehaveSite
from browser_support import crawl, needs_chromium, warc_records
from support.crawllog_parser import CrawlLogLine
from warcio.archiveiterator import ArchiveIterator

pytestmark = [pytest.mark.integration, needs_chromium, pytest.mark.timeout(240)]

EXAMPLE_JS = Path(__file__).resolve().parents[2] / "conf" / "behaviours" / "example.js"
SPIN = "// never returns: a busy loop\nasync () => { while (true) {} }\n"
OOPS = "async (ctx) => { throw new Error('broken on purpose'); };\n"
FETCHER = """/* makes a request, clicks and scrolls through the helpers */
async (ctx) => {
  await ctx.scrollToBottom();
  await ctx.click('#nothing-here');
  await fetch('/custom/made?from=' + encodeURIComponent(new URL(ctx.url).pathname));
}
"""
# A stand-in of browsertrix-behaviors' bundle: it defines self.__bx_behaviors as the real one.
BX = """self.__bx_behaviors = {
  init(opts) { this.opts = opts; },
  async run() { await fetch('/custom/bx?timeout=' + this.opts.timeout); },
};
"""


class Crawled:
    def __init__(self, run: Path, lines: list[CrawlLogLine], site: BehaveSite) -> None:
        self.run, self.lines, self.site = run, lines, site
        self.by_path = {line.uri.removeprefix(site.base): line for line in lines}


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Crawled:
    root = tmp_path_factory.mktemp("behave")
    for name, source in [("spin.js", SPIN), ("oops.js", OOPS), ("fetcher.js", FETCHER)]:
        (root / name).write_text(source)
    (root / "bx.js").write_text(BX)
    with BehaveSite() as site:
        profile = {
            "cookies": [],
            "origins": [
                {"origin": site.base, "localStorage": [{"name": "greeting", "value": "hello"}]}
            ],
        }
        (root / "profile.json").write_text(json.dumps(profile))
        run = root / "run"
        lines = crawl(
            run,
            [site.url("/plain.html"), site.url("/spa.html")],
            "browser.enabled=true",
            f"browser.behaviours=['{root}/spin.js', '{root}/oops.js', '{root}/fetcher.js', "
            f"'{EXAMPLE_JS}']",
            f"browser.browsertrix_behaviors={root}/bx.js",
            "browser.behaviour_timeout_s=1",
            "browser.page_budget_s=120",  # a loaded machine must not cut the behaviours short
            f"browser.profile={root}/profile.json",
            "browser.screenshots=[view, full, thumbnail]",
            "archive.wacz=true",
        )
        return Crawled(run, lines, site)


def test_autoplay_makes_the_media_request_in_the_page(crawled: Crawled) -> None:
    media = crawled.by_path["/media/clip.webm"]
    assert media.status == 200 and "browser" in media.annotations
    assert media.via == crawled.site.url("/spa.html")
    assert crawled.site.hits["/media/clip.webm"] == 1
    assert "browser:mediaPlayed" in crawled.by_path["/spa.html"].annotations


def test_click_to_expand_finds_the_hidden_links_and_follows_no_other_page(
    crawled: Crawled,
) -> None:
    for path in ["/hidden/details.html", "/hidden/accordion.html", "/hidden/tab.html"]:
        assert crawled.by_path[path].status == 200, path
        assert crawled.by_path[path].via == crawled.site.url("/spa.html"), path
    page = crawled.by_path["/spa.html"]
    assert "browser:expanded" in page.annotations
    assert "browser:navigationBlocked" not in page.annotations
    # The link was left alone by the behaviour; the crawl reaches it as an outlink only.
    assert "browser" not in crawled.by_path["/elsewhere.html"].annotations


def test_custom_behaviours_run_and_a_hanging_or_failing_one_is_only_a_note(
    crawled: Crawled,
) -> None:
    page = crawled.by_path["/spa.html"]
    assert "behaviour:spin:timeout" in page.annotations
    assert "behaviour:oops:error" in page.annotations
    assert not [n for n in page.annotations if n.startswith("behaviour:example")]
    assert "browser:timeout" not in page.annotations and "browser:crash" not in page.annotations
    # The behaviours after the busy loop still ran in the same tab, in order.
    made = crawled.by_path["/custom/made?from=%2Fspa.html"]
    assert made.status == 200 and "browser" in made.annotations
    bx = crawled.by_path["/custom/bx?timeout=1000"]
    assert bx.status == 200 and "browser" in bx.annotations
    # The HTTP-only page went to no browser: no behaviour ran there.
    assert crawled.site.hits["/custom/made?from=%2Fplain.html"] == 0


def test_the_profile_localstorage_reaches_the_page(crawled: Crawled) -> None:
    line = crawled.by_path["/ls/hello"]
    assert line.status == 200 and "browser" in line.annotations


def test_screenshots_are_png_and_jpeg_resource_records(crawled: Crawled) -> None:
    page = crawled.site.url("/spa.html")
    found: dict[str, tuple[str | None, bytes]] = {}
    for path in sorted((crawled.run / "warcs").glob("*.warc.gz")):
        with path.open("rb") as fh:
            for record in ArchiveIterator(fh):
                uri = record.rec_headers.get_header("WARC-Target-URI") or ""
                if record.rec_type == "resource" and uri.endswith(page):
                    found[uri] = (record.content_type, record.content_stream().read())
    view, mime = found["urn:screenshot:" + page], "image/png"
    assert view[0] == mime and view[1].startswith(b"\x89PNG\r\n\x1a\n")
    full = found["urn:fullPage:" + page]
    assert full[0] == mime and full[1].startswith(b"\x89PNG\r\n\x1a\n")
    thumb = found["urn:thumbnail:" + page]
    assert thumb[0] == "image/jpeg" and thumb[1].startswith(b"\xff\xd8\xff")
    assert len(thumb[1]) < len(view[1])
    report = (crawled.run / "reports" / "processors-report.txt").read_text()
    assert (
        "resource records (screenshots, text): fullPage 1, screenshot 1, text 1, thumbnail 1"
        in report
    )
    # The plain page was not in the browser: no screenshot of it.
    assert not any(
        u.endswith("/plain.html") for _, u, _ in warc_records(crawled.run) if "urn:" in u
    )


def test_pages_jsonl_has_the_text_of_a_browser_page_and_of_an_http_page(crawled: Crawled) -> None:
    with zipfile.ZipFile(crawled.run / "example.wacz") as package:
        lines = package.read("pages/pages.jsonl").decode().splitlines()
    pages = {p["url"]: p for p in map(json.loads, lines[1:])}
    spa = pages[crawled.site.url("/spa.html")]
    assert "kingfishers dive for fish" in spa["text"]  # only in the rendered DOM
    plain = pages[crawled.site.url("/plain.html")]
    assert "Herons wade in shallow water" in plain["text"] and plain["title"] == "Plain page"
    assert not any(url.startswith("urn:") for url in pages)
