"""The run page of a crawl that finishes while it is open (headless Chromium): its reports
appear without a reload, and its short elapsed time is shown in seconds, not as 0:00:00."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from console_support import CHROMIUM, ROOT, ConsoleProc, chromium, wait_until
from playwright.sync_api import expect

from crawler.demo import SampleSite
from crawler.reports.status import read_status

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.timeout(120),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no {CHROMIUM}"),
]

TOKEN = "finished-run-token-7"


def test_a_run_that_finishes_shows_its_reports_and_elapsed_time(tmp_path: Path) -> None:
    job = tmp_path / "jobs" / "sample"
    job.mkdir(parents=True)
    shutil.copy(ROOT / "jobs" / "example" / "order.yaml", job / "order.yaml")
    with SampleSite(ports=(0,), pages_per_host=20) as site:
        crawl = subprocess.Popen(
            [
                *(sys.executable, "-m", "crawler", "run", str(job / "order.yaml"), "--no-display"),
                *("--set", f"seeds.urls={site.base_urls!r}", "--set", "seeds.file=null"),
                *("--set", "pause_at_start=true", "--set", "logging.console=false"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        console = ConsoleProc(tmp_path / "jobs", TOKEN)
        try:
            assert crawl.stdout is not None
            run_dir = Path(crawl.stdout.readline().strip())
            wait_until(lambda: (read_status(run_dir) or {}).get("state") == "PAUSED", 60)
            with chromium() as browser:
                page = browser.new_page()
                page.goto(console.url + "/")
                page.fill("#token", TOKEN)
                page.click("button[type=submit]")
                page.wait_for_selector("#job-sample")
                page.goto(f"{console.url}/#/runs/sample~{run_dir.name}")
                expect(page.locator("#state")).to_have_text("PAUSED", timeout=20_000)
                expect(page.locator(".report-list")).to_contain_text("No reports yet")
                unpause = subprocess.run(
                    [sys.executable, "-m", "crawler", "unpause", str(run_dir)],
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
                assert unpause.returncode == 0, unpause.stderr
                expect(page.locator("#state")).to_have_text("FINISHED", timeout=30_000)
                # the tick that sees the crawl finished also reads its reports
                expect(page.locator(".report-link").first).to_be_visible(timeout=5_000)
                expect(page.locator(".report-list")).to_contain_text("crawl-report.txt")
                elapsed = page.inner_text('[data-k="elapsed"]')
                assert re.fullmatch(r"\d+(\.\d)? s", elapsed), elapsed
                assert float(elapsed.split()[0]) > 0
        finally:
            console.stop()
            crawl.wait(60)
