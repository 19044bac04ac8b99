"""The console in a real headless Chromium against a live crawl of the sample site: launch a
job from the form, watch the counters rise, pause (fetches stop), unpause, add a seed and see
it crawled, block a regex, open a report, terminate. Saves the screenshots of docs/console.md."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from console_support import CHROMIUM, ROOT, ConsoleProc, chromium, save_screenshot, wait_until
from playwright.sync_api import expect

from crawler.demo import SampleSite

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.timeout(240),
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason=f"no {CHROMIUM}: `make test` installs Debian's chromium"
    ),
]

TOKEN = "browser-test-token-42"
PAGE_WEIGHT_BUDGET_BYTES = 80_000


@pytest.fixture
def sites() -> Iterator[tuple[SampleSite, SampleSite]]:
    # slow enough that the crawl is still running at the last step (it takes minutes), however
    # slow the machine runs the browser
    main = SampleSite(pages_per_host=600, latency_s=0.2)
    extra = SampleSite(ports=(0,), pages_per_host=20)
    main.start()
    extra.start()
    try:
        yield main, extra
    finally:
        main.stop()
        extra.stop()


@pytest.fixture
def jobs_dir(tmp_path: Path, sites: tuple[SampleSite, SampleSite]) -> Path:
    job = tmp_path / "jobs" / "sample"
    job.mkdir(parents=True)
    shutil.copy(ROOT / "jobs" / "example" / "order.yaml", job / "order.yaml")
    (job / "seeds.txt").write_text("\n".join(sites[0].base_urls) + "\n")
    return tmp_path / "jobs"


def counter(page: Any, key: str) -> int:
    text = page.inner_text(f'[data-k="{key}"]').replace(",", "")
    return int(text) if text.isdigit() else -1


def state(page: Any) -> str:
    return str(page.inner_text("#state")).strip()


def test_console_drives_a_live_crawl_in_chromium(
    jobs_dir: Path, sites: tuple[SampleSite, SampleSite]
) -> None:
    site, extra = sites
    console = ConsoleProc(jobs_dir, TOKEN)
    problems: list[str] = []
    weights: dict[str, int] = {}
    try:
        with chromium() as browser:
            page = browser.new_page(viewport={"width": 1280, "height": 860})
            page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
            page.on(
                "console",
                lambda m: problems.append(m.text) if m.type in ("error", "warning") else None,
            )

            def weigh(response: Any) -> None:
                kind = response.request.resource_type
                if kind in ("document", "script", "stylesheet") and response.status == 200:
                    weights[response.url] = len(response.body())

            page.on("response", weigh)

            # log in with the form
            page.goto(console.url + "/")
            assert page.url.endswith("/login")
            page.fill("#token", "wrong")
            page.click("button[type=submit]")
            assert "Wrong token" in page.inner_text("body")
            problems.clear()  # the 401 of the wrong token is logged by the browser
            page.fill("#token", TOKEN)
            page.click("button[type=submit]")
            page.wait_for_selector("#job-sample")

            # an invalid override is refused, shown by its YAML path
            page.click("#job-sample summary")
            page.fill("textarea[name=sets]", "toe_threads=many\nfrontier.politeness.delay=1")
            page.click("text=Launch sample")
            page.wait_for_selector(".launch-result table")
            errors = page.inner_text(".launch-result")
            assert "toe_threads" in errors and "frontier.politeness" in errors
            assert "unknown key 'delay'" in errors
            save_screenshot(page, "console-jobs.png")
            problems.clear()  # the 422 is logged by the browser
            assert not (jobs_dir / "sample" / "runs").exists()

            # launch it for real
            # four threads for three hosts: a thread is free for the seed added later
            page.fill("textarea[name=sets]", "toe_threads=4\nlogging.progress_interval_s=1")
            page.click("text=Launch sample")
            page.wait_for_url("**/#/runs/*")
            expect(page.locator("#state")).to_have_text("RUNNING", timeout=20_000)
            wait_until(lambda: counter(page, "downloaded") > 0, what="downloads")
            first = counter(page, "downloaded")
            wait_until(lambda: counter(page, "downloaded") >= first + 10, what="counters rising")
            assert counter(page, "discovered") >= counter(page, "downloaded")
            page.wait_for_selector("text=text/html")  # MIME types tallied from crawl.log
            expect(page.locator("#log")).to_contain_text(" 200 ")
            time.sleep(1.5)  # a few chart points
            save_screenshot(page, "console-run.png")

            # pause: the state changes and the site gets no more requests
            page.click("#btn-pause")
            expect(page.locator("#state")).to_have_text("PAUSED", timeout=20_000)
            requests_paused = len(site.request_log)
            downloaded_paused = counter(page, "downloaded")
            time.sleep(1.0)
            assert len(site.request_log) == requests_paused
            assert counter(page, "downloaded") == downloaded_paused
            assert page.is_disabled("#btn-pause") and page.is_enabled("#btn-unpause")

            page.click("#btn-unpause")
            expect(page.locator("#state")).to_have_text("RUNNING", timeout=20_000)
            wait_until(lambda: len(site.request_log) > requests_paused + 5, what="fetching again")

            # add a seed on another host and see it crawled
            page.fill("#seeds", extra.base_urls[0])
            page.click("#btn-seeds")
            page.wait_for_selector(".message.ok")
            wait_until(lambda: len(extra.request_log) >= 3, what="the new seed's host crawled")
            page.fill("#log-filter", extra.hosts[0])
            expect(page.locator("#log")).to_contain_text(extra.base_urls[0], timeout=15_000)

            # block a regex: it shows among the rules once the crawl took it in
            page.fill("#regex", r"/never-fetch-this/")
            page.click("#btn-block")
            page.wait_for_selector("text=/never-fetch-this/", timeout=20_000)

            # apply a sheet with the form: the crawl takes it in (kept in the run's sheets.yaml)
            slow = {
                "name": "slow-extra",
                "hosts": [extra.hosts[0]],
                "settings": {"frontier.politeness.min_delay_ms": 500},
            }
            page.fill("#sheet", json.dumps(slow))
            page.click("#btn-sheet")
            page.wait_for_selector("text=sheets sent", timeout=20_000)
            kept = next((jobs_dir / "sample" / "runs").iterdir()) / "sheets.yaml"
            wait_until(
                lambda: kept.is_file() and "slow-extra" in kept.read_text(),
                what="the sheet taken in",
            )

            # ask for reports and open one
            page.click("#btn-reports")
            page.wait_for_selector("text=crawl-report.txt", timeout=20_000)
            page.click("text=crawl-report.txt")
            page.wait_for_selector("dialog[open]")
            report = page.inner_text("#report-text")
            assert "crawl status: RUNNING" in report and "URIs processed" in report
            save_screenshot(page, "console-report.png")
            page.click("#report-close")

            # terminate (the confirm dialog is accepted)
            page.once("dialog", lambda dialog: dialog.accept())
            page.click("#btn-terminate")
            expect(page.locator("#state")).to_have_text("FINISHED", timeout=30_000)
            requests_done = len(site.request_log)
            time.sleep(0.5)
            assert len(site.request_log) == requests_done

            weights.clear()  # the run view loaded afresh: its page weight
            page.reload()
            expect(page.locator("#state")).to_have_text("FINISHED")
            page.wait_for_selector(".report-link")
            page.goto(console.url + "/#/")
            page.wait_for_selector("#job-sample .badge")
            assert "FINISHED" in page.inner_text("#job-sample")
    finally:
        code, err = console.stop()
    assert code == 0, err
    assert problems == []
    run_view = sum(size for url, size in weights.items() if "/api/" not in url)
    print(f"run view page weight: {run_view} bytes in {len(weights)} files")
    assert 0 < run_view < PAGE_WEIGHT_BUDGET_BYTES
