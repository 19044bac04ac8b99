"""A renderer that dies under its page (killed here, as an out-of-memory kill would) ends the
page with ``browser:crash``; the crawl goes on to the next page with the same browser pool."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest
from browser_support import crawl, needs_chromium

from crawler.demo.js_site import JsSite
from processors.browser.chromium_process import PID_FILE, _group_members

pytestmark = [pytest.mark.integration, needs_chromium, pytest.mark.timeout(90)]


def _renderers(group: int) -> list[int]:
    found = []
    for pid, _ in _group_members(group):
        try:
            if b"--type=renderer" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except OSError:
            continue
    return found


def test_a_crashed_renderer_ends_its_page_with_an_annotation(tmp_path: Path) -> None:
    run = tmp_path / "run"
    stop = threading.Event()
    killed: list[int] = []

    def kill_renderers() -> None:
        # The hanging page spins its renderer; kill every renderer of the browser as it appears.
        pid_file = run / "state" / PID_FILE
        while not stop.is_set():
            text = pid_file.read_text() if pid_file.exists() else ""
            if text.strip():
                for pid in _renderers(int(text.split()[0])):
                    if pid not in killed:
                        os.kill(pid, signal.SIGKILL)
                        killed.append(pid)
            time.sleep(0.5)

    killer = threading.Thread(target=kill_renderers, daemon=True)
    killer.start()
    try:
        with JsSite() as site:
            lines = crawl(
                run, [site.url("/bad/hang.html")], "browser.enabled=true",
                "browser.all_html=true", "browser.page_budget_s=20",
            )  # fmt: skip
            base = site.base
    finally:
        stop.set()
        killer.join(5)
    assert killed
    by_uri = {line.uri: line for line in lines}
    page = by_uri[base + "/bad/hang.html"]
    assert page.status == 200
    assert "browser:crash" in page.annotations, page.annotations
