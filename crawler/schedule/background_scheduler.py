"""BackgroundScheduler: the scheduler of a jobs directory in a thread of its own.

``crawler schedule JOBS_DIR`` and ``crawler console`` both use it. :meth:`start` takes the
directory's :class:`~crawler.schedule.scheduler_lock.SchedulerLock` (else says which process
holds it), points the application log at ``JOBS_DIR/.scheduler/logs/`` (``crawler.jsonl``;
skipped runs and launch failures also in ``alerts.log``) and starts a daemon thread running
:meth:`Scheduler.run <crawler.schedule.scheduler.Scheduler.run>`. :meth:`stop` ends the thread
and releases the lock; the runs it launched go on (they are detached processes).
Thread-safe for one owner calling start/stop; the scheduler itself runs in its own thread only.
"""

from __future__ import annotations

import threading
from pathlib import Path

from crawler.clock import Clock
from crawler.logs.applog import close_app_logging, configure_app_logging
from crawler.schedule.scheduler import RunLauncher, Scheduler
from crawler.schedule.scheduler_lock import SchedulerLock


class BackgroundScheduler:
    """Runs a :class:`Scheduler` over ``jobs_dir`` in a thread, under the directory's lock."""

    def __init__(
        self,
        jobs_dir: Path,
        launcher: RunLauncher,
        *,
        clock: Clock | None = None,
        log_to_console: bool = True,
    ) -> None:
        self.jobs_dir = jobs_dir
        self.lock = SchedulerLock(jobs_dir)
        self.scheduler = Scheduler(jobs_dir, launcher, clock=clock)
        self.log_to_console = log_to_console
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def logs_dir(self) -> Path:
        """Where the scheduler's application log goes."""
        return self.lock.logs_dir

    def start(self) -> str | None:
        """Start scheduling: None, or why not (another scheduler holds the lock; no disk)."""
        try:
            if not self.lock.acquire():
                return (
                    f"another scheduler (pid {self.lock.holder()}) already runs the jobs of "
                    f"{self.jobs_dir} (crawler schedule or crawler console); stop it first"
                )
        except OSError as exc:
            return f"{self.lock.path}: cannot take the scheduler lock: {exc}"
        configure_app_logging(self.logs_dir, "info", self.log_to_console)
        self._thread = threading.Thread(
            target=self.scheduler.run, args=(self._stop,), name="scheduler", daemon=True
        )
        self._thread.start()
        return None

    @property
    def running(self) -> bool:
        """Whether the scheduler thread runs."""
        return self._thread is not None and self._thread.is_alive()

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop the thread (it finishes its tick), release the lock. Idempotent."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
            self._thread = None
            close_app_logging()
        self.lock.release()
