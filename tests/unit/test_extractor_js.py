"""ExtractorJS: only string literals that are very likely URIs become X links."""

from __future__ import annotations

import time

import pytest

from crawler import CrawlURI, Recording
from processors.extract import ExtractorJS, js_links
from processors.extract.extractor_js import looks_like_uri

JS_URI = "http://site.example/static/js/app.js"


@pytest.mark.parametrize(
    "value",
    ["/path/file.html", "https://cdn.example/x", "img/x.png", "../a.css?v=2", "//cdn.example/a.js"],
)
def test_uri_like_strings_are_taken(value: str) -> None:
    assert looks_like_uri(value)


@pytest.mark.parametrize(
    "value",
    ["text/html", "use strict", "1.5", "window.location", "a/b", "/api/v1", "http://", ".png",
     "$(this).html", "<a href='x.html'>", "DOMContentLoaded"],
)  # fmt: skip
def test_other_strings_are_not(value: str) -> None:
    assert not looks_like_uri(value)


def test_script_strings_become_speculative_links() -> None:
    rec = Recording()
    rec.write_body(
        b"""var a = "https:\\/\\/x.example\\/feed.json"; load('partials/menu.html');
        el.type = "text/javascript"; var s = "escaped \\" quote";"""
    )
    curi = CrawlURI(JS_URI, status=200, content_type="application/javascript", recording=rec)
    ExtractorJS("js").process(curi)
    assert [(link.uri, link.hop) for link in curi.outlinks] == [
        ("https://x.example/feed.json", "X"),
        ("http://site.example/static/js/partials/menu.html", "X"),
    ]


def test_hostile_script_is_scanned_in_linear_time() -> None:
    # CPU time of this thread, not wall time: other processes on a busy machine (or other test
    # workers) do not count. Linear takes well under a second; quadratic would take hours.
    started = time.thread_time()
    for text in ('"' + "\\" * 1_000_001, "'a/b.html" * 200_000, '"' * 1_000_000):
        list(js_links(text))
    assert time.thread_time() - started < 5
