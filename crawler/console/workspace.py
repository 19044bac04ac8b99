"""The jobs and runs the console shows: ``<jobs_dir>/<job>/order.yaml`` and
``<jobs_dir>/<job>/runs/<yyyymmddThhmmssZ>/`` (the layout every run has), plus run directories
named on the command line (``crawler run ORDER --run-dir DIR --console``).

A run is addressed as ``<job>~<run>`` (both plain file names: letters, digits, ``._-``, not
starting with a dot), so an id can never climb out of the jobs directory; the resolved path is
checked to stay inside it too. Nothing here opens a crawl's state: a run's summary comes from
its ``status.json``. Thread-safe (reads the file system only; ``extra`` is fixed at start).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crawler.crawler_error import CrawlerError
from crawler.reports.status import read_status

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,199}$")
ORDER_FILE = "order.yaml"


class NotFoundError(CrawlerError, LookupError):
    """No such job, run, log or report (HTTP 404)."""


class BadNameError(CrawlerError, ValueError):
    """A name that is not a plain file name: a traversal attempt or garbage (HTTP 400)."""


def check_name(name: str, what: str) -> str:
    """``name`` if it is a plain file name (no separators, no leading dot), else BadNameError."""
    if not _NAME.match(name) or ".." in name:
        raise BadNameError(f"invalid {what} name {name[:80]!r}")
    return name


@dataclass(frozen=True)
class RunRef:
    """A run directory and its console id."""

    id: str
    job: str
    name: str
    path: Path


class Workspace:
    """Finds jobs and runs under ``jobs_dir``; ``extra`` run directories are shown as well."""

    def __init__(self, jobs_dir: Path, extra: list[Path] | None = None) -> None:
        self.jobs_dir = jobs_dir.resolve()
        self.extra: dict[str, RunRef] = {}
        for path in extra or []:
            self.add_extra(path)

    def add_extra(self, path: Path) -> RunRef:
        """Show the run directory ``path`` (outside ``jobs_dir`` or not); returns its ref."""
        path = path.resolve()
        inside = self._ref_inside(path)
        if inside is not None:
            return inside
        job = _safe_part(
            path.parent.parent.name if path.parent.name == "runs" else path.parent.name
        )
        ref = RunRef(f"{job}~{_safe_part(path.name)}", job, _safe_part(path.name), path)
        self.extra[ref.id] = ref
        return ref

    def _ref_inside(self, path: Path) -> RunRef | None:
        try:
            rel = path.relative_to(self.jobs_dir)
        except ValueError:
            return None
        parts = rel.parts
        if len(parts) == 3 and parts[1] == "runs" and all(_NAME.match(p) for p in parts):
            return RunRef(f"{parts[0]}~{parts[2]}", parts[0], parts[2], path)
        return None

    def job_dir(self, job: str) -> Path:
        """The directory of job ``job``; NotFoundError if there is none."""
        path = self.jobs_dir / check_name(job, "job")
        if not path.is_dir():
            raise NotFoundError(f"no job {job!r} in {self.jobs_dir}")
        return path

    def order_path(self, job: str) -> Path:
        """``<job>/order.yaml``; NotFoundError if the job has no order (e.g. ``crawler demo``'s)."""
        path = self.job_dir(job) / ORDER_FILE
        if not path.is_file():
            raise NotFoundError(f"job {job!r} has no {ORDER_FILE}")
        return path

    def job_names(self) -> list[str]:
        """Every job directory (with an order or with runs) and the jobs of extra runs, sorted."""
        names: list[str] = []
        if not self.jobs_dir.is_dir():
            return sorted({r.job for r in self.extra.values()})
        for entry in sorted(self.jobs_dir.iterdir()):
            has_any = (entry / ORDER_FILE).is_file() or (entry / "runs").is_dir()
            if entry.is_dir() and _NAME.match(entry.name) and has_any:
                names.append(entry.name)
        return sorted({*names, *(r.job for r in self.extra.values())})

    def runs_of(self, job: str) -> list[RunRef]:
        """Runs of ``job``, newest first (run names are UTC stamps, so names sort by time)."""
        refs = [r for r in self.extra.values() if r.job == job]
        if not refs or (self.jobs_dir / job).is_dir():
            runs_dir = self.job_dir(job) / "runs"
        else:
            return refs
        if runs_dir.is_dir():
            for entry in runs_dir.iterdir():
                if entry.is_dir() and not entry.is_symlink() and _NAME.match(entry.name):
                    refs.append(RunRef(f"{job}~{entry.name}", job, entry.name, entry))
        return sorted(refs, key=lambda r: r.name, reverse=True)

    def all_runs(self) -> list[RunRef]:
        """Runs of every job plus the extra ones, newest first."""
        refs = {r.id: r for r in self.extra.values()}
        for job in self.job_names():
            refs.update((r.id, r) for r in self.runs_of(job))
        return sorted(refs.values(), key=lambda r: r.name, reverse=True)

    def run(self, run_id: str) -> RunRef:
        """The run ``<job>~<run>``: BadNameError if malformed, NotFoundError if missing."""
        if run_id in self.extra:
            return self.extra[run_id]
        job, sep, name = run_id.partition("~")
        if not sep:
            raise BadNameError(f"invalid run id {run_id[:80]!r} (expected <job>~<run>)")
        check_name(job, "job")
        check_name(name, "run")
        path = (self.jobs_dir / job / "runs" / name).resolve()
        if not path.is_relative_to(self.jobs_dir) or not path.is_dir():
            raise NotFoundError(f"no run {run_id!r}")
        return RunRef(run_id, job, name, path)


def _safe_part(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".") or "run"
    return cleaned[:200]


def run_summary(ref: RunRef) -> dict[str, Any]:
    """The few facts a run list shows, from the run's ``status.json``."""
    doc = read_status(ref.path)
    summary: dict[str, Any] = {"id": ref.id, "job": ref.job, "name": ref.name}
    if doc is None:
        summary.update(state="UNKNOWN", alive=None)
        return summary
    summary.update(
        state="DIED" if doc.get("died") else doc.get("state", "UNKNOWN"),
        exit_status=doc.get("exit_status"),
        started=doc.get("started"),
        elapsed_s=doc.get("elapsed_s"),
        downloaded=doc.get("downloaded"),
        queued=doc.get("queued"),
        failed=doc.get("failed"),
        bytes=doc.get("bytes"),
        alive=doc.get("alive"),
    )
    return summary
