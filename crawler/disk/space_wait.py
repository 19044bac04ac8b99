"""SpaceWait: the one place a writer that hit a full disk waits for space, then tries again.

Every writer of the crawl's durable data (WARC files, the LevelDB frontier, uniq filter and
history) calls :meth:`SpaceWait.wait` when a write fails with a full disk, after undoing what the
failed write left behind, and then repeats the write: a capture or a queued URI is never dropped
for lack of space. The wait polls the file system every ``poll_s`` until ``needed_bytes`` plus a
margin are free. The first wait of an episode is an alert (``disk_full_waiting``, alerts.log);
the end of it is logged (``disk_space_returned``). A crawl whose disk guard
(:class:`~crawler.disk.disk_guard.DiskGuard`) is on pauses well before this; the wait is for the
rest (a guard turned off, a disk filled by something else faster than the guard looks).

Waiting never gives up: a crawl asked to stop while its disk is full still writes what it holds
once space returns (a second Ctrl-C or SIGTERM ends the process at once). Thread-safe: any number
of threads may wait at once; none should hold a lock that the crawl's other threads need, other
than the lock of the store being written.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import structlog

from crawler.disk.disk_space import MIB, free_bytes, is_disk_full

T = TypeVar("T")

POLL_S = 0.25
"""How often a waiting writer looks at the free space."""
MARGIN_BYTES = 1 * MIB
"""Free space wanted beyond the bytes of the write itself before it is tried again."""


class SpaceWait:
    """Blocks a writer until its file system has room again (see the module docstring)."""

    def __init__(self, poll_s: float = POLL_S, margin_bytes: int = MARGIN_BYTES) -> None:
        self.poll_s = poll_s
        self.margin_bytes = margin_bytes
        self._lock = threading.Lock()
        self._waiting = 0
        self.waits = 0
        """Writes that had to wait for space so far (for tests and reports)."""

    @property
    def waiting(self) -> int:
        """Writers waiting for space right now."""
        return self._waiting

    def wait(self, path: Path, what: str, error: BaseException, needed_bytes: int = 0) -> None:
        """Block until ``path``'s file system has ``needed_bytes`` plus the margin free.

        ``what`` names the write (``"warc"``, ``"frontier"``, …) in the alert; ``error`` is the
        failure that sent the writer here.
        """
        logger: Any = structlog.get_logger("crawler")
        with self._lock:
            self._waiting += 1
            self.waits += 1
        started = time.monotonic()
        logger.warning(
            "disk_full_waiting",
            write=what,
            path=str(path),
            error=str(error),
            needed_bytes=needed_bytes,
        )
        try:
            want = needed_bytes + self.margin_bytes
            while True:
                try:
                    if free_bytes(path) >= want:
                        break
                except OSError:
                    pass
                time.sleep(self.poll_s)
        finally:
            with self._lock:
                self._waiting -= 1
        logger.info(
            "disk_space_returned",
            write=what,
            path=str(path),
            waited_s=round(time.monotonic() - started, 3),
        )

    def retry(
        self, write: Callable[[], T], recover: Callable[[], None], path: Path, what: str
    ) -> T:
        """``write()``; while it fails for a full disk: wait for space, ``recover()`` (undo what
        the failure left: for LevelDB, reopen the database), and write again. ``recover`` is
        itself repeated after a wait while the disk is still full."""
        while True:
            try:
                return write()
            except Exception as exc:
                if not is_disk_full(exc):
                    raise
                failure: BaseException = exc
            while True:
                self.wait(path, what, failure)
                try:
                    recover()
                    break
                except Exception as exc:
                    if not is_disk_full(exc):
                        raise
                    failure = exc


SPACE_WAIT = SpaceWait()
"""The process's writers share one: its counts cover every store."""
