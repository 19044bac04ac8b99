"""The JS site captured through the browser replays through pywb in Chromium: the shell page,
its scripts' API calls, the "Load more" page and the scroll feed are answered from the archive
(nothing missing, nothing escaping to the live site, which is stopped before replay), and the
replayed page shows the script-built item links."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from browser_support import crawl, needs_chromium

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "archive"))
import replay_support  # the replay tests' helpers: pywb in Chromium

pytestmark = [pytest.mark.e2e, needs_chromium, pytest.mark.timeout(240)]


def test_the_js_shell_replays_from_the_archive(tmp_path: Path) -> None:
    from crawler.archive.collection import collection_from_run
    from crawler.archive.replay import ReplayServer, find_wayback
    from crawler.demo.js_site import JsSite

    find_wayback()  # fails plainly when pywb (make install's .replay-venv) is missing
    run = tmp_path / "run"
    with JsSite() as site:
        base = site.base
        crawl(run, [site.url("/")], "browser.enabled=true")
    collection = collection_from_run(run, tmp_path / "coll")
    with replay_support.chromium() as browser, ReplayServer(collection) as server:
        probe = replay_support.ReplayBrowser(
            browser, server.prefix, replay_support.archived_statuses(run)
        )
        probe.load(base + "/")
        frame = next(f for f in probe.page.frames if "mp_/" in f.url)
        frame.wait_for_selector("a[href*='/item/5.html']", timeout=20_000)
        for _ in range(4):
            frame.evaluate("window.scrollTo(0, document.scrollingElement.scrollHeight)")
            probe.page.wait_for_timeout(400)
        frame.click("button", timeout=5_000)
        frame.wait_for_selector("a[href*='/item/10.html']", timeout=20_000)
        links = frame.eval_on_selector_all("a", "els => els.map(e => e.href)")
        probe.close()
    tally = probe.tally
    print(f"replay of the JS shell: {tally.summary()}")
    assert sum("/item/" in link for link in links) >= 10
    assert [u for u in tally.missing if "/private/" not in u] == []  # robots.txt-refused only
    assert tally.escaped == []
    assert tally.failed == []
