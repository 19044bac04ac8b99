"""SchedulerLock: at most one scheduler per jobs directory.

``crawler schedule JOBS_DIR`` and ``crawler console --jobs-dir JOBS_DIR`` both run the scheduler;
two at once would launch every run twice. The first takes an exclusive ``flock`` on
``JOBS_DIR/.scheduler/scheduler.lock`` and writes its PID there; the kernel drops the lock when
the process ends, even by ``kill -9``, so a stale lock never blocks a new scheduler. The
directory (not a job: its name starts with a dot) also holds the scheduler's application log,
``logs/crawler.jsonl`` and ``logs/alerts.log``. Not thread-safe: one owner.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

SCHEDULER_DIR = ".scheduler"
LOCK_FILE = "scheduler.lock"


class SchedulerLock:
    """The scheduler lock of ``jobs_dir``."""

    def __init__(self, jobs_dir: Path) -> None:
        self.dir = jobs_dir / SCHEDULER_DIR
        self.path = self.dir / LOCK_FILE
        self.logs_dir = self.dir / "logs"
        self._fd: int | None = None

    def acquire(self) -> bool:
        """Take the lock (True), or find it held by another process (False). OSError if the
        directory cannot be written."""
        self.dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        self._fd = fd
        return True

    def holder(self) -> str:
        """The PID written by the process holding the lock ("?" if unreadable)."""
        try:
            return self.path.read_text(encoding="ascii").strip() or "?"
        except OSError:
            return "?"

    def release(self) -> None:
        """Drop the lock (idempotent)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
