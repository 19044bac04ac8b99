"""Launching a job's crawl from the console, after validating its order the way ``crawler run``
and ``crawler validate`` do.

:func:`validate_launch` makes every check ``crawler run`` makes (the order with the overrides,
its components, the contact URL, the seeds, ...) and returns each problem by YAML path.
:class:`Launcher` then creates the run directory (``new_run_dir``: ``<job>/runs/<stamp>/`` and
``latest``) and starts ``python -m crawler run ORDER --run-dir RUN --no-display --set ...`` as a
detached process (its own session, so it outlives the console; its stdout and stderr go to
``RUN/launch.log``).
A thread per launch waits for the process, so it is reaped and its exit code is known.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crawler.console.auth import TOKEN_ENV
from crawler.order.errors import NO_VALUE, OrderError, OrderIssue

LAUNCH_LOG = "launch.log"


def issue_document(issue: OrderIssue) -> dict[str, Any]:
    """An order issue as JSON: path, message, value (its repr), hint and the full text."""
    value = None if issue.value is NO_VALUE else repr(issue.value)[:200]
    return {
        "path": issue.path,
        "message": issue.message,
        "value": value,
        "hint": issue.hint,
        "text": str(issue),
    }


def validate_launch(order_path: Path, sets: Sequence[str]) -> tuple[list[OrderIssue], list[str]]:
    """Problems that stop ``crawler run`` (issues: every check it makes,
    :func:`crawler.order.preflight.load_checked_order`) and those it only warns about."""
    from crawler.order.preflight import load_checked_order

    try:
        checked = load_checked_order(order_path, sets)
    except OrderError as exc:
        return exc.issues, []
    return [], list(checked.seeds.problems)


@dataclass
class Launch:
    """A crawl process this console started; ``exit_code`` is None while it runs."""

    run_dir: Path
    pid: int
    command: list[str]
    exit_code: int | None = None
    done: threading.Event = field(default_factory=threading.Event)

    def document(self) -> dict[str, Any]:
        return {"pid": self.pid, "exit_code": self.exit_code, "running": self.exit_code is None}


class Launcher:
    """Starts crawls and remembers them (by run directory). Thread-safe."""

    def __init__(self, python: str = sys.executable) -> None:
        self.python = python
        self._launches: dict[Path, Launch] = {}
        self._lock = threading.Lock()

    def launch(self, order_path: Path, job_dir: Path, sets: Sequence[str]) -> Launch:
        """Create a new run directory for the job and start the crawl in it."""
        from crawler.control.controller import new_run_dir

        run_dir = new_run_dir(job_dir)
        command = [self.python, "-m", "crawler", "run", str(order_path)]
        command += ["--run-dir", str(run_dir), "--no-display"]
        for item in sets:
            command += ["--set", item]
        env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
        env["PYTHONUNBUFFERED"] = "1"
        with (run_dir / LAUNCH_LOG).open("ab") as log:
            proc = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                close_fds=True,
                env=env,
                cwd=str(job_dir),
            )
        launch = Launch(run_dir.resolve(), proc.pid, command)
        with self._lock:
            self._launches[launch.run_dir] = launch
        threading.Thread(
            target=self._reap, args=(proc, launch), name=f"reap-{proc.pid}", daemon=True
        ).start()
        return launch

    @staticmethod
    def _reap(proc: subprocess.Popen[bytes], launch: Launch) -> None:
        launch.exit_code = proc.wait()
        launch.done.set()

    def get(self, run_dir: Path) -> Launch | None:
        """The launch of ``run_dir`` if this console started it."""
        with self._lock:
            return self._launches.get(run_dir.resolve())
