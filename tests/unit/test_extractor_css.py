"""ExtractorCSS: url() and @import of stylesheets become E links; hostile CSS is linear."""

from __future__ import annotations

import time

from crawler import CrawlURI, Recording
from processors.extract import ExtractorCSS, css_links

CSS_URI = "http://site.example/static/css/site.css"


def stylesheet(body: bytes, content_type: str | None = "text/css", uri: str = CSS_URI) -> CrawlURI:
    rec = Recording()
    rec.write_body(body)
    curi = CrawlURI(uri, status=200, content_type=content_type, recording=rec)
    ExtractorCSS("css").process(curi)
    return curi


def test_url_and_import_forms_are_embeds_resolved_against_the_stylesheet() -> None:
    curi = stylesheet(
        b"""@import "base.css"; @import url('/print.css') print;
        body { background: #fff url(../img/bg.png) repeat-x; }
        @font-face { src: url( "fonts/f.woff2" ) format("woff2"), url(data:font/woff;base64,AA) }
        .x { background-image: URL(sprite.svg#icon) }"""
    )
    assert [(link.uri, link.hop, link.context) for link in curi.outlinks] == [
        ("http://site.example/static/css/base.css", "E", "css/@import"),
        ("http://site.example/print.css", "E", "css/@import"),
        ("http://site.example/static/img/bg.png", "E", "css/url()"),
        ("http://site.example/static/css/fonts/f.woff2", "E", "css/url()"),
        ("http://site.example/static/css/sprite.svg#icon", "E", "css/url()"),
    ]


def test_only_stylesheets_are_examined() -> None:
    assert stylesheet(b"a{b:url(x.png)}", content_type="text/html").outlinks == []
    by_name = stylesheet(b"a{b:url(x.png)}", content_type=None, uri="http://s.example/a.css?v=1")
    assert [link.uri for link in by_name.outlinks] == ["http://s.example/x.png"]


def test_hostile_css_is_scanned_in_linear_time() -> None:
    # CPU time of this thread, not wall time: other processes on a busy machine (or other test
    # workers) do not count. Linear takes well under a second; quadratic would take hours.
    started = time.thread_time()
    for body in ("url(" * 500_000, "@import " * 300_000, 'url("' + "a" * 2_000_000):
        list(css_links(body))
    assert time.thread_time() - started < 5
    assert stylesheet(b"\xff\xfe\x00garbage" * 1000, content_type="text/css").outlinks == []
