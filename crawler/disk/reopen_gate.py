"""ReopenGate: many threads use a database at once, or one thread reopens it alone.

A LevelDB handle must not be closed while another thread is inside one of its calls. Users
:meth:`~ReopenGate.enter` and :meth:`~ReopenGate.leave` around each call (a short lock each
time, never held across the call's I/O); :meth:`~ReopenGate.exclusive` waits until no one is
inside, keeps newcomers out and lets the holder close and reopen the handle. Thread-safe.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class ReopenGate:
    """Shared use of a handle, or exclusive use to replace it."""

    __slots__ = ("_closed", "_cond", "_lock", "_users")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._users = 0
        self._closed = False

    def enter(self) -> None:
        """Start a shared use (waits while the handle is being replaced)."""
        with self._lock:  # the plain lock: cheaper than the condition's wrapper
            if not self._closed:
                self._users += 1
                return
        with self._cond:
            while self._closed:
                self._cond.wait()
            self._users += 1

    def leave(self) -> None:
        """End a shared use begun with :meth:`enter`."""
        with self._lock:
            self._users -= 1
            if not self._users and self._closed:
                self._cond.notify_all()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Alone with the handle for the ``with`` block (the caller must not be inside)."""
        with self._cond:
            while self._closed:
                self._cond.wait()
            self._closed = True
            while self._users:
                self._cond.wait()
        try:
            yield
        finally:
            with self._cond:
                self._closed = False
                self._cond.notify_all()
