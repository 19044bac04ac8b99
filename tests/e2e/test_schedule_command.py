"""``crawler schedule JOBS_DIR`` as a user runs it: a job every few seconds (cron with a seconds
field) crawling a local site, one scheduler per jobs directory, the next run in ``crawler
status``, a clean stop on SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.schedule_support import effective_import, make_job

from crawler.demo import SampleSite
from crawler.reports.status import read_status

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]


def _crawler(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "crawler", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _finished_runs(job: Path) -> list[Path]:
    runs = job / "runs"
    if not runs.is_dir():
        return []
    return [r for r in sorted(runs.iterdir()) if (read_status(r) or {}).get("state") == "FINISHED"]


def test_crawler_schedule_runs_a_job_on_its_cadence_until_stopped(tmp_path: Path) -> None:
    jobs_dir = tmp_path / "jobs"
    with SampleSite(ports=(0,), pages_per_host=20) as site:
        job = make_job(jobs_dir, site, schedule="*/2 * * * * *")
        proc = subprocess.Popen(
            [sys.executable, "-m", "crawler", "schedule", str(jobs_dir)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline().startswith("scheduling the jobs of ")
            deadline = time.monotonic() + 120
            while len(_finished_runs(job)) < 2:
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "no two scheduled runs finished in 120 s"
                time.sleep(0.2)

            other = _crawler("schedule", str(jobs_dir))  # one scheduler per jobs directory
            assert other.returncode == 1
            assert f"another scheduler (pid {proc.pid})" in other.stderr

            status = _crawler("status", str(job))
            assert status.returncode == 0, status.stderr
            assert "schedule: */2 * * * * *; next run: " in status.stdout
            assert "no scheduler is running" not in status.stdout
        finally:
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=30)
            # Runs outlive the scheduler: let the last one finish while the site still serves.
            deadline = time.monotonic() + 60
            while len(_finished_runs(job)) < len(list((job / "runs").iterdir())):
                assert time.monotonic() < deadline, "a launched run did not finish"
                time.sleep(0.2)
        assert proc.returncode == 0, err
        assert "scheduled_run_started" in err  # the scheduler's events on stderr

    first, second = _finished_runs(job)[:2]
    assert effective_import(first) is None
    assert effective_import(second) == str(first.resolve())
    assert "scheduled_run_started" in (jobs_dir / ".scheduler/logs/crawler.jsonl").read_text()
    after = _crawler("status", str(job))
    assert "no scheduler is running" in after.stdout


def test_crawler_schedule_refuses_a_missing_jobs_directory(tmp_path: Path) -> None:
    missing = _crawler("schedule", str(tmp_path / "nowhere"))
    assert missing.returncode == 2
    assert missing.stderr.strip() == (
        f"{tmp_path / 'nowhere'}: no such jobs directory (it holds <job>/order.yaml)"
    )
