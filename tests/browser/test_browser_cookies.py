"""Cookies between the browser and the crawl: a cookie a page's script sets is sent with the
page's later requests (fetched by the crawler's own client) and kept in the crawl's jar, so
pages fetched over HTTP afterwards carry it too."""

from __future__ import annotations

from pathlib import Path

from browser_support import crawl, needs_chromium

from crawler.demo.js_site import GATED_PAGES, JsSite
from processors.cookies.cookie_store import CookieStore


@needs_chromium
def test_a_script_set_cookie_reaches_sub_resources_and_later_http_fetches(tmp_path: Path) -> None:
    with JsSite() as site:
        lines = crawl(
            tmp_path / "run",
            [site.url("/consent.html")],
            "browser.enabled=true",
            "robots.policy=ignore",
            "chains.extract.extractor_http.params.infer_favicon=false",
        )
    status = {line.uri: line.status for line in lines}
    assert status[site.url("/api/gated")] == 200
    gated = [site.url(f"/gated/{k}.html") for k in range(1, GATED_PAGES + 1)]
    # found only in the rendered DOM, fetched over HTTP with the cookie from the jar
    assert [status.get(u) for u in gated] == [200] * GATED_PAGES
    assert not any("browser" in line.annotations for line in lines if line.uri in gated)
    store = CookieStore.open(tmp_path / "run" / "state" / "cookies.sqlite")
    try:
        assert [(c.name, c.value) for c in store.cookies_for(site.url("/"))] == [("consent", "yes")]
    finally:
        store.close()


@needs_chromium
def test_without_the_browser_the_gated_api_refuses(tmp_path: Path) -> None:
    with JsSite() as site:
        lines = crawl(
            tmp_path / "run",
            [site.url("/consent.html"), site.url("/gated/1.html")],
            "robots.policy=ignore",
        )
    status = {line.uri: line.status for line in lines}
    assert status[site.url("/gated/1.html")] == 403
    assert site.url("/api/gated") not in status
