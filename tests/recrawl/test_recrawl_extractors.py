"""Every extractor finds its links in a 304's stored payload as if the page had been fetched:
HTML (gzip-encoded too), CSS, JS, PDF, RSS and sitemaps. Identical-payload revisits (no
validators) extract links too, and a stored capture that is gone is annotated, not fatal."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import pytest
from recrawl_support import NOT_MODIFIED, crawl_log, not_modified, reached
from support.pdf_samples import link_pdf
from validator_site import Answer, ValidatorSite

from crawler.control.controller import CrawlController
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

HTML = {"Content-Type": "text/html"}
RSS = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><link>/</link>
<item><title>a</title><link>/from-rss.html</link></item></channel></rss>"""
SITEMAP = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>/from-sitemap.html</loc></url></urlset>"""


def html(*links: str, extra: str = "") -> bytes:
    anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
    return f"<html><head>{extra}</head><body>{anchors}</body></html>".encode()


def table() -> dict[str, Answer]:
    leaves = [
        "/from-pdf.html",
        "/from-rss.html",
        "/from-sitemap.html",
        "/from-gzip.html",
        "/from-js.html",
        "/img/from-css.png",
    ]
    pages: dict[str, Answer] = {
        "/": (
            200,
            HTML,
            html(
                "/doc.pdf",
                "/feed.rss",
                "/zipped.html",
                extra='<link rel="stylesheet" href="/style.css"><script src="/app.js"></script>',
            ),
        ),
        "/robots.txt": (200, {"Content-Type": "text/plain"}, b"User-agent: *\nDisallow:\n"),
        "/sitemap.xml": (200, {"Content-Type": "application/xml"}, SITEMAP),
        "/doc.pdf": (200, {"Content-Type": "application/pdf"}, link_pdf("/from-pdf.html")),
        "/feed.rss": (200, {"Content-Type": "application/rss+xml"}, RSS),
        "/zipped.html": (
            200,
            {**HTML, "Content-Encoding": "gzip"},
            gzip.compress(html("/from-gzip.html")),
        ),
        "/style.css": (
            200,
            {"Content-Type": "text/css"},
            b"body { background: url(img/from-css.png) }",
        ),
        "/app.js": (
            200,
            {"Content-Type": "application/javascript"},
            b'var next = "/from-js.html";',
        ),
    }
    for leaf in leaves:
        pages[leaf] = (200, HTML, html()) if leaf.endswith(".html") else (200, {}, b"PNG")
    return pages


@pytest.fixture
def site() -> Iterator[ValidatorSite]:
    with ValidatorSite(table()) as served:
        sitemap_line = f"Sitemap: {served.origin}/sitemap.xml\n".encode()
        status, headers, body = table()["/robots.txt"]
        served.set("/robots.txt", (status, headers, body + sitemap_line))
        yield served


def crawl(site: ValidatorSite, run_dir: Path, *extra: str) -> None:
    order = load_order(
        EXAMPLE,
        [
            f"seeds.urls=['{site.origin}/']",
            "seeds.file=null",
            "logging.console=false",
            "frontier.politeness.delay_factor=0",
            "frontier.politeness.min_delay_ms=0",
            "frontier.politeness.max_delay_ms=0",
            "chains.extract.extractor_js.enabled=true",
            *extra,
        ],
    )
    assert CrawlController(order, run_dir, install_signals=False).run() == 0


def leaves_via(run_dir: Path, origin: str) -> dict[str, tuple[str, str | None]]:
    """Each ``/from-*`` URI: (hop path, via path)."""
    return {
        uri.removeprefix(origin): (line.hops, (line.via or "").removeprefix(origin))
        for uri, line in crawl_log(run_dir).items()
        if "/from-" in uri
    }


def test_each_extractor_reads_the_stored_payload_of_a_304(
    site: ValidatorSite, tmp_path: Path
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    crawl(site, first)
    found = leaves_via(first, site.origin)
    assert set(found) == {p for p in table() if "/from-" in p}
    crawl(site, second, f"history.import_from={str(first)!r}")
    assert reached(second) == reached(first)
    assert leaves_via(second, site.origin) == found
    documents = ["/", "/doc.pdf", "/feed.rss", "/zipped.html", "/style.css", "/app.js"]
    documents.append("/sitemap.xml")
    assert {site.origin + p for p in documents} <= not_modified(second)
    for path in documents:
        assert site.statuses(path) == [200, 304], path
    log = crawl_log(second)
    assert log[site.origin + "/doc.pdf"].mime == "application/pdf"
    report = (second / "reports" / "processors-report.txt").read_text()
    assert "earlier payloads loaded for 304s:" in report


def test_identical_payloads_without_validators_still_yield_their_links(tmp_path: Path) -> None:
    with ValidatorSite(table(), validators=False) as site:
        first, second = tmp_path / "first", tmp_path / "second"
        crawl(site, first)
        crawl(site, second, f"history.import_from={str(first)!r}")
    assert reached(second) == reached(first)
    assert leaves_via(second, site.origin) == leaves_via(first, site.origin)
    log = crawl_log(second)
    assert "duplicate:digest" in log[site.origin + "/"].annotations
    assert not not_modified(second)


def test_a_stored_capture_that_is_gone_is_annotated_and_the_crawl_goes_on(
    site: ValidatorSite, tmp_path: Path
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    crawl(site, first)
    for warc in (first / "warcs").iterdir():
        warc.unlink()
    crawl(site, second, f"history.import_from={str(first)!r}")
    line = crawl_log(second)[site.origin + "/"]
    assert line.status == 304
    assert NOT_MODIFIED in line.annotations and "earlierPayload:missing" in line.annotations
    events = (second / "logs" / "crawler.jsonl").read_text()
    assert "earlier_payload_unread" in events
