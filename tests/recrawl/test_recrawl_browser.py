"""A recrawl of a page built by JavaScript: the page answers 304, the browser does not load it
again, and the links of its rendered DOM come from the earlier capture's metadata record."""

from __future__ import annotations

from pathlib import Path

import pytest
from recrawl_support import crawl_log, not_modified

from crawler.demo.js_site import JsSite, item_uris
from tests.browser.browser_support import crawl, needs_chromium

pytestmark = [pytest.mark.integration, needs_chromium, pytest.mark.timeout(180)]


def test_the_rendered_links_of_a_304_page_come_from_its_earlier_capture(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    with JsSite(validators=True) as site:
        base = site.base
        crawl(first, [site.url("/")], "browser.enabled=true", "logging.console=false")
        shell = crawl_log(first)[base + "/"]
        assert "browser" in shell.annotations
        crawl(
            second,
            [site.url("/")],
            "browser.enabled=true",
            "logging.console=false",
            f"history.import_from={str(first)!r}",
        )
    after = crawl_log(second)
    assert base + "/" in not_modified(second)
    assert "browser" not in after[base + "/"].annotations  # not rendered again
    for uri in item_uris(base):
        assert after[uri].status in (200, 304), uri
        assert after[uri].via == crawl_log(first)[uri].via, uri
