"""A real crawl follows links found in PDFs and in RSS and Atom feeds (L hops through the
document), records hostile PDFs with an annotation and goes on, and ends ftp:/sftp:/whois:
links in uri-errors.log (the default scope lets through only what the crawler fetches)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.crawllog_parser import parse_file
from support.pdf_samples import (
    broken_pdf,
    deeply_nested_pdf,
    encrypted_pdf,
    link_pdf,
    xref_stream_bomb,
)
from support.route_server import NOT_FOUND, Answer, RouteServer, page

from crawler.control.controller import CrawlController
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

RSS = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
<link>/</link><item><title>a</title><link>/news/rss-item.html</link>
<guid isPermaLink="true">/news/rss-guid.html</guid></item></channel></rss>"""
ATOM = b"""<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>
<entry><title>e</title><link href="/news/atom-entry.html"/><id>urn:x</id></entry></feed>"""


def route(host: str, path: str) -> Answer:
    pdf = {"Content-Type": "application/pdf"}
    table: dict[str, Answer] = {
        "/": page(
            "/doc.pdf",
            "/feed.rss",
            "/feed.atom",
            "/hostile/encrypted.pdf",
            "/hostile/broken.pdf",
            "/hostile/deep.pdf",
            "/hostile/bomb.pdf",
            "ftp://127.0.0.1/pub/file",
            "sftp://127.0.0.1/file",
            "whois://whois.example/x",
        ),
        "/doc.pdf": (200, pdf, link_pdf("/from-pdf.html", "after-pdf.html")),
        "/from-pdf.html": page(),
        "/after-pdf.html": page(),
        "/feed.rss": (200, {"Content-Type": "application/rss+xml"}, RSS),
        "/feed.atom": (200, {"Content-Type": "application/atom+xml"}, ATOM),
        "/news/rss-item.html": page(),
        "/news/rss-guid.html": page(),
        "/news/atom-entry.html": page(),
        "/hostile/encrypted.pdf": (200, pdf, encrypted_pdf()),
        "/hostile/broken.pdf": (200, pdf, broken_pdf()),
        "/hostile/deep.pdf": (200, pdf, deeply_nested_pdf()),
        "/hostile/bomb.pdf": (200, pdf, xref_stream_bomb()),
    }
    return table.get(path, NOT_FOUND)


def test_pdf_and_feed_links_are_crawled_and_hostile_pdfs_annotated(tmp_path: Path) -> None:
    with RouteServer(route) as server:
        origin = server.origin()
        order = load_order(
            EXAMPLE,
            [f"seeds.urls=['{origin}/']", "seeds.file=null", "logging.console=false"],
        )
        controller = CrawlController(order, tmp_path / "run", install_signals=False)
        assert controller.run() == 0
    logs = tmp_path / "run" / "logs"
    lines = {line.uri.removeprefix(origin): line for line in parse_file(logs / "crawl.log")}
    for path, via in [
        ("/from-pdf.html", "/doc.pdf"),
        ("/after-pdf.html", "/doc.pdf"),
        ("/news/rss-item.html", "/feed.rss"),
        ("/news/rss-guid.html", "/feed.rss"),
        ("/news/atom-entry.html", "/feed.atom"),
    ]:
        assert lines[path].status == 200, path
        assert lines[path].hops == "LL" and lines[path].via == origin + via, path
    assert "pdfEncrypted" in lines["/hostile/encrypted.pdf"].annotations
    assert "pdfError" in lines["/hostile/broken.pdf"].annotations
    assert "pdfError" in lines["/hostile/deep.pdf"].annotations
    assert "pdfError" in lines["/hostile/bomb.pdf"].annotations
    for path in ("/hostile/encrypted.pdf", "/hostile/broken.pdf", "/hostile/deep.pdf"):
        assert lines[path].status == 200, path
    assert not any(uri.startswith(("ftp:", "sftp:", "whois:")) for uri in lines)
    errors = (logs / "uri-errors.log").read_text()
    for scheme, uri in [
        ("ftp", "ftp://127.0.0.1/pub/file"),
        ("sftp", "sftp://127.0.0.1/file"),
        ("whois", "whois://whois.example/x"),
    ]:
        assert f"\"unsupported scheme '{scheme}'\" {uri}\n" in errors
    report = (tmp_path / "run" / "reports" / "processors-report.txt").read_text()
    assert "1 PDF workers started, 0 killed" in report
