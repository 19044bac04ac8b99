"""Recurring crawls: a job's ``schedule:`` (a cron expression, UTC) run by a long-lived scheduler.

``crawler schedule JOBS_DIR`` and ``crawler console`` run the same :class:`Scheduler`. It watches
every ``JOBS_DIR/<job>/order.yaml`` with a ``schedule:``, launches ``crawler run`` at each fire
time, never while the job's previous run still runs (that fire time is skipped, logged and
alerted), and persists what it fired in ``JOBS_DIR/<job>/schedule-state.json`` so a restart
neither loses a run nor runs one twice (a fire time missed while it was down is run once).
``history.import_from: previous`` (:mod:`crawler.schedule.previous_run`) makes each run start
from its job's latest finished run's history, scheduled or not.

Modules: :mod:`~crawler.schedule.cron_schedule` (the one module using croniter; a leaf, which
the order schema imports only to check a ``schedule:``), :mod:`~crawler.schedule.schedule_state`
(read by ``crawler status`` and the console), :mod:`~crawler.schedule.previous_run` (called by
the crawl builder), :mod:`~crawler.schedule.scheduler`,
:mod:`~crawler.schedule.scheduler_lock` and :mod:`~crawler.schedule.background_scheduler`.
Names here are imported on first use, so importing one module costs nothing else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawler.lazy_names import lazy_names

if TYPE_CHECKING:
    from crawler.schedule.cron_schedule import CronError, CronSchedule
    from crawler.schedule.previous_run import latest_finished_run
    from crawler.schedule.schedule_state import JobScheduleState
    from crawler.schedule.scheduler import Scheduler

__all__ = ["CronError", "CronSchedule", "JobScheduleState", "Scheduler", "latest_finished_run"]

_HOMES = {
    "CronError": "crawler.schedule.cron_schedule",
    "CronSchedule": "crawler.schedule.cron_schedule",
    "JobScheduleState": "crawler.schedule.schedule_state",
    "Scheduler": "crawler.schedule.scheduler",
    "latest_finished_run": "crawler.schedule.previous_run",
}

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
