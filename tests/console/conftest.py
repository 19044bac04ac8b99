"""Fixtures of the console tests: a jobs directory with one job (a copy of jobs/example), run
directories as crawls leave them (finished, or "running" as this very test process), and a
TestClient on the console app."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from support.console_runs import CRAWL_LINES, DEAD_PID, TOKEN, MakeRun, status_doc

from crawler.console import ConsoleState, Workspace, create_app

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def jobs_dir(tmp_path: Path) -> Path:
    """``jobs/site/`` holding a copy of the example job (order.yaml + seeds.txt)."""
    job = tmp_path / "jobs" / "site"
    job.mkdir(parents=True)
    for name in ("order.yaml", "seeds.txt"):
        shutil.copy(ROOT / "jobs" / "example" / name, job / name)
    return tmp_path / "jobs"


@pytest.fixture
def make_run(jobs_dir: Path) -> MakeRun:
    """Make ``jobs/site/runs/<name>/`` with logs, a report and a status.json in ``state``
    (a live state gets this test process's pid unless ``pid`` is given, so the console sees a
    running crawl)."""

    def make(name: str = "20260101T000000Z", state: str = "FINISHED", pid: int = 0) -> Path:
        run = jobs_dir / "site" / "runs" / name
        for sub in ("logs", "reports", "action", "state"):
            (run / sub).mkdir(parents=True, exist_ok=True)
        (run / "logs" / "crawl.log").write_text("\n".join(CRAWL_LINES) + "\n")
        (run / "logs" / "alerts.log").write_text(
            "2026-01-01T00:00:01.300Z WARNING robots_fetch_failed host=127.0.0.1:10\n"
        )
        (run / "logs" / "progress-statistics.log").write_text("")
        (run / "reports" / "crawl-report.txt").write_text("crawl name: site\n")
        pid = pid or (os.getpid() if state != "FINISHED" else DEAD_PID)
        (run / "status.json").write_text(json.dumps(status_doc(run, state, pid)))
        return run

    return make


@pytest.fixture
def client(jobs_dir: Path) -> Iterator[TestClient]:
    """A client of the console app on ``jobs_dir`` (no credentials: tests add them)."""
    app = create_app(ConsoleState(Workspace(jobs_dir)), TOKEN)
    with TestClient(app, base_url="http://127.0.0.1:8443") as test_client:
        yield test_client
