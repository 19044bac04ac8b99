"""JobScheduleState: what the scheduler fired for one job, in ``<job>/schedule-state.json``.

Written atomically (a temporary file renamed over the old one) after every decision, so a
scheduler killed at any moment restarts from the last decision it made:

* ``last_fire_s``: the last fire time dealt with (its run launched, or skipped because the
  previous run still ran). The next run is the first fire time after it.
* ``pending``: written just before a launch, cleared just after. A restart that finds it looks
  for the run directory the launch made (a run newer than ``pending.newest_run`` with a
  ``launch.log``): found, the fire time was run; not found, it was not and is run now. So a
  crash between the two writes neither loses the run nor runs it twice.
* ``since_s``: when the scheduler first saw this schedule (or saw it changed): fire times before
  it are never caught up.
* ``next_s``, ``expression``, the last launch and skip, and which scheduler process wrote the
  file: what ``crawler status`` and the console show.

The file is read without importing anything heavy (``crawler status`` reads it). Not
thread-safe: one scheduler thread owns each job's state; readers only read the file.
"""

from __future__ import annotations

import json
import os
import socket
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

STATE_FILE = "schedule-state.json"


def utc_text(epoch_s: float | None) -> str:
    """``2026-11-27T03:00:00Z`` for a time in seconds, ``-`` for None."""
    if epoch_s is None:
        return "-"
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch_s))


@dataclass
class JobScheduleState:
    """One job's schedule state (see the module docstring for each field's meaning)."""

    expression: str = ""
    since_s: float | None = None
    last_fire_s: float | None = None
    next_s: float | None = None
    pending: dict[str, Any] | None = None
    last_run_dir: str | None = None
    last_pid: int | None = None
    last_launch_s: float | None = None
    last_skipped_s: float | None = None
    skipped: int = 0
    launched: int = 0
    last_error: str | None = None
    scheduler_pid: int | None = None
    scheduler_host: str | None = None
    updated_s: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, job_dir: Path) -> JobScheduleState | None:
        """The state saved in ``job_dir``, None if there is none or it is not a state file."""
        try:
            doc = json.loads((job_dir / STATE_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(doc, dict):
            return None
        known = {f.name for f in fields(cls)} - {"extra"}
        state = cls(extra={k: v for k, v in doc.items() if k not in known})
        for key in known & doc.keys():
            setattr(state, key, doc[key])
        return state

    def save(self, job_dir: Path, now_s: float) -> None:
        """Write the state atomically (temp file, fsync, rename); this process is its writer."""
        self.updated_s = now_s
        self.scheduler_pid = os.getpid()
        self.scheduler_host = socket.gethostname()
        doc = asdict(self)
        doc.update(doc.pop("extra"))
        path = job_dir / STATE_FILE
        tmp = path.with_name(f".{STATE_FILE}.{os.getpid()}.tmp")
        with tmp.open("w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)

    def scheduler_alive(self) -> bool | None:
        """Whether the process that last wrote this state still exists (None: another host)."""
        if self.scheduler_host != socket.gethostname() or not self.scheduler_pid:
            return None
        try:
            os.kill(int(self.scheduler_pid), 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def summary(self) -> dict[str, Any]:
        """The facts ``crawler status --json`` and the console show."""
        return {
            "expression": self.expression,
            "next": utc_text(self.next_s) if self.next_s is not None else None,
            "next_s": self.next_s,
            "last_fire": utc_text(self.last_fire_s) if self.last_fire_s is not None else None,
            "last_run_dir": self.last_run_dir,
            "last_skipped": (
                utc_text(self.last_skipped_s) if self.last_skipped_s is not None else None
            ),
            "launched": self.launched,
            "skipped": self.skipped,
            "last_error": self.last_error,
            "scheduler_running": self.scheduler_alive(),
        }

    def lines(self) -> list[str]:
        """Human-readable lines for ``crawler status``."""
        alive = self.scheduler_alive()
        where = "" if alive is not False else " (no scheduler is running: `crawler schedule`)"
        out = [f"schedule: {self.expression or '-'}; next run: {utc_text(self.next_s)}{where}"]
        if self.last_fire_s is not None:
            out.append(
                f"  last fire time: {utc_text(self.last_fire_s)}; runs started: "
                f"{self.launched}, skipped (previous run still running): {self.skipped}"
            )
        if self.last_error:
            out.append(f"  last error: {self.last_error}")
        return out


def job_dir_of(path: Path) -> Path | None:
    """The job directory ``path`` is or belongs to: a job directory (``order.yaml`` or
    ``runs/`` in it), or the job of a run directory ``<job>/runs/<run>``; None otherwise."""
    if (path / "order.yaml").is_file() or (path / "runs").is_dir():
        return path
    real = path.resolve()
    if real.parent.name == "runs":
        return real.parent.parent
    return None
