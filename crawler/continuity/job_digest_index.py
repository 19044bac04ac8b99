"""JobDigestIndex: the digest index a job keeps between crawls (``jobs/NAME/digest-index/``).

Every run of a job adds the payloads it captured first to one LevelDB beside ``runs/`` (order
key ``digest_index.job_index``), so the next crawl of the job writes revisits of them without any
setting. LevelDB is one process at a time, so a run never writes there while it crawls:

* A single-process run crawls with an index of its own (``state/digest-index``) in front of the
  job's, which it holds open read-only
  (:class:`~crawler.continuity.run_digest_index.RunDigestIndex`), and copies its entries into
  the job's when it ends. From its start until that copy, the file ``state/digest-index.pending``
  says it still owes them.
* A run that cannot have the job's index (another run of the job holds it) crawls without the
  earlier crawls' payloads (``digest_index_busy`` in alerts.log) and tries again at its end.
* A run killed before its end (or that found the index busy then too) keeps its marker; the
  next run that opens the job's index copies such runs' entries in first (a run whose own index
  is still open elsewhere, i.e. still crawling, is left for later). Copies are idempotent (first
  writer wins), so a run resumed after that copy does no harm copying again.
* A ``--workers`` crawl shares a Redis index (every worker process): the launcher loads the
  job's entries into it before the workers start (:meth:`JobDigestIndex.load_into`), and copies
  the crawl's entries back when they are done (:meth:`JobDigestIndex.save_from`), then deletes the
  Redis keys. Until then ``RUN_DIR/digest-index.redis-pending`` (JSON: Redis URL and key prefix)
  says so, and a later launcher of the job copies a killed crawl's keys in if they are still there.

Plain file work plus the indexes' own thread-safety; one caller at a time.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from crawler.continuity.digest_index import DigestIndex, copy_entries
from crawler.continuity.leveldb_digest_index import DigestIndexBusyError, LevelDBDigestIndex

RUN_INDEX_DIR = "digest-index"
"""A run's own index, under its state directory."""
PENDING_FILE = "digest-index.pending"
"""Beside a run's own index: its entries are not in the job's index yet."""
REDIS_PENDING_FILE = "digest-index.redis-pending"
"""In a ``--workers`` run directory: its Redis index is not in the job's index yet."""


def job_index_location(job_index: str | None, run_dir: Path) -> tuple[Path, Path | None] | None:
    """Where the job's index of the run at ``run_dir`` lives, and the job's ``runs/`` (None for
    a run in no job's ``runs/``): the order key ``digest_index.job_index`` resolved against the
    job directory (the one whose ``runs/`` holds ``run_dir``). None when the key is null, or
    relative and the run is in no job (a ``--run-dir`` elsewhere): it keeps its own index only."""
    if not job_index:
        return None
    run_dir = Path(run_dir).absolute()
    job_dir = run_dir.parent.parent if run_dir.parent.name == "runs" else None
    path = Path(job_index).expanduser()
    if not path.is_absolute():
        if job_dir is None:
            return None
        path = job_dir / path
    return path, job_dir / "runs" if job_dir is not None else None


class JobDigestIndex:
    """The job's index at ``path`` and the runs under ``runs_dir`` that owe it entries (None: no
    runs to look after, e.g. a run in no job writing to an absolute ``job_index``)."""

    def __init__(self, path: Path, runs_dir: Path | None, logger: Any = None) -> None:
        self.path = Path(path)
        self.runs_dir = Path(runs_dir) if runs_dir is not None else None
        self.logger = logger

    def open(self, own_state_dir: Path | None = None) -> LevelDBDigestIndex:
        """Open the job's index (creating it) and copy in what killed runs still owe it (but the
        run whose state directory is ``own_state_dir``). :class:`DigestIndexBusyError` if another
        process has it open."""
        index = LevelDBDigestIndex(self.path)
        try:
            self.merge_pending(index, own_state_dir)
        except Exception:
            index.close()
            raise
        return index

    def merge_pending(self, index: DigestIndex, own_state_dir: Path | None) -> int:
        """Copy into ``index`` the own index of each run still marked pending; returns how many
        entries were new. Runs still crawling (their index open elsewhere) are skipped."""
        if self.runs_dir is None:
            return 0
        own = own_state_dir.resolve() if own_state_dir is not None else None
        added = 0
        for marker in sorted(self.runs_dir.glob(f"*/state/{PENDING_FILE}")):
            state = marker.parent
            if state.resolve() == own:
                continue
            try:
                with LevelDBDigestIndex(state / RUN_INDEX_DIR) as earlier:
                    added += copy_entries(earlier.entries(), index)
            except DigestIndexBusyError:
                continue
            marker.unlink(missing_ok=True)
            self._log("digest_index_run_merged", run=str(state.parent))
        return added

    # ------------------------------------------------------------ --workers crawls
    def load_into(self, shared: Any, run_dir: Path, redis_url: str) -> int:
        """Before a ``--workers`` crawl: mark ``run_dir`` pending and load the job's entries
        into the crawl's Redis index ``shared`` (a
        :class:`~crawler.continuity.redis_digest_index.RedisDigestIndex`). Returns how many.
        :class:`DigestIndexBusyError` if another run holds the job's index (nothing loaded;
        the run stays pending all the same)."""
        marker = {"redis_url": redis_url, "prefix": shared.prefix}
        (run_dir / REDIS_PENDING_FILE).write_text(json.dumps(marker), encoding="utf-8")
        with self.open() as job:
            self._merge_pending_redis(job, type(shared), redis_url, shared.prefix)
            counted = _Counted(job.entries())
            shared.add_many(counted)
            return counted.n

    def save_from(self, shared: Any, run_dir: Path) -> int:
        """After a ``--workers`` crawl: copy the crawl's Redis index into the job's, delete the
        Redis keys and the pending mark. Returns how many entries were new to the job's.
        :class:`DigestIndexBusyError` if another run holds the job's index (then all stays)."""
        with self.open() as job:
            added = copy_entries(shared.entries(), job)
        shared.delete_all()
        (run_dir / REDIS_PENDING_FILE).unlink(missing_ok=True)
        return added

    def _merge_pending_redis(
        self, job: DigestIndex, backend: Any, redis_url: str, own_prefix: str
    ) -> None:
        """Copy in the Redis index of each killed ``--workers`` run whose keys are still there
        (same Redis, another prefix; a crawl of the job cannot be running: this one holds its
        name's lock)."""
        if self.runs_dir is None:
            return
        for marker in sorted(self.runs_dir.glob(f"*/{REDIS_PENDING_FILE}")):
            try:
                info = json.loads(marker.read_text(encoding="utf-8"))
                url, prefix = str(info["redis_url"]), str(info["prefix"])
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if url != redis_url or prefix == own_prefix:
                continue
            earlier = backend.connect(url, prefix)
            try:
                copy_entries(earlier.entries(), job)
                earlier.delete_all()
            finally:
                earlier.close()
            marker.unlink(missing_ok=True)
            self._log("digest_index_run_merged", run=str(marker.parent))

    def _log(self, event: str, **data: Any) -> None:
        if self.logger is not None:
            with contextlib.suppress(Exception):
                self.logger.info(event, **data)


class _Counted:
    """An iterator that counts what it yields."""

    def __init__(self, it: Iterator[Any]) -> None:
        self._it = it
        self.n = 0

    def __iter__(self) -> Iterator[Any]:
        for item in self._it:
            self.n += 1
            yield item
