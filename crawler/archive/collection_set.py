"""CollectionSet: the earlier collections a crawl deduplicates against (order key ``dedup``).

The order's ``dedup.collections`` names indexes of earlier crawls, each a sorted CDXJ/CDX file
(``{cdxj: path}``, :class:`~crawler.archive.cdxj_file.CdxjFileIndex`) or a CDX server
(``{cdx_server: URL}``, :class:`~crawler.archive.cdx_server.CdxServerIndex`).
:meth:`CollectionSet.lookup` answers, for a fetched URI and its payload digest, the latest
earlier capture of the *same URI* (same SURT key, computed with the ``surt`` package as pywb
and cdxj-indexer compute it) with the *same payload digest*; the WARC writer then writes an
``identical-payload-digest`` revisit that refers to it. Revisit lines are never referred to
(their payload is elsewhere). Indexes are asked in the order's order; the first that knows a
capture answers.

A lookup never fails a fetch: an index that raises is counted, alerted once
(``dedup_collection_lookup_failed``) and skipped.

Thread-safety: lookups run on many ToeThreads at once; every index is safe for concurrent
lookups, and the counters of :meth:`CollectionSet.report` change under a lock held for no I/O.
Heritrix counterpart: the DeDuplicator add-on's lookups in an index of earlier crawls.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from crawler.archive.cdx_server import CdxServerIndex
from crawler.archive.cdxj_file import CdxjFileIndex, IndexFileError
from crawler.archive.collection_index import Capture, CollectionIndex, digest_b32
from crawler.archive.surt_key import surt_urlkey
from crawler.crawler_error import CrawlerError

if TYPE_CHECKING:
    from crawler.order.schema import DedupConfig

_log = structlog.get_logger("crawler.archive")


class CollectionSetError(CrawlerError):
    """A collection of ``dedup.collections`` cannot be opened; ``path`` is its YAML path."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path


class CollectionSet:
    """The earlier collections of a crawl (see the module docstring)."""

    def __init__(
        self,
        indexes: Sequence[CollectionIndex],
        urlkey: Callable[[str], str] = surt_urlkey,
    ) -> None:
        self.indexes = list(indexes)
        self._urlkey = urlkey
        self._lock = threading.Lock()
        self._lookups = 0
        self._hits: dict[str, int] = {index.name: 0 for index in self.indexes}
        self._failures: dict[str, int] = {}

    @classmethod
    def open(
        cls, config: DedupConfig, base_dir: Path, state_dir: Path, logger: Any = None
    ) -> CollectionSet | None:
        """The collections ``config`` names (paths relative to ``base_dir``; gzipped files
        unpacked under ``state_dir``), or None when it names none. Raises
        :class:`CollectionSetError` naming the first collection that cannot be opened."""
        if not config.collections:
            return None
        indexes: list[CollectionIndex] = []
        try:
            for n, spec in enumerate(config.collections):
                where = f"dedup.collections[{n}]"
                if spec.cdxj is not None:
                    path = Path(base_dir) / Path(spec.cdxj).expanduser()
                    try:
                        indexes.append(CdxjFileIndex.open(path, state_dir))
                    except IndexFileError as exc:
                        raise CollectionSetError(f"{where}.cdxj", str(exc)) from None
                elif spec.cdx_server is not None:
                    server = CdxServerIndex(
                        spec.cdx_server, config.timeout_s, config.retry_after_s, logger
                    )
                    indexes.append(server)
        except BaseException:
            for index in indexes:
                index.close()
            raise
        return cls(indexes)

    def lookup(self, url: str, digest: str) -> Capture | None:
        """The earlier capture of ``url`` with payload ``digest``, or None (module docstring)."""
        value = digest_b32(digest)
        if not value or not self.indexes:
            return None
        key = self._urlkey(url)
        found = None
        for index in self.indexes:
            try:
                found = index.find(url, key, value)
            except Exception as exc:  # noqa: BLE001 - an index that fails never fails a fetch
                self._failed(index, exc)
                continue
            if found is not None:
                break
        with self._lock:
            self._lookups += 1
            if found is not None:
                self._hits[found.source] = self._hits.get(found.source, 0) + 1
        return found

    def _failed(self, index: CollectionIndex, exc: Exception) -> None:
        with self._lock:
            first = index.name not in self._failures
            self._failures[index.name] = self._failures.get(index.name, 0) + 1
        if first:
            _log.warning(
                "dedup_collection_lookup_failed",
                collection=index.name,
                error=f"{type(exc).__name__}: {exc}",
                effect="fetches it would have answered are written in full",
            )

    def report(self) -> list[str]:
        """Lines for the processors report: lookups, and captures found per collection."""
        with self._lock:
            lookups, hits = self._lookups, dict(self._hits)
        lines = [f"  earlier collections: {lookups} lookups, {sum(hits.values())} found"]
        for index in self.indexes:
            line = f"    {index.name}: {hits.get(index.name, 0)} found"
            if isinstance(index, CdxServerIndex) and (index.failures or index.skipped):
                line += f", {index.failures} failed, {index.skipped} skipped while down"
            if self._failures.get(index.name):
                line += f", {self._failures[index.name]} lookups failed"
            lines.append(line)
        return lines

    def close(self) -> None:
        """Close every index. Idempotent; never raises."""
        for index in self.indexes:
            index.close()
