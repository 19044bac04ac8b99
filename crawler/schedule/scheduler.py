"""Scheduler: launches each job's ``crawler run`` at the fire times of its ``schedule:``.

Each :meth:`Scheduler.tick` looks at every ``<jobs_dir>/<job>/order.yaml`` (an order is read
again only when its file changed) and, for each job whose order has a ``schedule:``:

* the next fire time is the first after the last one dealt with (``last_fire_s`` in the job's
  :class:`~crawler.schedule.schedule_state.JobScheduleState`), or after the moment the schedule
  was first seen; once it has come, every fire time up to now is one decision (a scheduler that
  was down for three fire times runs once, not three times);
* if the job's previous run still runs (the process this scheduler launched, or any of the job's
  runs whose ``status.json`` says it is live), the fire time is skipped: a
  ``scheduled_run_skipped`` warning goes to the application log and its ``alerts.log``;
* else ``crawler run`` is launched through the injected :class:`RunLauncher` (the console's
  launcher: a detached process, output in ``RUN/launch.log``), with ``--set
  history.import_from=previous`` when the order imports no history of its own, so each run
  starts from the previous run's history.

The state is saved before (``pending``) and after each launch, so a restarted scheduler neither
loses a run nor runs one twice. Times come from the injected clock, so tests drive the scheduler
with a :class:`~crawler.clock.ManualClock`. Not thread-safe: one thread calls :meth:`tick` (or
:meth:`run`); others read the state files (``crawler status``, the console).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import structlog

from crawler.clock import Clock, SystemClock
from crawler.order.errors import OrderError
from crawler.order.loader import load_order
from crawler.reports.status import is_running, process_alive, read_status
from crawler.schedule.cron_schedule import CronSchedule
from crawler.schedule.schedule_state import JobScheduleState, utc_text

ORDER_FILE = "order.yaml"
LAUNCH_LOG = "launch.log"
IMPORT_PREVIOUS = "history.import_from=previous"
POLL_S = 1.0
"""Longest sleep of :meth:`Scheduler.run`: how soon a new or edited order is noticed."""


class LaunchedRun(Protocol):
    """A launched crawl: its run directory, process id, exit code (None while it runs)."""

    run_dir: Path
    pid: int
    exit_code: int | None


class RunLauncher(Protocol):
    """Starts ``crawler run ORDER`` in a new run directory of ``job_dir`` (``latest`` too)."""

    def launch(self, order_path: Path, job_dir: Path, sets: Sequence[str]) -> LaunchedRun: ...


@dataclass(frozen=True)
class Decision:
    """What one tick did for one job: ``launched``, ``skipped`` or ``failed``."""

    job: str
    action: str
    fire_s: float
    run_dir: Path | None = None
    catch_up: bool = False


@dataclass
class _Job:
    """What the scheduler keeps in memory for one job."""

    name: str
    job_dir: Path
    order_key: tuple[int, int] | None = None
    cron: CronSchedule | None = None
    sets: list[str] = field(default_factory=list)
    state: JobScheduleState | None = None
    handle: LaunchedRun | None = None
    saved: bool = False
    """Whether this process saved the state yet (so the file names this scheduler)."""
    due: tuple[CronSchedule, float, float] | None = None
    """(cron, base, first fire time after base): croniter takes ~0.3 ms a computation, a tick
    reuses it while neither changed."""


class Scheduler:
    """Runs the schedules of the jobs under ``jobs_dir`` (see the module docstring)."""

    def __init__(
        self,
        jobs_dir: Path,
        launcher: RunLauncher,
        *,
        clock: Clock | None = None,
        logger: Any = None,
        poll_s: float = POLL_S,
    ) -> None:
        self.jobs_dir = jobs_dir.resolve()
        self.launcher = launcher
        self.clock: Clock = clock or SystemClock()
        self.logger: Any = logger or structlog.get_logger("crawler.schedule")
        self.poll_s = poll_s
        self._jobs: dict[str, _Job] = {}

    # ------------------------------------------------------------------ reading the jobs
    def _job_dirs(self) -> list[Path]:
        if not self.jobs_dir.is_dir():
            return []
        return sorted(
            p
            for p in self.jobs_dir.iterdir()
            if not p.name.startswith(".") and (p / ORDER_FILE).is_file()
        )

    def _refresh(self, job: _Job) -> None:
        """Read the job's order again if its file changed; a bad order unschedules the job."""
        path = job.job_dir / ORDER_FILE
        try:
            st = path.stat()
        except OSError:
            job.cron = None
            return
        key = (st.st_mtime_ns, st.st_size)
        if key == job.order_key:
            return
        job.order_key = key
        job.cron = None
        try:
            order = load_order(path)
        except OrderError as exc:
            self.logger.warning(
                "schedule_order_invalid", job=job.name, order=str(path), error=str(exc)
            )
            self._unschedule(job, " ".join(f"invalid order, not scheduled: {exc}".split()))
            return
        if order.schedule is None:
            self._unschedule(job, None)
            return
        job.cron = CronSchedule(order.schedule, order.name)  # the schema checked it
        history = order.history
        job.sets = [IMPORT_PREVIOUS] if history.enabled and not history.import_from else []

    def _unschedule(self, job: _Job, error: str | None) -> None:
        """The job's order has no (valid) schedule now: its state says so (no next run)."""
        state = job.state or JobScheduleState.load(job.job_dir)
        job.state = state
        if state is not None and (state.expression or state.last_error != error):
            state.expression = ""
            state.since_s = state.next_s = None
            state.last_error = error
            state.save(job.job_dir, self.clock.time())

    # ------------------------------------------------------------------ deciding
    def tick(self) -> list[Decision]:
        """Look at every job once; launch or skip what is due. Returns what it decided."""
        now = self.clock.time()
        decisions: list[Decision] = []
        seen = set()
        for job_dir in self._job_dirs():
            name = job_dir.name
            seen.add(name)
            job = self._jobs.get(name)
            if job is None:
                job = self._jobs[name] = _Job(name, job_dir)
            try:
                self._refresh(job)
                decision = self._tick_job(job, job.cron, now) if job.cron is not None else None
            except OSError as exc:  # this job's files; the other jobs go on
                self.logger.error("schedule_job_failed", job=name, error=str(exc))
                continue
            if decision is not None:
                decisions.append(decision)
        for gone in set(self._jobs) - seen:
            del self._jobs[gone]
        return decisions

    def _load_state(self, job: _Job, cron: CronSchedule, now: float) -> JobScheduleState:
        state = job.state
        if state is None:
            state = JobScheduleState.load(job.job_dir) or JobScheduleState()
            if state.pending:
                self._recover_pending(job, state)
            job.state = state
        if state.expression != cron.expression or state.since_s is None:
            # A new or changed schedule: from now on, never a catch-up of earlier times.
            state.expression = cron.expression
            state.since_s = now
            state.last_error = None
        return state

    def _recover_pending(self, job: _Job, state: JobScheduleState) -> None:
        """A launch was under way when the last scheduler stopped: did it happen?"""
        pending = state.pending or {}
        newest = str(pending.get("newest_run") or "")
        made = [
            run for run in _runs(job.job_dir) if run.name > newest and (run / LAUNCH_LOG).exists()
        ]
        fire_s = pending.get("fire_s")
        if made and isinstance(fire_s, (int, float)):
            state.last_fire_s = float(fire_s)
            state.last_run_dir = str(made[0])
            state.launched += 1
            self.logger.info("schedule_launch_recovered", job=job.name, run_dir=str(made[0]))
        state.pending = None

    def _tick_job(self, job: _Job, cron: CronSchedule, now: float) -> Decision | None:
        state = self._load_state(job, cron, now)
        assert state.since_s is not None
        base = state.since_s if state.last_fire_s is None else max(state.last_fire_s, state.since_s)
        if job.due is None or job.due[0] is not cron or job.due[1] != base:
            job.due = (cron, base, cron.next_after(base))
        due = job.due[2]
        if due > now:
            if state.next_s != due or not job.saved:
                state.next_s = due
                state.save(job.job_dir, now)
                job.saved = True
            return None
        fire_s = cron.latest_at_or_before(now)
        catch_up = fire_s != due or now - fire_s > max(self.poll_s * 5, 60.0)
        running = self._running_run(job)
        if running is not None:
            decision = self._skip(job, state, fire_s, running)
        else:
            decision = self._launch(job, state, fire_s, catch_up, now)
        state.next_s = cron.next_after(fire_s)
        state.save(job.job_dir, now)
        job.saved = True
        return decision

    def _running_run(self, job: _Job) -> Path | None:
        """The job's run that is still going, if any."""
        handle = job.handle
        if handle is not None and handle.exit_code is None:
            return handle.run_dir
        state = job.state
        if handle is None and state is not None and state.last_pid and state.last_run_dir:
            # Launched by an earlier scheduler process: alive, and not yet FINISHED.
            run = Path(state.last_run_dir)
            doc = read_status(run)
            finished = doc is not None and doc.get("state") == "FINISHED"
            if process_alive(int(state.last_pid)) and not finished:
                return run
        for run in _runs(job.job_dir):
            if is_running(read_status(run)):
                return run
        return None

    def _skip(self, job: _Job, state: JobScheduleState, fire_s: float, running: Path) -> Decision:
        state.last_fire_s = fire_s
        state.last_skipped_s = fire_s
        state.skipped += 1
        self.logger.warning(
            "scheduled_run_skipped",
            job=job.name,
            fire_time=utc_text(fire_s),
            reason="the previous run still runs",
            running_run=str(running),
        )
        return Decision(job.name, "skipped", fire_s, running)

    def _launch(
        self, job: _Job, state: JobScheduleState, fire_s: float, catch_up: bool, now: float
    ) -> Decision:
        runs = _runs(job.job_dir)
        state.pending = {"fire_s": fire_s, "newest_run": runs[0].name if runs else ""}
        state.save(job.job_dir, now)
        try:
            handle = self.launcher.launch(job.job_dir / ORDER_FILE, job.job_dir, job.sets)
        except OSError as exc:
            state.pending = None
            state.last_fire_s = fire_s
            state.last_error = f"{utc_text(fire_s)}: cannot start crawler run: {exc}"
            self.logger.error(
                "scheduled_run_failed", job=job.name, fire_time=utc_text(fire_s), error=str(exc)
            )
            return Decision(job.name, "failed", fire_s)
        job.handle = handle
        state.pending = None
        state.last_fire_s = fire_s
        state.last_run_dir = str(handle.run_dir)
        state.last_pid = handle.pid
        state.last_launch_s = now
        state.last_error = None
        state.launched += 1
        self.logger.info(
            "scheduled_run_started",
            job=job.name,
            fire_time=utc_text(fire_s),
            run_dir=str(handle.run_dir),
            pid=handle.pid,
            catch_up=catch_up,
        )
        return Decision(job.name, "launched", fire_s, handle.run_dir, catch_up)

    # ------------------------------------------------------------------ running
    def next_wake_s(self) -> float:
        """Seconds until the next fire time of any job, at most ``poll_s``."""
        now = self.clock.time()
        wake = now + self.poll_s
        for job in self._jobs.values():
            if job.state is not None and job.cron is not None and job.state.next_s is not None:
                wake = min(wake, job.state.next_s)
        return max(0.0, wake - now)

    def run(self, stop: threading.Event) -> None:
        """Tick until ``stop`` is set, sleeping until the next fire time (at most ``poll_s``).
        An unexpected error in a tick is logged and the scheduler goes on."""
        self.logger.info("scheduler_started", jobs_dir=str(self.jobs_dir))
        while not stop.is_set():
            try:
                self.tick()
            except Exception:
                self.logger.exception("scheduler_tick_failed")
            self.clock.sleep(self.next_wake_s(), stop)
        self.logger.info("scheduler_stopped", jobs_dir=str(self.jobs_dir))


def _runs(job_dir: Path) -> list[Path]:
    """The job's run directories, newest first (names are UTC stamps)."""
    runs = job_dir / "runs"
    if not runs.is_dir():
        return []
    return sorted((p for p in runs.iterdir() if p.is_dir() and not p.is_symlink()), reverse=True)
