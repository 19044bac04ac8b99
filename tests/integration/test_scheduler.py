"""The scheduler on a fake clock, launching real ``crawler run`` processes that crawl a local
sample site: fire times, the previous run's history, skipped runs, restarts."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.schedule_support import (
    HOUR_FIRE,
    T0,
    app_events,
    effective_import,
    make_job,
    wait_launch_done,
    wait_state,
)

from crawler.cli.operations import cmd_control, cmd_status
from crawler.clock import ManualClock
from crawler.console.launcher import Launcher
from crawler.demo import SampleSite
from crawler.logs.applog import close_app_logging, configure_app_logging
from crawler.schedule.schedule_state import STATE_FILE, JobScheduleState
from crawler.schedule.scheduler import Scheduler

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def site() -> Iterator[SampleSite]:
    with SampleSite(ports=(0,), pages_per_host=20) as served:
        yield served


@pytest.fixture
def jobs_dir(tmp_path: Path) -> Path:
    path = tmp_path / "jobs"
    path.mkdir()
    return path


def _status_text(path: Path) -> str:
    out, err = io.StringIO(), io.StringIO()
    assert cmd_status(path, False, out, err) == 0, err.getvalue()
    return out.getvalue()


def test_runs_start_at_fire_times_each_from_the_previous_runs_history(
    jobs_dir: Path, site: SampleSite
) -> None:
    job = make_job(jobs_dir, site)
    clock, launcher = ManualClock(T0), Launcher()
    scheduler = Scheduler(jobs_dir, launcher, clock=clock)

    assert scheduler.tick() == []  # the schedule was just seen: nothing before now is run
    saved = JobScheduleState.load(job)
    assert saved is not None and saved.next_s == HOUR_FIRE
    assert "next run: 2023-11-14T23:00:00Z" in _status_text(job)

    clock.advance(HOUR_FIRE - T0 - 1)
    assert scheduler.tick() == []
    clock.advance(1)
    [first] = scheduler.tick()
    assert first.action == "launched" and first.fire_s == HOUR_FIRE and not first.catch_up
    assert first.run_dir is not None and first.run_dir.parent == job / "runs"
    assert scheduler.tick() == []  # one run per fire time
    assert wait_launch_done(launcher, first.run_dir) == 0
    assert wait_state(first.run_dir, ("FINISHED",)) == "FINISHED"
    # The job's first run: `previous` names no run yet; the run says so and runs without one.
    assert effective_import(first.run_dir) is None
    assert "history_import_skipped" in app_events(first.run_dir)

    clock.advance(3600)
    [second] = scheduler.tick()
    assert second.action == "launched" and second.run_dir is not None
    assert wait_launch_done(launcher, second.run_dir) == 0
    assert effective_import(second.run_dir) == str(first.run_dir.resolve())
    assert "history_import_previous" in app_events(second.run_dir)
    # The unchanged pages were deduplicated against the first run's captures.
    seed_line = next(
        line
        for line in (second.run_dir / "logs" / "crawl.log").read_text().splitlines()
        if line.split()[3] == site.base_urls[0]
    )
    assert "duplicate:digest" in seed_line

    state = JobScheduleState.load(job)
    assert state is not None and state.launched == 2 and state.skipped == 0
    assert state.next_s == HOUR_FIRE + 7200
    text = _status_text(job)  # the job's latest run, then its schedule
    assert "FINISHED" in text and "next run: 2023-11-15T01:00:00Z" in text


def test_a_fire_time_while_the_previous_run_runs_is_skipped_and_alerted(
    jobs_dir: Path, site: SampleSite
) -> None:
    job = make_job(jobs_dir, site, pause_at_start=True)  # the run waits for unpause
    clock, launcher = ManualClock(T0), Launcher()
    scheduler = Scheduler(jobs_dir, launcher, clock=clock)
    logs = jobs_dir / ".scheduler" / "logs"
    configure_app_logging(logs, "info", console=False)
    try:
        scheduler.tick()
        clock.advance(HOUR_FIRE - T0)
        [first] = scheduler.tick()
        assert first.run_dir is not None
        wait_state(first.run_dir, ("PAUSED",))

        clock.advance(3600)
        [skipped] = scheduler.tick()
        assert skipped.action == "skipped" and skipped.run_dir == first.run_dir
        assert sorted(p.name for p in (job / "runs").iterdir()) == [first.run_dir.name]
        alerts = (logs / "alerts.log").read_text()
        assert "WARNING scheduled_run_skipped" in alerts
        assert "fire_time=2023-11-15T00:00:00Z" in alerts and "job=site" in alerts

        assert cmd_control("terminate", first.run_dir, 60, io.StringIO(), io.StringIO()) == 0
        assert wait_launch_done(launcher, first.run_dir) == 0
        clock.advance(3600)
        [second] = scheduler.tick()
        assert second.action == "launched" and second.run_dir != first.run_dir
        assert second.run_dir is not None
        wait_state(second.run_dir, ("PAUSED",))
        assert cmd_control("terminate", second.run_dir, 60, io.StringIO(), io.StringIO()) == 0
        assert wait_launch_done(launcher, second.run_dir) == 0
    finally:
        close_app_logging()
    state = JobScheduleState.load(job)
    assert state is not None and (state.launched, state.skipped) == (2, 1)
    assert "skipped (previous run still running): 1" in "\n".join(state.lines())


def test_a_restarted_scheduler_runs_missed_fire_times_once(
    jobs_dir: Path, site: SampleSite
) -> None:
    job = make_job(jobs_dir, site)
    clock, launcher = ManualClock(T0), Launcher()
    Scheduler(jobs_dir, launcher, clock=clock).tick()  # then the scheduler is down...
    clock.advance(HOUR_FIRE - T0 + 2 * 3600 + 600)  # ...over three fire times

    restarted = Scheduler(jobs_dir, launcher, clock=clock)
    [run] = restarted.tick()
    assert run.action == "launched" and run.catch_up
    assert run.fire_s == HOUR_FIRE + 2 * 3600  # the latest missed time stands for all three
    assert run.run_dir is not None
    assert restarted.tick() == []
    assert Scheduler(jobs_dir, launcher, clock=clock).tick() == []  # and again after a restart
    assert wait_launch_done(launcher, run.run_dir) == 0
    assert len(list((job / "runs").iterdir())) == 1
    state = JobScheduleState.load(job)
    assert state is not None and state.next_s == HOUR_FIRE + 3 * 3600


def _crash_during_launch(job: Path, clock: ManualClock, launcher: Launcher) -> None:
    """The state a scheduler leaves when it dies after saving ``pending`` for the 23:00 fire
    time, before (or just after) launching it."""
    Scheduler(job.parent, launcher, clock=clock).tick()
    state = JobScheduleState.load(job)
    assert state is not None
    state.pending = {"fire_s": HOUR_FIRE, "newest_run": ""}
    state.save(job, clock.time())
    clock.advance(HOUR_FIRE - T0 + 5)


def test_a_launch_cut_short_before_the_crawl_started_is_run_on_restart(
    jobs_dir: Path, site: SampleSite
) -> None:
    job = make_job(jobs_dir, site)
    clock, launcher = ManualClock(T0), Launcher()
    _crash_during_launch(job, clock, launcher)

    restarted = Scheduler(jobs_dir, launcher, clock=clock)
    [run] = restarted.tick()
    assert run.action == "launched" and run.fire_s == HOUR_FIRE and run.run_dir is not None
    assert restarted.tick() == []
    assert wait_launch_done(launcher, run.run_dir) == 0
    saved = json.loads((job / STATE_FILE).read_text())
    assert saved["pending"] is None and saved["launched"] == 1


def test_a_launch_that_happened_just_before_a_crash_is_not_run_again(
    jobs_dir: Path, site: SampleSite
) -> None:
    job = make_job(jobs_dir, site)
    clock, launcher = ManualClock(T0), Launcher()
    _crash_during_launch(job, clock, launcher)
    launched = launcher.launch(job / "order.yaml", job, [])  # what the dead scheduler started

    restarted = Scheduler(jobs_dir, launcher, clock=clock)
    assert restarted.tick() == []
    state = JobScheduleState.load(job)
    assert state is not None and state.pending is None
    assert state.last_fire_s == HOUR_FIRE and state.last_run_dir == str(launched.run_dir)
    assert wait_launch_done(launcher, launched.run_dir) == 0
    assert len(list((job / "runs").iterdir())) == 1


def test_editing_the_schedule_away_clears_the_next_run(jobs_dir: Path, site: SampleSite) -> None:
    job = make_job(jobs_dir, site)
    clock, launcher = ManualClock(T0), Launcher()
    scheduler = Scheduler(jobs_dir, launcher, clock=clock)
    scheduler.tick()
    make_job(jobs_dir, site, schedule=None, description="no longer scheduled")
    clock.advance(HOUR_FIRE - T0)
    assert scheduler.tick() == []
    state = JobScheduleState.load(job)
    assert state is not None and state.expression == "" and state.next_s is None
    assert not (job / "runs").exists()


def test_an_order_made_invalid_stops_its_schedule_and_says_why(
    jobs_dir: Path, site: SampleSite
) -> None:
    job = make_job(jobs_dir, site)
    clock = ManualClock(T0)
    scheduler = Scheduler(jobs_dir, Launcher(), clock=clock)
    scheduler.tick()
    make_job(jobs_dir, site, schedule="0 24 * * *")  # there is no hour 24
    clock.advance(HOUR_FIRE - T0)
    assert scheduler.tick() == []
    state = JobScheduleState.load(job)
    assert state is not None and state.next_s is None and state.last_error is not None
    assert "invalid order, not scheduled" in state.last_error and "schedule" in state.last_error
    assert "last error: " in "\n".join(state.lines())
    make_job(jobs_dir, site, schedule="*/30 * * * *")  # fixed: scheduled again, from now on
    assert scheduler.tick() == []
    state = JobScheduleState.load(job)
    assert state is not None and state.last_error is None
    assert state.next_s == HOUR_FIRE + 1800
