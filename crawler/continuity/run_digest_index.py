"""RunDigestIndex: the digest index one run's WARC writers use, and how it is opened.

:func:`open_run_digest_index` composes, as one
:class:`~crawler.continuity.digest_index.DigestIndex`:

1. the run's own index, written as it crawls: ``state/digest-index`` (LevelDB) for a
   single-process run, or the crawl's Redis index (every worker of a ``--workers`` crawl);
2. behind it, read-only: the job's index of earlier crawls (single-process runs; see
   :mod:`crawler.continuity.job_digest_index`, the launcher does it for ``--workers``), then the
   own index of the crawl ``history.import_from`` names, when it has one (for ``--workers`` the
   launcher loads that one into the shared index too, with :func:`load_imported_into`: a
   LevelDB opens in one process only).

A payload found behind stays that earlier crawl's original. :meth:`RunDigestIndex.finish`
(the run's end) copies the run's own entries into the job's index. Thread-safe as its indexes
are; :meth:`~RunDigestIndex.finish` once, after the writers stopped.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawler.continuity.digest_entry import DigestEntry
from crawler.continuity.digest_index import DigestIndex, LayeredDigestIndex, copy_entries
from crawler.continuity.job_digest_index import PENDING_FILE, RUN_INDEX_DIR, JobDigestIndex
from crawler.continuity.leveldb_digest_index import DigestIndexBusyError, LevelDBDigestIndex

if TYPE_CHECKING:
    from crawler.frontier.redis.redis_ride import Ride


class RunDigestIndex:
    """One run's digest index (module docstring)."""

    def __init__(
        self,
        layers: LayeredDigestIndex,
        job: JobDigestIndex | None = None,
        job_index: LevelDBDigestIndex | None = None,
        state_dir: Path | None = None,
        logger: Any = None,
    ) -> None:
        self.layers = layers
        self.job = job
        self.job_index = job_index
        self.state_dir = state_dir
        self.logger = logger

    def lookup(self, payload_digest: str) -> DigestEntry | None:
        return self.layers.lookup(payload_digest)

    def add(self, payload_digest: str, entry: DigestEntry) -> DigestEntry:
        return self.layers.add(payload_digest, entry)

    def add_later(self, payload_digest: str, entry: DigestEntry) -> None:
        """:meth:`add` when no answer is needed (may be sent with the next lookup)."""
        self.layers.add_later(payload_digest, entry)

    def add_missed(self, payload_digest: str, entry: DigestEntry) -> None:
        """:meth:`add_later` of a digest :meth:`lookup` just missed (the read-only layers are
        not asked again: :meth:`LayeredDigestIndex.add_missed
        <crawler.continuity.digest_index.LayeredDigestIndex.add_missed>`)."""
        self.layers.add_missed(payload_digest, entry)

    def flush(self, payload_digest: str | None = None) -> None:
        """Send the entries :meth:`add_later` left waiting (given the page's payload digest,
        before a page's links are scheduled: only when its entry still waits)."""
        self.layers.flush(payload_digest)

    def carried_by_frontier(self) -> Callable[[], Ride | None] | None:
        """What a shared frontier calls before it queues URIs so the run's own waiting entries
        ride with it (:meth:`RedisDigestIndex.carried_by_frontier
        <crawler.continuity.redis_digest_index.RedisDigestIndex.carried_by_frontier>`); None
        when the run's own index sends nothing later (LevelDB)."""
        carried = getattr(self.layers.primary, "carried_by_frontier", None)
        return carried() if carried is not None else None

    def entries(self) -> Iterator[tuple[str, DigestEntry]]:
        return self.layers.entries()

    def finish(self) -> int:
        """The run ended: copy its own entries into the job's index (opening it now if it was
        busy at the start; still busy: the run stays pending). Returns how many were new."""
        if self.job is None or self.state_dir is None:
            return 0
        job_index: DigestIndex | None = self.job_index
        try:
            if job_index is None:
                job_index = self.job.open(self.state_dir)
                self.layers.behind.append(job_index)  # closed with the rest
            added = copy_entries(self.layers.primary.entries(), job_index)
        except DigestIndexBusyError as exc:
            _warn(self.logger, "digest_index_busy", path=str(self.job.path), error=str(exc))
            return 0
        (self.state_dir / PENDING_FILE).unlink(missing_ok=True)
        if self.logger is not None:
            self.logger.info("digest_index_saved", path=str(self.job.path), added=added)
        return added

    def close(self) -> None:
        self.layers.close()


def open_run_digest_index(
    state_dir: Path,
    *,
    job_index: Path | None = None,
    runs_dir: Path | None = None,
    import_from: Path | None = None,
    shared: DigestIndex | None = None,
    logger: Any = None,
) -> RunDigestIndex:
    """The digest index of the run whose state directory is ``state_dir``.

    ``shared``: the crawl's Redis index (a ``--workers`` worker) instead of ``state/digest-index``;
    the job's index is then the launcher's business and ``job_index`` is ignored. ``job_index``:
    the job's LevelDB (``runs_dir``: the job's ``runs/``, for runs that still owe it entries).
    ``import_from``: a run or state directory whose own index is consulted last, if it has one.
    Raises ``OSError`` / ``plyvel.Error`` if the run's own index cannot be opened.
    """
    state_dir = Path(state_dir)
    opened: list[DigestIndex] = []
    try:
        behind: list[DigestIndex] = []
        job = job_opened = None
        if shared is None and job_index is not None:
            job = JobDigestIndex(job_index, runs_dir, logger)
            state_dir.mkdir(parents=True, exist_ok=True)
            (state_dir / PENDING_FILE).touch()
            try:
                job_opened = job.open(state_dir)
                opened.append(job_opened)
                behind.append(job_opened)
            except DigestIndexBusyError as exc:
                _warn(logger, "digest_index_busy", path=str(job_index), error=str(exc))
        if import_from is not None and shared is None:
            imported = _imported_index(Path(import_from))
            if imported is not None and imported.resolve() != (state_dir / RUN_INDEX_DIR).resolve():
                earlier = LevelDBDigestIndex(imported)
                opened.append(earlier)
                behind.append(earlier)
        own = shared if shared is not None else LevelDBDigestIndex(state_dir / RUN_INDEX_DIR)
        layers = LayeredDigestIndex(own, behind)
    except BaseException:
        for layer in opened:
            layer.close()
        raise
    return RunDigestIndex(layers, job, job_opened, state_dir, logger)


def load_imported_into(shared: Any, import_from: Path) -> int:
    """Before a ``--workers`` crawl: add the own index of the crawl ``import_from`` names (a
    run or state directory; none: nothing) to the crawl's shared index ``shared`` (a
    :class:`~crawler.continuity.redis_digest_index.RedisDigestIndex`), first writer wins each.
    Returns how many entries were read. :class:`DigestIndexBusyError` if a running crawl holds
    it."""
    path = _imported_index(Path(import_from))
    if path is None:
        return 0
    earlier = LevelDBDigestIndex(path)
    try:
        count = 0

        def counted() -> Iterator[tuple[str, DigestEntry]]:
            nonlocal count
            for pair in earlier.entries():
                count += 1
                yield pair

        shared.add_many(counted())
        return count
    finally:
        earlier.close()


def _imported_index(path: Path) -> Path | None:
    """The own digest index of the run or state directory ``path``, if it has one."""
    for candidate in (path / "state" / RUN_INDEX_DIR, path / RUN_INDEX_DIR):
        if (candidate / "CURRENT").is_file():
            return candidate
    return None


def _warn(logger: Any, event: str, **data: Any) -> None:
    if logger is not None:
        with contextlib.suppress(Exception):
            logger.warning(event, **data)
