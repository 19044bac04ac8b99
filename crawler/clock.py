"""Clock: the crawl's source of time, injectable so tests are deterministic without patching."""

from __future__ import annotations

import threading
import time
from typing import Protocol


class Clock(Protocol):
    """Wall and monotonic time plus an interruptible sleep. Implementations are thread-safe."""

    def time(self) -> float:
        """Seconds since the epoch (UTC), for timestamps in logs and WARCs."""
        ...

    def monotonic(self) -> float:
        """Seconds from an arbitrary origin that never goes backwards, for delays."""
        ...

    def sleep(self, seconds: float, wake: threading.Event | None = None) -> bool:
        """Sleep up to ``seconds``; return True early if ``wake`` is set."""
        ...


class SystemClock:
    """The real clock."""

    def time(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float, wake: threading.Event | None = None) -> bool:
        if wake is not None:
            return wake.wait(max(0.0, seconds))
        time.sleep(max(0.0, seconds))
        return False


class ManualClock:
    """A clock that moves only when told to (tests). ``sleep`` advances it."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def time(self) -> float:
        with self._lock:
            return self._now

    def monotonic(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds``."""
        with self._lock:
            self._now += seconds

    def sleep(self, seconds: float, wake: threading.Event | None = None) -> bool:
        if wake is not None and wake.is_set():
            return True
        self.advance(max(0.0, seconds))
        return False
