"""The run page of a recrawl in Chromium: the "Changes since the earlier crawl" panel shows the
counts, the hosts and each list's URIs, with the whole report to download."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from console_support import CHROMIUM, ConsoleProc, chromium
from playwright.sync_api import expect
from support.changing_site import ChangingSite
from support.recrawl_job import SECOND, crawl_twice

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.timeout(180),
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason=f"no {CHROMIUM}: `make test` installs Debian's chromium"
    ),
]

TOKEN = "changes-browser-token-7"


def test_the_run_page_shows_what_changed(tmp_path: Path) -> None:
    with ChangingSite() as site:
        job = crawl_twice(site, tmp_path / "jobs" / "site")
    console = ConsoleProc(tmp_path / "jobs", TOKEN)
    problems: list[str] = []
    try:
        with chromium() as browser:
            page: Any = browser.new_page(viewport={"width": 1280, "height": 860})
            page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
            page.goto(f"{console.url}/login?token={TOKEN}")
            page.goto(f"{console.url}/#/runs/site~{SECOND}")
            panel = page.locator("#changes")
            expect(panel).to_contain_text("Earlier crawl", timeout=20_000)
            expect(panel).to_contain_text(str(job.first.resolve()))
            host = job.url.removeprefix("http://")
            hosts = panel.locator("table").nth(1).locator("tbody tr")
            assert hosts.first.locator("td").all_inner_texts() == [host, "1", "2", "3", "2"]
            panel.locator("details.changes-gone summary").click()
            expect(panel.locator("details.changes-gone")).to_contain_text(f"{job.url}/c.html")
            expect(panel.locator("details.changes-gone")).to_contain_text(f"{job.url}/d.html")
            link = panel.locator("a.changes-link", has_text="changes-report.txt")
            with page.expect_download() as download:
                link.click()
            saved = tmp_path / "downloaded.txt"
            download.value.save_as(saved)
            assert saved.read_text().startswith("Changes since the earlier crawl\n")
            page.goto(f"{console.url}/#/runs/site~{job.first.name}")
            expect(page.locator("#changes")).to_contain_text("No change report", timeout=20_000)
    finally:
        console.stop()
    assert problems == []
