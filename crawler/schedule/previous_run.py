"""``history.import_from: previous``: a run starts from its job's latest finished run's history.

A job is the directory of its ``order.yaml`` (the order's ``base_dir``); its runs are
``<job>/runs/<UTC stamp>/`` (names sort by start time). The previous run is the newest one whose
``status.json`` says ``FINISHED`` and that kept a history (``state/history``), or a ``--workers``
run (``workers/<id>/``) each of whose workers did both: a run still going,
one that died (``kill -9``, never resumed to its end) or one run with ``history.enabled: false``
is passed over, as is the run being started itself.

:func:`resolve_previous` is called once, when a run is laid out: the order it returns names the
run directory it found (so ``order.effective.yaml`` records it, a resume imports the same run, and
``crawler replay`` finds the captures revisits refer to), or no import at all when the job has no
finished run yet (its first run: the caller says so in the application log). Reads the file
system only; thread-safe.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from crawler.archive.job_runs import FINISHED, run_state

if TYPE_CHECKING:
    from crawler.order.schema import CrawlOrder

PREVIOUS = "previous"
"""The ``history.import_from`` value that names the job's latest finished run."""
HISTORY_DB = Path("state") / "history"


@dataclass(frozen=True)
class PreviousRun:
    """What ``previous`` resolved to: ``run_dir`` (None: the job has no finished run yet)."""

    job_dir: Path
    run_dir: Path | None


def latest_finished_run(job_dir: Path, exclude: Path | None = None) -> Path | None:
    """The newest run of ``job_dir`` that finished and kept a history; ``exclude`` (the run
    being started, or a directory inside it) is never returned."""
    runs = job_dir / "runs"
    if not runs.is_dir():
        return None
    skip = exclude.resolve() if exclude is not None else None
    for run in sorted((p for p in runs.iterdir() if p.is_dir()), reverse=True):
        if run.is_symlink():
            continue
        real = run.resolve()
        if skip is not None and (real == skip or real in skip.parents):
            continue
        if _finished_with_history(run):
            return real
    return None


def resolve_previous(order: CrawlOrder, run_dir: Path) -> tuple[CrawlOrder, PreviousRun | None]:
    """``order`` with ``history.import_from: previous`` replaced by the job's latest finished
    run (or by null when there is none), and what was found; ``order`` itself and None when it
    does not say ``previous``."""
    history = order.history
    if history.import_from != PREVIOUS or not history.enabled:
        return order, None
    job_dir = Path(order.base_dir).resolve()
    found = latest_finished_run(job_dir, exclude=run_dir)
    value = str(found) if found is not None else None
    new_history = history.model_copy(update={"import_from": value})
    resolved = order.model_copy(update={"history": new_history})
    return resolved, PreviousRun(job_dir, found)


def _finished_with_history(run: Path) -> bool:
    """``run`` (one process, or every worker of a ``--workers`` run) finished and kept a history."""
    if run_state(run) != FINISHED:
        return False
    workers = run / "workers"
    parts = [run] if not workers.is_dir() else sorted(p for p in workers.iterdir() if p.is_dir())
    return bool(parts) and all((part / HISTORY_DB).is_dir() for part in parts)
