"""A real crawl finds pages listed only in a gzipped sitemap named by robots.txt (M hops), plus
embeds from CSS, Link headers and inline styles, and writes scope.log when asked."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from support.crawllog_parser import parse_file

from crawler.control.controller import CrawlController
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


def site(origin: str) -> dict[str, tuple[str, bytes, list[tuple[str, str]]]]:
    index = (
        '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<sitemap><loc>/maps/pages.xml.gz</loc></sitemap></sitemapindex>"
    )
    pages = (
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{origin}/hidden-1.html</loc></url><url><loc>{origin}/hidden-2.html</loc></url>"
        "<url><loc>http://out-of-scope.invalid/page.html</loc></url></urlset>"
    )
    html = "text/html; charset=utf-8"
    return {
        "/robots.txt": (
            "text/plain",
            b"User-agent: *\nDisallow:\nSitemap: /sitemap-index.xml\n",
            [],
        ),
        "/sitemap-index.xml": ("application/xml", index.encode(), []),
        "/maps/pages.xml.gz": ("application/gzip", gzip.compress(pages.encode()), []),
        "/": (
            html,
            b'<html><head><link rel="stylesheet" href="/s.css"></head>'
            b'<body><div style="background: url(/inline.png)">x</div></body></html>',
            [("Link", "</preloaded.js>; rel=preload; as=script")],
        ),
        "/s.css": ("text/css", b"@import url(more.css); body { background: url(bg.png) }", []),
        "/more.css": ("text/css", b"", []),
        "/hidden-1.html": (html, b"<html><body>one</body></html>", []),
        "/hidden-2.html": (html, b"<html><body>two</body></html>", []),
        "/favicon.ico": ("image/x-icon", b"\0\0\1\0", []),
        "/bg.png": ("image/png", b"png", []),
        "/inline.png": ("image/png", b"png", []),
        "/preloaded.js": ("text/javascript", b"var x = 1;", []),
    }


@pytest.fixture
def origin() -> Iterator[str]:
    table: dict[str, tuple[str, bytes, list[tuple[str, str]]]] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            entry = table.get(self.path)
            status = 200 if entry else 404
            ctype, body, headers = entry or ("text/plain", b"not found", [])
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    table.update(site(url))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield url
    server.shutdown()
    server.server_close()


def test_sitemap_pages_css_and_header_embeds_are_crawled(origin: str, tmp_path: Path) -> None:
    order = load_order(
        EXAMPLE,
        [
            f"seeds.urls=['{origin}/']",
            "seeds.file=null",
            "toe_threads=3",
            "logging.console=false",
            "chains.post.candidates.params.log_scope_decisions=true",
        ],
    )
    controller = CrawlController(order, tmp_path / "run", install_signals=False)
    assert controller.run() == 0
    lines = {
        line.uri.removeprefix(origin): line
        for line in parse_file(tmp_path / "run" / "logs" / "crawl.log")
    }
    assert lines["/hidden-1.html"].hops == "PMMM" and lines["/hidden-1.html"].status == 200
    assert lines["/hidden-2.html"].via == origin + "/maps/pages.xml.gz"
    assert lines["/maps/pages.xml.gz"].hops == "PMM"
    for embed in ("/s.css", "/more.css", "/bg.png", "/inline.png", "/preloaded.js"):
        assert lines[embed].status == 200 and lines[embed].hops[-1] == "E", embed
    assert lines["/favicon.ico"].hops[-1] == "I"
    assert not any("out-of-scope" in uri for uri in lines)
    scope_log = (tmp_path / "run" / "logs" / "scope.log").read_text()
    assert " REJECT http://out-of-scope.invalid/page.html\n" in scope_log
    assert f" SurtPrefixedDecideRule ACCEPT {origin}/hidden-1.html\n" in scope_log
