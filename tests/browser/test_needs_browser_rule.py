"""The "needs a browser" test on page bytes: script-built shells are sent, ordinary pages not."""

from __future__ import annotations

import pytest

from crawler import CrawlURI, Recording
from crawler.decide import DecideResult
from processors.browser import NeedsBrowserDecideRule, script_built_reason

pytestmark = pytest.mark.timeout(10)

ARTICLE = (
    b"<html><head><script src=/a.js></script></head><body><h1>News</h1>"
    + b"<p>" + b"Plenty of words written on the server. " * 30 + b"</p>"
    + b"".join(b'<a href="/p%d.html">p</a>' % i for i in range(5))
    + b"</body></html>"
)  # fmt: skip


@pytest.mark.parametrize(
    ("html", "reason"),
    [
        (b'<html><body><div id="app"></div><script src="/app.js"></script>', "spaRoot"),
        (b"<body><div id='root'>  </div></body>", "spaRoot"),
        (b'<script id="__NEXT_DATA__" type="application/json">{}</script>', "nextData"),
        (b"<script>window.__NUXT__={}</script>", "nuxtData"),
        (b"<body><noscript>You need to enable JavaScript to run this app.</noscript>", "noscript"),
        (b"<body><main></main><script src=/bundle.js></script><p>Loading</p>", "littleText"),
        (ARTICLE, None),
        (b"<html><body><p>short page without any script</p></body></html>", None),
    ],
)
def test_script_built_reason(html: bytes, reason: str | None) -> None:
    assert script_built_reason(html) == reason


def _page(body: bytes, mime: str = "text/html") -> CrawlURI:
    curi = CrawlURI("http://example.org/")
    curi.status = curi.http_status = 200
    curi.content_type = mime
    rec = Recording()
    rec.write_body(body)
    curi.recording = rec
    return curi


def test_the_rule_accepts_script_built_html_only() -> None:
    rule = NeedsBrowserDecideRule()
    assert rule.decide(_page(b'<div id="app"></div><script src=x.js></script>')) is (
        DecideResult.ACCEPT
    )
    assert rule.decide(_page(ARTICLE)) is DecideResult.NONE
    assert rule.decide(_page(b'<div id="app"></div>', "text/css")) is DecideResult.NONE
