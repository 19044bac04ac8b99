"""The console's shared state: the workspace (jobs and runs), the launcher, and one
:class:`~crawler.console.monitor.RunMonitor` per run that someone looks at (the most recently
used ``MAX_MONITORS`` are kept). Thread-safe."""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path

from crawler.console.launcher import Launcher
from crawler.console.monitor import RunMonitor
from crawler.console.workspace import Workspace

MAX_MONITORS = 32


class ConsoleState:
    """Everything the API handlers share."""

    def __init__(self, workspace: Workspace, launcher: Launcher | None = None) -> None:
        self.workspace = workspace
        self.launcher = launcher or Launcher()
        self._monitors: OrderedDict[Path, RunMonitor] = OrderedDict()
        self._lock = threading.Lock()

    def monitor(self, run_dir: Path) -> RunMonitor:
        """The monitor of ``run_dir`` (created on first use)."""
        with self._lock:
            monitor = self._monitors.get(run_dir)
            if monitor is None:
                monitor = self._monitors[run_dir] = RunMonitor(run_dir)
                while len(self._monitors) > MAX_MONITORS:
                    self._monitors.popitem(last=False)
            else:
                self._monitors.move_to_end(run_dir)
            return monitor
