"""Fixtures of the console tests: a jobs directory with one job (a copy of jobs/example), run
directories as crawls leave them (finished, or "running" as this very test process), and a
TestClient on the console app."""

from __future__ import annotations

import json
import os
import shutil
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from crawler.console import ConsoleState, Workspace, create_app

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "test-token-0123456789"
DEAD_PID = 999_999_999
AUTH = {"Authorization": f"Bearer {TOKEN}"}
CRAWL_LINES = [
    "2026-01-01T00:00:01.000Z   200        108 http://127.0.0.1:9/robots.txt P http://127.0.0.1:9/"
    " text/plain #001 20260101000000900+10 sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA - - -",
    "2026-01-01T00:00:01.100Z   200       4435 http://127.0.0.1:9/ - - text/html #002"
    " 20260101000001000+6 sha1:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB - - -",
    "2026-01-01T00:00:01.200Z   404        120 http://127.0.0.1:9/missing L http://127.0.0.1:9/"
    " text/html #001 20260101000001100+3 sha1:CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC - - -",
    "2026-01-01T00:00:01.300Z    -2          - http://127.0.0.1:10/ L http://127.0.0.1:9/"
    " no-type #003 - - - err=ConnectError -",
]


@pytest.fixture
def jobs_dir(tmp_path: Path) -> Path:
    """``jobs/site/`` holding a copy of the example job (order.yaml + seeds.txt)."""
    job = tmp_path / "jobs" / "site"
    job.mkdir(parents=True)
    for name in ("order.yaml", "seeds.txt"):
        shutil.copy(ROOT / "jobs" / "example" / name, job / name)
    return tmp_path / "jobs"


def status_doc(run_dir: Path, state: str, pid: int, **extra: object) -> dict[str, object]:
    now = time.time()
    doc: dict[str, object] = {
        "version": 1,
        "job": "site",
        "run_dir": str(run_dir),
        "pid": pid,
        "hostname": socket.gethostname(),
        "state": state,
        "exit_status": "Finished" if state == "FINISHED" else "",
        "updated": "2026-01-01T00:00:02.000Z",
        "updated_s": now,
        "started": "2026-01-01T00:00:00.000Z",
        "started_s": now - 2,
        "elapsed_s": 2.0,
        "discovered": 10,
        "queued": 6,
        "downloaded": 3,
        "failed": 1,
        "bytes": 4663,
        "rates": {"uris_per_s": 1.5, "avg_uris_per_s": 1.5, "kb_per_s": 2.0, "avg_kb_per_s": 2.0},
        "eta_s": 4.0,
        "threads": {"busy": 1, "total": 3, "steps": {}},
        "frontier": {"queues": {"ready": 1, "exhausted": 1}, "in_process": 1},
        "busiest_hosts": [{"host": "127.0.0.1:9", "urls": 3, "bytes": 4663, "failed": 0}],
        "recent_errors": [],
        "block_rules": [],
        "processors": [{"chain": "pre", "class": "p.X", "name": "x", "lines": []}],
    }
    doc.update(extra)
    return doc


MakeRun = Callable[..., Path]


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
