"""JobRun: the runs of a job directory, and which of them finished.

A job directory holds one directory per run, ``runs/<yyyymmddThhmmssZ>/`` (names sort by start
time), and ``latest``, a link to the newest. A run's state comes from its ``status.json``
(:func:`~crawler.reports.status.read_status`); a ``--workers`` run (``distributed.json`` at its
top) from every ``workers/*/status.json``: finished when all workers finished, running while any
runs, died when some worker died (or never wrote its status) and none runs.

``crawler replay JOB_DIR`` and ``crawler wacz JOB_DIR --runs all`` take the finished runs and
name the others (a run still being written, or one that died mid-crawl, is left out: its WARCs
may end in a half record and its history may still change). :func:`imported_crawl` says which
earlier crawl a run imported its history from: the run or state directory its
``order.effective.yaml`` names in ``history.import_from`` (where the crawl records what a
``previous`` resolved to). File-system reads only; thread-safe.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from crawler.reports.status import read_status

FINISHED = "finished"
RUNNING = "running"
DIED = "died"
UNKNOWN = "unknown"
_DISTRIBUTED_FILE = "distributed.json"  # as crawler.distributed.run_info writes it
_ORDER_FILE = "order.effective.yaml"


@dataclass(frozen=True)
class JobRun:
    """One run directory of a job and its state (``finished``, ``running``, ``died`` or
    ``unknown``: no status file)."""

    path: Path
    state: str

    @property
    def finished(self) -> bool:
        """Whether the run's crawl ended (normally or not) with every process that wrote it."""
        return self.state == FINISHED

    def describe(self) -> str:
        """``RUN_DIR (still running)`` and the like, for a line naming a run left out."""
        why = {
            RUNNING: "still running",
            DIED: "died before it finished",
            UNKNOWN: "no status.json",
        }.get(self.state, self.state)
        return f"{self.path} ({why})"


def is_job_dir(path: Path) -> bool:
    """Whether ``path`` is a job directory (it has ``runs/``) rather than a run directory."""
    return (path / "runs").is_dir() and not (path / "logs").is_dir()


def run_state(run_dir: Path) -> str:
    """The state of the run in ``run_dir`` (see the module docstring)."""
    if (run_dir / _DISTRIBUTED_FILE).is_file():
        workers = sorted(p for p in (run_dir / "workers").glob("*") if p.is_dir())
        states = [run_state(w) for w in workers]
        if not states:
            return UNKNOWN
        if RUNNING in states:
            return RUNNING
        return FINISHED if all(s == FINISHED for s in states) else DIED
    doc = read_status(run_dir)
    if doc is None:
        return UNKNOWN
    if doc.get("state") == "FINISHED":
        return FINISHED
    return DIED if doc.get("died") else RUNNING


def job_runs(job_dir: Path) -> list[JobRun]:
    """Every run of the job, oldest first (``runs/*`` directories; links are skipped)."""
    runs_dir = job_dir / "runs"
    if not runs_dir.is_dir():
        return []
    paths = sorted(
        p for p in runs_dir.iterdir() if p.is_dir() and not p.is_symlink() and p.name[:1] != "."
    )
    return [JobRun(p, run_state(p)) for p in paths]


def run_order(run_dir: Path) -> dict[str, object] | None:
    """The order a run ran with (its ``order.effective.yaml``; a ``--workers`` run's first
    worker's), as plain YAML data; None if there is none or it does not parse."""
    workers = sorted(p for p in (run_dir / "workers").glob("*") if p.is_dir())
    for base in (run_dir, *workers):
        try:
            data = yaml.safe_load((base / _ORDER_FILE).read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, yaml.YAMLError, UnicodeDecodeError):
            return None
        return data if isinstance(data, dict) else None
    return None


def crawl_dir_of(path: Path) -> Path:
    """The run directory of the crawl ``path`` names: a run directory itself, its ``state/``
    (or ``state/history``) directory, or one worker's run directory of a ``--workers`` run (the
    whole distributed run)."""
    path = path.resolve()
    if path.name == "history" and (path / "CURRENT").is_file():
        path = path.parent
    if path.name == "state" and ((path / "history").is_dir() or (path.parent / "logs").is_dir()):
        path = path.parent
    top = path.parent.parent
    if path.parent.name == "workers" and (top / _DISTRIBUTED_FILE).is_file():
        path = top
    return path


def imported_crawl(run_dir: Path) -> Path | None:
    """The run directory of the crawl whose history ``run_dir``'s order imported
    (``history.import_from``, relative to the order's directory; see :func:`crawl_dir_of`), or
    None if it imported none (or kept no history: ``history.enabled: false``)."""
    order = run_order(run_dir)
    history = order.get("history") if order else None
    if not isinstance(history, dict) or history.get("enabled") is False or order is None:
        return None  # a crawl without history imports none
    source = history.get("import_from")
    if not source:
        return None
    return crawl_dir_of(Path(str(order.get("base_dir") or ".")) / Path(str(source)).expanduser())
