"""A job's runs and their states (finished, running, died, unknown; a --workers run from its
workers), and which earlier crawl a run imported its history from."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from crawler.archive.job_runs import crawl_dir_of, imported_crawl, is_job_dir, job_runs

pytestmark = pytest.mark.timeout(10)


def _status(run: Path, state: str, pid: int) -> Path:
    run.mkdir(parents=True, exist_ok=True)
    (run / "logs").mkdir(exist_ok=True)
    doc = {"state": state, "pid": pid, "hostname": socket.gethostname(), "updated_s": 1.0}
    (run / "status.json").write_text(json.dumps(doc))
    return run


def test_runs_are_listed_oldest_first_with_their_states(tmp_path: Path) -> None:
    runs = tmp_path / "job" / "runs"
    _status(runs / "20260102T000000Z", "RUNNING", os.getpid())
    _status(runs / "20260101T000000Z", "FINISHED", 999_999_999)
    _status(runs / "20260103T000000Z", "RUNNING", 999_999_999)  # its process is gone
    (runs / "20260104T000000Z").mkdir()
    dist = runs / "20260105T000000Z"
    (dist / "distributed.json").parent.mkdir()
    (dist / "distributed.json").write_text("{}")
    _status(dist / "workers" / "w01", "FINISHED", 999_999_999)
    _status(dist / "workers" / "w02", "RUNNING", 999_999_999)
    (runs / "latest").symlink_to(dist)
    found = [(r.path.name, r.state) for r in job_runs(tmp_path / "job")]
    assert found == [
        ("20260101T000000Z", "finished"),
        ("20260102T000000Z", "running"),
        ("20260103T000000Z", "died"),
        ("20260104T000000Z", "unknown"),
        ("20260105T000000Z", "died"),  # one worker died, none runs
    ]
    _status(dist / "workers" / "w02", "FINISHED", 999_999_999)
    assert job_runs(tmp_path / "job")[-1].finished
    assert is_job_dir(tmp_path / "job") and not is_job_dir(dist)


def test_the_imported_crawl_is_the_run_the_effective_order_names(tmp_path: Path) -> None:
    earlier = _status(tmp_path / "job" / "runs" / "1", "FINISHED", 1)
    (earlier / "state" / "history").mkdir(parents=True)
    run = _status(tmp_path / "job" / "runs" / "2", "FINISHED", 1)

    def order(text: str) -> None:
        (run / "order.effective.yaml").write_text(f"base_dir: {tmp_path / 'job'}\n{text}")

    order("history: {import_from: runs/1/state}\n")
    assert imported_crawl(run) == earlier.resolve()
    order("history: {import_from: runs/1, enabled: false}\n")
    assert imported_crawl(run) is None
    order("history: {import_from: null}\n")
    assert imported_crawl(run) is None
    order("history: [not, a, mapping]\n")
    assert imported_crawl(run) is None
    dist = tmp_path / "dist"
    (dist / "workers" / "w01" / "logs").mkdir(parents=True)
    (dist / "distributed.json").write_text("{}")
    assert crawl_dir_of(dist / "workers" / "w01") == dist.resolve()
