"""LineFile: an append-only text file written a whole line at a time, that a full disk never
makes lose a line.

Each line is one ``write`` system call on a file opened with ``O_APPEND``, which the kernel
makes atomic: no lock and no buffer on the way, so threads never queue behind each other and a
line is in the file (surviving ``kill -9``) as soon as :meth:`LineFile.write` returns. A line
that a crash cut short (``kill -9`` can stop a write at a page boundary) is removed when the file
is opened again: readers never counted it, and the frontier's recovery logs its URI again.

A full disk (``ENOSPC``/``EDQUOT``) is the exception: the line is kept in memory (the backlog)
and written before any later line, by the next :meth:`~LineFile.write` or :meth:`~LineFile.flush`
that finds room (the crawl's controller flushes every log on each of its turns). A line the disk
took only part of is cut back off the file (so no half line stays in it) and kept whole. While
lines wait, later lines join the backlog behind them; the order of lines is kept. :meth:`close`
writes the backlog, waiting for space if it must (:class:`~crawler.disk.space_wait.SpaceWait`).

Thread-safe: :meth:`write` takes no lock unless lines are waiting; the backlog is written under
one lock.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from pathlib import Path

from crawler.disk import SPACE_WAIT, is_disk_full
from crawler.logs.growing_file import trim_partial_line


class LineFile:
    """The file at ``path``, opened for appending (created if missing)."""

    __slots__ = ("_backlog", "_fd", "_lock", "kept_lines", "path")

    def __init__(self, path: Path) -> None:
        self.path = path
        trim_partial_line(path)  # a line a crash cut short: readers never counted it
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._backlog: deque[bytes] = deque()
        self._lock = threading.Lock()
        self.kept_lines = 0
        """Lines that had to wait in memory for disk space so far."""

    @property
    def waiting_lines(self) -> int:
        """Lines in memory waiting for disk space."""
        return len(self._backlog)

    def write(self, text: str) -> None:
        """Append ``text`` as one line (a newline is added if missing). Never loses the line to
        a full disk; other ``OSError`` are raised."""
        data = (text if text.endswith("\n") else text + "\n").encode("utf-8", "backslashreplace")
        if self._backlog:
            self._keep(data)
            self.flush()
            return
        if not self._write_line(data):
            self._keep(data)

    def flush(self) -> bool:
        """Write the lines waiting for space, oldest first, as far as the disk lets; True when
        none is left waiting."""
        if not self._backlog:
            return True
        with self._lock:
            backlog = self._backlog
            while backlog:
                data = backlog[0]
                if not self._write_line(data):
                    return False
                backlog.popleft()
        return True

    def close(self) -> None:
        """Write what waits (waiting for disk space if need be), then close. Idempotent."""
        while not self.flush() and self._fd is not None:
            SPACE_WAIT.wait(self.path, self.path.name, OSError("no space for waiting lines"))
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    # ------------------------------------------------------------------ internals
    def _keep(self, data: bytes) -> None:
        self._backlog.append(data)
        self.kept_lines += 1

    def _write_line(self, data: bytes) -> bool:
        """Write ``data`` whole: True, or False if the disk is full (nothing of it stays in the
        file). A closed file swallows lines."""
        fd = self._fd
        if fd is None:
            return True
        written = 0
        try:
            written = os.write(fd, data)
            while written < len(data):  # only on a full disk or a signal: finish the line
                written += os.write(fd, data[written:])
        except OSError as exc:
            if self._fd is None:
                return True
            if not is_disk_full(exc):
                raise
            if written:
                _cut_off(fd, written)
            return False
        return True


def _cut_off(fd: int, written: int) -> None:
    """Take the last ``written`` bytes (the start of a line the disk refused the rest of) off
    the end of the file, unless another line has been appended after them since."""
    try:
        end = os.lseek(fd, 0, os.SEEK_CUR)
        if os.fstat(fd).st_size == end:
            os.ftruncate(fd, end - written)
    except OSError:
        pass
