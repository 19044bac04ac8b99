"""StopSignals: SIGINT and SIGTERM end a crawl, the first one cleanly, the second one at once.

After :meth:`~StopSignals.install`, the first signal logs ``stop_requested`` and calls the
crawl's ``request_stop`` (the URIs in process finish, everything is written, exit 0); the second
logs ``forced_exit`` and leaves the process at once (``os._exit(1)``): the operator asked twice.
:meth:`~StopSignals.restore` puts the previous handlers back. Handlers are installed only on the
main thread (Python delivers signals there only), so a crawl run from another thread leaves its
host process's handlers alone.

Thread-safety: ``install`` and ``restore`` are called by the thread that runs the crawl; the
handler runs on the main thread between two bytecodes, so its counter needs no lock.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopSignals:
    """The stop handlers of one crawl's run: ``request_stop`` on the first signal, exit on the
    second."""

    def __init__(self, request_stop: Callable[[], None], logger: Any) -> None:
        self._request_stop = request_stop
        self._logger = logger
        self._signals = 0
        self._previous: dict[signal.Signals, Any] = {}

    def install(self) -> None:
        """Handle SIGINT and SIGTERM from now on (on the main thread only)."""
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                self._previous[sig] = signal.signal(sig, self._on_signal)

    def restore(self) -> None:
        """Put back the handlers that were there before :meth:`install`."""
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self._signals += 1
        if self._signals == 1:
            self._logger.warning("stop_requested", signal=signal.Signals(signum).name)
            self._request_stop()
        else:
            self._logger.error("forced_exit", signal=signal.Signals(signum).name)
            os._exit(1)
