"""DiskGuard: pauses the crawl while the disk is nearly full and resumes it when space returns.

The controller's run loop calls :meth:`DiskGuard.check` on every turn; at most every
``check_interval_s`` it reads the free space of the file systems under the run directory
(the run directory itself, ``warcs/``, ``state/`` and ``logs/``, which may be symlinks to other
disks, and any directory a processor writes to elsewhere, given to :meth:`watch`). When the
fullest has less than ``min_free_mb`` free, :meth:`check` answers ``"pause"`` (at each such
reading) and the guard is *low*; once it has ``min_free_mb + resume_margin_mb`` free again,
``"resume"``. The margin keeps a crawl from flapping around the threshold. The controller
decides what to do with the answers (an operator's own pause is never undone by a resume).

A ``min_free_mb`` of 0 turns the guard off (:attr:`enabled` is False and :meth:`check` never
reads the disk). Writers that still hit a full disk wait in
:class:`~crawler.disk.space_wait.SpaceWait`. Called by the controller's thread only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from crawler.disk.disk_space import MIB, DiskSpace, SpaceReading

GuardAction = Literal["pause", "resume"] | None


class DiskGuard:
    """Watches the free space under a run directory (see the module docstring)."""

    def __init__(
        self,
        paths: list[Path],
        *,
        min_free_mb: float,
        resume_margin_mb: float,
        check_interval_s: float,
    ) -> None:
        self.space = DiskSpace(paths)
        self.min_free_bytes = int(min_free_mb * MIB)
        self.resume_bytes = int((min_free_mb + resume_margin_mb) * MIB)
        self.check_interval_s = check_interval_s
        self.low = False
        self.last: SpaceReading | None = None
        self.pauses = 0
        self._due = 0.0

    @property
    def enabled(self) -> bool:
        """Whether the guard watches at all (``min_free_mb`` > 0)."""
        return self.min_free_bytes > 0

    def watch(self, path: Path) -> None:
        """Also watch ``path``'s file system (a directory a processor writes to outside the
        run directory). Called while the crawl starts, before the guard's first reading."""
        if path not in self.space.paths:
            self.space.paths.append(path)

    def check(self, mono_s: float, *, force: bool = False) -> GuardAction:
        """Read the free space if due (or ``force``): ``"pause"`` at every reading below the
        threshold (so a crawl an operator resumed meanwhile pauses again), ``"resume"`` when it
        just came back above threshold + margin, else None."""
        if not self.enabled or (mono_s < self._due and not force):
            return None
        self._due = mono_s + self.check_interval_s
        reading = self.space.lowest()
        if reading is None:
            return None
        self.last = reading
        if reading.free_bytes < self.min_free_bytes:
            if not self.low:
                self.low = True
                self.pauses += 1
            return "pause"
        if self.low and reading.free_bytes >= self.resume_bytes:
            self.low = False
            return "resume"
        return None

    def reason(self) -> str:
        """Why the guard pauses the crawl, for the state line and ``crawler status``."""
        reading = self.last
        where = f" on {reading.path}" if reading is not None else ""
        free = f"{reading.free_mb} MiB free" if reading is not None else "free space unknown"
        return (
            f"Paused - disk space low{where}: {free}, below limits.min_free_disk_mb "
            f"{self.min_free_bytes / MIB:g}; resumes at {self.resume_bytes / MIB:g} MiB free"
        )

    def status(self) -> dict[str, Any]:
        """The guard's part of status.json."""
        reading = self.last
        return {
            "enabled": self.enabled,
            "low": self.low,
            "path": str(reading.path) if reading is not None else None,
            "free_mb": reading.free_mb if reading is not None else None,
            "min_free_mb": round(self.min_free_bytes / MIB, 1),
            "resume_free_mb": round(self.resume_bytes / MIB, 1),
            "pauses": self.pauses,
        }
