"""Hostile pages in the browser end within their budget with a status and an annotation, and
the crawl goes on: never-settling network, pop-ups and dialogs, navigating away, websockets,
downloads, endless scrolling, and a renderer that hangs (killed, its browser replaced)."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_support import crawl, needs_chromium

from crawler.demo.js_site import BAD, JsSite

pytestmark = [pytest.mark.integration, needs_chromium, pytest.mark.timeout(150)]

EXPECTED = {
    "never-settles": "browser:neverIdle",
    # window.open without a user gesture is stopped by Chromium's pop-up blocker; the dialogs
    # (alert, confirm) are dismissed
    "popup": "browser:dialogDismissed",
    "navigate": "browser:navigationBlocked",
    "websocket": "browser:websocketClosed",
    "endless": "browser:scrollLimit",
    "hang": "browser:timeout",
}


def test_hostile_pages_end_with_an_annotation_and_the_crawl_goes_on(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with JsSite() as site:
        seeds = [site.url(f"/bad/{name}.html") for name in BAD] + [site.url("/item/1.html")]
        lines = crawl(
            run, seeds, "browser.enabled=true", "browser.all_html=true",
            "browser.page_budget_s=4", "browser.max_scrolls=6", "browser.idle_ms=200",
            "browser.pages_per_browser=3",
        )  # fmt: skip
        base = site.base
    by_uri = {line.uri: line for line in lines}
    for name, note in EXPECTED.items():
        line = by_uri[f"{base}/bad/{name}.html"]
        assert line.status == 200, name
        assert "browser" in line.annotations and note in line.annotations, (name, line.annotations)
    # The download page ends too, and the plain page seeded after all of them was loaded.
    assert "browser" in by_uri[f"{base}/bad/download.html"].annotations
    assert "browser:html" in by_uri[f"{base}/item/1.html"].annotations
    report = (run / "reports" / "processors-report.txt").read_text()
    assert "killed 1" in report  # the hung page's browser was replaced
    assert "recycled" in report  # and browsers that loaded three pages were too
    assert not (run / "state" / "browser-pids").read_text(encoding="utf-8").strip()
