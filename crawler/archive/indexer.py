"""CdxjIndexer: one WARC file to one sorted CDXJ index, the format pywb and OutbackCDX read.

Each line is ``<SURT url key> <14-digit timestamp> <JSON>`` with ``url``, ``mime``, ``status``,
``digest``, ``length``, ``offset`` and ``filename`` (the WARC's file name, resolved by the
replay server against the WARC directories): the lines the ``cdxj-indexer`` package (the indexer
pywb's tools use) writes. ``response``, ``revisit`` and ``resource`` records are indexed;
``request`` and ``application/warc-fields`` ``metadata`` records are not. A response to a
request other than a GET (a browser page's POST) is keyed by its method and body, read from the
``request`` record written after it (:mod:`crawler.archive.method_query`: the key pywb looks a
replayed POST up by; ``method`` and ``requestBody`` join its JSON). Three ways to the
same lines, cheapest first: from the writer's entries (:class:`LocatedEntry`: what each URI's
first record holds and where; nothing is read), by reading a ``.warc.gz`` with a gzip member per
record with :class:`~crawler.archive.warc_scan.WarcScanner` (a third of the library's CPU), and
with ``cdxj-indexer`` itself for anything else (``.warc``, other layouts; its ``post_append``
keys such requests alike).

Bad input never raises: a WARC cut short (``kill -9``, a disk full, a ``.open`` file) is indexed
up to its last whole record; a corrupt one up to the record before the damage. Either way
:class:`IndexResult.problem` says what was wrong and where. An index is written to a temporary
name and renamed, so a reader (pywb) never sees half of one.

:class:`BackgroundIndexer` indexes WARC files the writer has closed on a thread of its own, so
the crawl's write path only enqueues a path and its entries. Thread-safety: one
:class:`CdxjIndexer` per thread; :class:`BackgroundIndexer.submit` may be called from any
thread.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import pickle
import queue
import threading
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, TypeAlias

import structlog

from crawler.archive.entry_spool import EntrySpool
from crawler.archive.run_layout import index_path
from crawler.archive.warc_scan import IndexEntry, WarcScanner, bounded_inflate

_log = structlog.get_logger("crawler.archive")
_CHECK_CHUNK_BYTES = 1024 * 1024


@dataclass(frozen=True)
class IndexResult:
    """What indexing one WARC gave: the index written, its line count, and any problem."""

    warc: Path
    index: Path | None
    records: int
    problem: str | None = None
    whole_bytes: int | None = None  # with a problem: the length holding only whole records


@functools.cache
def _indexer_class() -> Any:
    """The library's indexer, keeping its record iterator so the caller can tell where it
    stopped. Imported on first use: the library and its URL canonicalizer take a fifth of a
    second to import, which a crawl that never closes a WARC should not pay at start."""
    from cdxj_indexer.main import CDXJIndexer

    class _Indexer(CDXJIndexer):  # type: ignore[misc]  # untyped library class
        iterator: Any = None

        def _create_record_iter(self, input_: Any) -> Any:
            self.iterator = super()._create_record_iter(input_)
            return self.iterator

    return _Indexer


class CdxjIndexer:
    """Indexes WARC files into ``<indexes>/<WARC file name>.cdxj`` (see the module docstring)."""

    def __init__(self) -> None:
        self._scanner: WarcScanner | None = None

    def index(
        self,
        warc: Path,
        indexes: Path,
        entries: Entries | None = None,
    ) -> IndexResult:
        """Index ``warc`` into directory ``indexes`` (created if missing); never raises for a
        bad WARC (an unreadable one gives no index and a ``problem``). ``entries`` (see
        :meth:`BackgroundIndexer.submit`) spare reading the file."""
        if self._scanner is None:
            self._scanner = WarcScanner()
        if entries is not None:
            try:
                from_entries = self._lines_from(entries, warc.name)
            except (OSError, EOFError, pickle.UnpicklingError):
                from_entries = None  # a spool the disk refused or cut short: read the file
            if from_entries is not None:
                return self._write(warc, indexes, from_entries, None, None)
        if warc.name.endswith((".gz", ".gz.open")):
            try:
                scanned = self._scanner.scan(warc, warc.name)
            except (OSError, ValueError) as error:
                return IndexResult(warc, None, 0, f"cannot read: {error}")
            if scanned is not None:
                whole = scanned.whole_bytes if scanned.problem else None
                return self._write(warc, indexes, scanned.lines, scanned.problem, whole)
        return self._index_with_library(warc, indexes)

    def _lines_from(self, entries: Entries, name: str) -> list[str] | None:
        """The index lines of the writer's ``entries`` (one pass); None if any is missing."""
        assert self._scanner is not None
        lines = []
        for base, located in entries:
            if located is None:
                return None
            line = self._scanner.format(located.entry, base + located.offset, located.length, name)
            if line is not None:
                lines.append(line)
        return lines

    def _index_with_library(self, warc: Path, indexes: Path) -> IndexResult:
        out = io.StringIO()
        problem: str | None = None
        indexer: Any = None
        try:
            with warc.open("rb") as fh:
                indexer = _indexer_class()(out, [fh], filename=warc.name, post_append=True)
                indexer.process_all()
        except OSError as error:
            return IndexResult(warc, None, 0, f"cannot read: {error}")
        except Exception as error:  # noqa: BLE001 - any parse error of a damaged file is reported
            problem = f"damaged or cut short ({type(error).__name__}: {str(error)[:200]})"
        lines = out.getvalue().splitlines()
        whole_to = _whole_records_end(warc, indexer)
        if whole_to is not None:
            lines = [line for line in lines if _offset(line) < whole_to]
            problem = problem or f"cut short: indexed up to byte {whole_to}, its last whole record"
        elif problem is not None:
            whole_to = max((_end(line) for line in lines), default=0)
            problem += f"; indexed up to byte {whole_to}"
        return self._write(warc, indexes, lines, problem, whole_to)

    @staticmethod
    def _write(
        warc: Path, indexes: Path, lines: list[str], problem: str | None, whole: int | None
    ) -> IndexResult:
        lines.sort()
        indexes.mkdir(parents=True, exist_ok=True)
        target = index_path(indexes, warc)
        temp = target.with_name(target.name + ".tmp")
        temp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        os.replace(temp, target)
        return IndexResult(warc, target, len(lines), problem, whole)


def _offset(line: str) -> int:
    try:
        return int(json.loads(line.split(" ", 2)[2])["offset"])
    except (IndexError, KeyError, ValueError):
        return 0


def _end(line: str) -> int:
    try:
        fields = json.loads(line.split(" ", 2)[2])
        return int(fields["offset"]) + int(fields["length"])
    except (IndexError, KeyError, ValueError):
        return 0


def _whole_records_end(warc: Path, indexer: Any) -> int | None:
    """None if the file ends with the last record the iterator read, whole; else the offset
    every record before which is whole (bytes past it were cut short)."""
    iterator = indexer.iterator if indexer is not None else None
    info = getattr(iterator, "member_info", None)
    if not info:
        return None
    start, length = int(info[0]), int(info[1])
    with warc.open("rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        fh.seek(start)
        if warc.name.endswith((".gz", ".gz.open")):
            whole = _gzip_member_complete(fh, length)
        else:
            fh.seek(max(start, start + length - 4))
            whole = fh.read(4) == b"\r\n\r\n"
    if not whole:
        return start
    return start + length if start + length < size else None


def _gzip_member_complete(fh: io.BufferedReader, length: int) -> bool:
    decompressor = zlib.decompressobj(zlib.MAX_WBITS | 16)
    left = length
    while left > 0 and not decompressor.eof:
        chunk = fh.read(min(left, _CHECK_CHUNK_BYTES))
        if not chunk:
            break
        left -= len(chunk)
        try:
            for _ in bounded_inflate(decompressor, chunk):
                pass  # only whether the member ends matters; its output is dropped a step at a time
        except zlib.error:
            return False
    return decompressor.eof


class LocatedEntry(NamedTuple):
    """A record's index entry and where it lies in its URI's appended bytes."""

    offset: int  # from the start of the URI's records
    length: int
    entry: IndexEntry


def pack_located(located: LocatedEntry | None) -> tuple[Any, ...] | None:
    """``located`` as one flat tuple of plain values (pickled several times faster than the
    named tuples); :func:`unpack_located` gives it back. Pure."""
    return None if located is None else (located.offset, located.length, *located.entry)


def unpack_located(packed: tuple[Any, ...] | None) -> LocatedEntry | None:
    """The entry :func:`pack_located` packed."""
    return None if packed is None else LocatedEntry(packed[0], packed[1], IndexEntry(*packed[2:]))


Entries: TypeAlias = "Iterable[tuple[int, LocatedEntry | None]]"
"""The writer's ``(offset of a URI's records, entry of its first record)`` pairs of one file."""


class BackgroundIndexer:
    """Indexes WARC files handed to :meth:`submit` on one daemon thread, in order.

    ``indexes`` is the directory the indexes go to. :meth:`close` waits for the queue to drain.
    Results are logged (``warc_indexed`` with the thread's CPU seconds, ``warc_index_incomplete``)
    and kept in :attr:`results`.
    """

    def __init__(self, indexes: Path, indexer: CdxjIndexer | None = None) -> None:
        self.indexes = indexes
        self.results: list[IndexResult] = []
        self._indexer = indexer or CdxjIndexer()
        self._queue: queue.Queue[tuple[Path, Entries | None] | None]
        self._queue = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="warc-indexer", daemon=True)
        self._thread.start()

    def submit(self, warc: Path, entries: Entries | None = None) -> None:
        """Index ``warc`` soon (a closed WARC file). ``entries``: the writer's ``(offset of a
        URI's records, entry of its first record)`` for every append (a list, or an
        :class:`~crawler.archive.entry_spool.EntrySpool`, closed once indexed), from which the
        index is made without reading the file; with any entry None, or none given, the file
        is read. Cheap; any thread."""
        self._queue.put((warc, entries))

    def close(self, timeout_s: float | None = None) -> None:
        """Index what was submitted, then stop the thread. Idempotent."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join(timeout_s)

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            warc, entries = item
            started = time.thread_time()
            try:
                result = self._indexer.index(warc, self.indexes, entries)
            except OSError as error:  # the index directory cannot be written
                _log.error("warc_index_failed", warc=str(warc), error=str(error))
                continue
            finally:
                if isinstance(entries, EntrySpool):
                    entries.close()
            self.results.append(result)
            if result.problem:
                _log.warning("warc_index_incomplete", warc=str(warc), problem=result.problem)
            else:
                _log.info(
                    "warc_indexed",
                    warc=warc.name,
                    records=result.records,
                    from_writer=entries is not None and result.problem is None,
                    cpu_s=round(time.thread_time() - started, 4),
                )
            if warc.name.endswith(".open"):
                continue
            with contextlib.suppress(OSError):  # an index of the file while it was open
                index_path(self.indexes, warc.with_name(warc.name + ".open")).unlink()
