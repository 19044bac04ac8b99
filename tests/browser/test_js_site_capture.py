"""The JavaScript test site crawled without and with the browser: what HTTP alone misses, and
that with the browser every URL Chromium loads is captured once, with 200, and logged."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_support import crawl, live_load, needs_chromium, response_counts, warc_records

from crawler.demo.js_site import JsSite, item_uris

pytestmark = [pytest.mark.integration, needs_chromium, pytest.mark.timeout(120)]


def test_without_the_browser_the_script_built_links_are_missed(tmp_path: Path) -> None:
    with JsSite() as site:
        lines = crawl(tmp_path / "run", [site.url("/")])
        base = site.base
    uris = {line.uri for line in lines}
    assert base + "/" in uris
    assert not uris & set(item_uris(base))
    assert not any("browser" in line.annotations for line in lines)
    assert not (tmp_path / "run" / "state" / "browser-pids").exists()


def test_with_the_browser_everything_chromium_loads_is_captured_once(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with JsSite() as site:
        base = site.base
        lines = crawl(run, [site.url("/")], "browser.enabled=true", "browser.screenshots=true")
        live = live_load(site.url("/"))
    by_uri = {line.uri: line for line in lines}
    # The links exist only in the rendered DOM: the API's items, "Load more" and the scroll feed.
    for uri in item_uris(base):
        assert by_uri[uri].status == 200, uri
    shell = by_uri[base + "/"]
    assert shell.status == 200
    assert "browser" in shell.annotations and "browser:auto:spaRoot" in shell.annotations
    # Every URL a live Chromium requests on the page was captured with 200 through the browser,
    # except what robots.txt forbids, which the browser was refused and the log says so.
    live_subresources = {u for u in live if u != base + "/" and not u.endswith("favicon.ico")}
    expected = ["/js/app.js", "/css/theme.css", "/fonts/demo.woff2", "/api/items?page=3"]
    expected += ["/api/feed?offset=10", "/img/lazy.png", "/img/inserted.png", "/img/theme-bg.png"]
    assert {base + p for p in expected} <= live_subresources
    for uri in live_subresources:
        line = by_uri[uri]
        if "/private/" in uri:
            assert line.status == -9998 and "browser" in line.annotations
            continue
        assert line.status == 200, uri
        assert "browser" in line.annotations and line.via == base + "/" and line.hops == "E", uri
    # Each resource once: one crawl.log line and one response (or revisit) record per URI.
    assert len(lines) == len(by_uri)
    counts = response_counts(run)
    assert all(counts[uri] == 1 for uri in live_subresources if "/private/" not in uri)
    assert all(n == 1 for n in counts.values())
    shots = [r for r in warc_records(run) if r[0] == "resource"]
    assert shots == [
        ("resource", "urn:screenshot:" + base + "/", "image/png"),
        ("resource", "urn:text:" + base + "/", "text/plain; charset=utf-8"),
    ]
    report = (run / "reports" / "processors-report.txt").read_text()
    assert "pages through the browser: 1 (auto 1)" in report
