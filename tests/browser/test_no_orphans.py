"""No Chromium outlives its crawl: ``kill -9`` of a crawl takes its browsers along (the kernel's
parent-death signal), and whatever a killed crawl still left is killed when the next one starts
(``state/browser-pids``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from browser_support import CHROMIUM, EXAMPLE, ROOT, needs_chromium, wait_gone
from support.crawllog_parser import parse_file

from crawler.demo.js_site import JsSite
from processors.browser.chromium_process import (
    PID_FILE,
    ChromiumProcess,
    _group_members,
    reap_orphans,
)

pytestmark = [pytest.mark.integration, needs_chromium, pytest.mark.timeout(90)]


def test_kill_9_of_a_crawl_leaves_no_chromium(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with JsSite() as site:
        sets = [f"seeds.urls=['{site.url('/bad/hang.html')}']", "seeds.file=null"]
        sets += ["browser.enabled=true", "browser.all_html=true", "browser.page_budget_s=60"]
        args = [sys.executable, "-m", "crawler", "run", str(EXAMPLE), "--run-dir", str(run)]
        for s in sets:
            args += ["--set", s]
        proc = subprocess.Popen(
            args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            pid_file = run / "state" / PID_FILE
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not (
                pid_file.exists() and pid_file.read_text().strip()
            ):
                time.sleep(0.1)
            group = int(pid_file.read_text().split()[0])
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and len(_group_members(group)) < 2:
                time.sleep(0.1)
            members = [pid for pid, _ in _group_members(group)]
            assert members, "the crawl's Chromium is running"
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert wait_gone(members) == []
        # Resumed, the crawl loads the page again (now with a short budget: it hangs, so it is
        # killed with its browser) and ends leaving no Chromium and an empty list.
        resume = [sys.executable, "-m", "crawler", "resume", str(run), "--no-display"]
        resume += ["--set", "browser.page_budget_s=2"]
        done = subprocess.run(
            resume, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60
        )
        assert done.returncode == 0
    page = [
        line for line in parse_file(run / "logs" / "crawl.log") if line.uri.endswith("hang.html")
    ]
    assert len(page) == 1 and page[0].status == 200
    assert {"browser:timeout", "browser:loadTimeout"} & set(page[0].annotations)
    # Every browser of the resumed crawl was killed and crossed off the list.
    assert not (run / "state" / PID_FILE).read_text().strip()
    assert reap_orphans(run / "state") == 0


def test_the_next_start_kills_chromium_a_killed_crawl_left(tmp_path: Path) -> None:
    state = tmp_path / "state"
    launched: list[ChromiumProcess] = []
    done = threading.Event()

    def launcher() -> None:  # a live launching thread: the parent-death signal does not fire
        launched.append(ChromiumProcess(CHROMIUM, state))
        done.wait(60)

    thread = threading.Thread(target=launcher, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not launched and time.monotonic() < deadline:
            time.sleep(0.05)
        browser = launched[0]
        members = [pid for pid, _ in _group_members(browser.pid)]
        assert members
        assert reap_orphans(state) >= 1
        assert wait_gone(members) == []
        assert not browser.profile.exists()
    finally:
        done.set()
        thread.join(5)
        if launched:
            launched[0].kill()
