"""The console runs the jobs' schedules (the same scheduler as ``crawler schedule``) and shows
each scheduled job's next run."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from console_support import CHROMIUM, ConsoleProc, chromium, wait_until
from fastapi.testclient import TestClient
from support.console_runs import AUTH, TOKEN
from support.schedule_support import HOUR_FIRE, T0, make_job

from crawler.clock import ManualClock
from crawler.console.launcher import Launcher
from crawler.demo import SampleSite
from crawler.reports.status import read_status
from crawler.schedule.scheduler import Scheduler

pytestmark = pytest.mark.timeout(180)


def test_jobs_api_shows_the_schedule_and_next_run(
    client: TestClient, jobs_dir: Path, tmp_path: Path
) -> None:
    with SampleSite(ports=(0,), pages_per_host=20) as site:
        make_job(jobs_dir, site, name="nightly", schedule="0 * * * *")
    Scheduler(jobs_dir, Launcher(), clock=ManualClock(T0)).tick()
    jobs = {j["name"]: j for j in client.get("/api/jobs", headers=AUTH).json()["jobs"]}
    assert jobs["site"]["schedule"] is None  # the example job has no schedule:
    schedule = jobs["nightly"]["schedule"]
    assert schedule["expression"] == "0 * * * *"
    assert schedule["next"] == "2023-11-14T23:00:00Z" and schedule["next_s"] == HOUR_FIRE
    assert schedule["launched"] == 0 and schedule["skipped"] == 0


@pytest.mark.e2e
def test_the_console_launches_scheduled_runs(tmp_path: Path) -> None:
    jobs_dir = tmp_path / "jobs"
    with SampleSite(ports=(0,), pages_per_host=20) as site:
        job = make_job(jobs_dir, site, schedule="*/2 * * * * *")
        console = ConsoleProc(jobs_dir, TOKEN)
        try:
            runs = job / "runs"
            # A run started by the console's launcher has its launch.log (written just after
            # the run directory is made: wait for the file, not the directory).
            wait_until(
                lambda: runs.is_dir() and any((r / "launch.log").is_file() for r in runs.iterdir()),
                60,
                "a scheduled run with its launch.log",
            )
            [shown] = console.api("GET", "/api/jobs").json()["jobs"]
            assert shown["schedule"]["expression"] == "*/2 * * * * *"
            assert shown["schedule"]["scheduler_running"] is True
            other = subprocess.run(
                [sys.executable, "-m", "crawler", "schedule", str(jobs_dir)],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            assert other.returncode == 1 and "another scheduler" in other.stderr
        finally:
            code, err = console.stop()
            deadline = time.monotonic() + 60
            for each in sorted((job / "runs").iterdir()):
                while (read_status(each) or {}).get("state") != "FINISHED":
                    assert time.monotonic() < deadline, f"{each} did not finish"
                    time.sleep(0.2)
        assert code == 0, err


@pytest.mark.e2e
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no {CHROMIUM}: `make test` installs it")
def test_the_jobs_page_shows_the_next_run(jobs_dir: Path) -> None:
    with SampleSite(ports=(0,), pages_per_host=20) as site:
        make_job(jobs_dir, site, name="nightly", schedule="0 * * * *")
    Scheduler(jobs_dir, Launcher(), clock=ManualClock(T0)).tick()
    console = ConsoleProc(jobs_dir, TOKEN, "--no-schedule")
    problems: list[str] = []
    try:
        with chromium() as browser:
            page = browser.new_page()
            page.on("pageerror", lambda exc: problems.append(str(exc)))
            page.goto(f"{console.url}/login?token={TOKEN}")
            page.wait_for_selector("#job-nightly .schedule code")
            line = page.inner_text("#job-nightly .schedule")
            assert "0 * * * *" in line and "next run 2023-11-14T23:00:00Z" in line
            assert "runs started 0, skipped 0" in line
            assert page.inner_text("#job-site .schedule") == ""  # not scheduled
    finally:
        code, err = console.stop()
    assert code == 0, err
    assert not problems
    assert not (jobs_dir / "nightly" / "runs").exists()  # --no-schedule: nothing launched
