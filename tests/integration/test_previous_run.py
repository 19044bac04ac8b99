"""``history.import_from: previous`` on runs that are not scheduled: the job's latest finished
run, found among its runs/, recorded in the effective order; none yet on the first run."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.schedule_support import app_events, effective_import, make_job

from crawler.control.controller import CrawlController, new_run_dir
from crawler.demo import SampleSite
from crawler.order.loader import load_order
from crawler.schedule.previous_run import latest_finished_run

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]
DEAD_PID = 999_999_999


@pytest.fixture(scope="module")
def site() -> Iterator[SampleSite]:
    with SampleSite(ports=(0,), pages_per_host=20) as served:
        yield served


def _run(job: Path, stamp_s: float, *sets: str) -> CrawlController:
    order = load_order(job / "order.yaml", list(sets))
    controller = CrawlController(order, new_run_dir(job, stamp_s), install_signals=False)
    assert controller.run() == 0
    return controller


def _fake_run(job: Path, name: str, state: str, pid: int, history: bool = True) -> Path:
    """A run directory as a crawl leaves it: status.json in ``state`` (by process ``pid``)."""
    run = job / "runs" / name
    (run / "state").mkdir(parents=True)
    if history:
        (run / "state" / "history").mkdir()
    doc = {"state": state, "pid": pid, "hostname": socket.gethostname(), "updated_s": 1.0}
    (run / "status.json").write_text(json.dumps(doc))
    return run


def test_previous_is_the_latest_finished_run_of_the_job(tmp_path: Path, site: SampleSite) -> None:
    job = make_job(tmp_path / "jobs", site, schedule=None, history={"import_from": "previous"})

    first = _run(job, 1_800_000_000).run_dir
    assert effective_import(first) is None
    assert "history_import_skipped" in app_events(first)
    assert "no finished run yet" in app_events(first)

    # Newer than the first run but not usable: died mid-crawl, and kept no history.
    _fake_run(job, "20270115T080100Z", "RUNNING", DEAD_PID)
    _fake_run(job, "20270115T080200Z", "FINISHED", DEAD_PID, history=False)

    second = _run(job, 1_800_000_600).run_dir
    assert effective_import(second) == str(first.resolve())
    assert "history_import_previous" in app_events(second)
    lines = (second / "logs" / "crawl.log").read_text().splitlines()
    assert sum("duplicate:digest" in line for line in lines) >= 10  # revisits of run 1

    third = _run(job, 1_800_001_200).run_dir
    assert effective_import(third) == str(second.resolve())


def test_latest_finished_run_passes_over_live_dead_and_excluded_runs(tmp_path: Path) -> None:
    job = tmp_path / "job"
    assert latest_finished_run(job) is None  # no runs/ at all
    old = _fake_run(job, "20260101T000000Z", "FINISHED", DEAD_PID)
    newer = _fake_run(job, "20260102T000000Z", "FINISHED", DEAD_PID)
    _fake_run(job, "20260103T000000Z", "RUNNING", DEAD_PID)  # died
    live = _fake_run(job, "20260104T000000Z", "RUNNING", 1)  # pid 1 exists: still running
    assert latest_finished_run(job) == newer.resolve()
    assert latest_finished_run(job, exclude=newer) == old.resolve()
    assert latest_finished_run(job, exclude=newer / "workers" / "w1") == old.resolve()
    assert live.is_dir()


def test_previous_takes_a_workers_run_once_every_worker_finished(tmp_path: Path) -> None:
    job = tmp_path / "jobs" / "j"
    single = _fake_run(job, "20260101T000000Z", "FINISHED", DEAD_PID)
    workers_run = job / "runs" / "20260102T000000Z"
    (workers_run / "workers").mkdir(parents=True)
    (workers_run / "distributed.json").write_text("{}")
    for worker, state in (("1", "FINISHED"), ("2", "RUNNING")):
        part = workers_run / "workers" / worker
        (part / "state" / "history").mkdir(parents=True)
        doc = {"state": state, "pid": DEAD_PID, "hostname": socket.gethostname(), "updated_s": 1.0}
        (part / "status.json").write_text(json.dumps(doc))
    late = workers_run / "workers" / "2"
    # One worker died before it finished: the whole run is passed over.
    assert latest_finished_run(job) == single.resolve()
    doc = json.loads((late / "status.json").read_text())
    (late / "status.json").write_text(json.dumps({**doc, "state": "FINISHED"}))
    assert latest_finished_run(job) == workers_run.resolve()
