"""CrawlHistory: what earlier fetches of a URI returned, and where each payload was first captured.

Two tables in one LevelDB under the run's ``state/history`` (plyvel is wrapped here only):

* fetch history, ``b"f" + URI`` -> the latest :class:`FetchHistoryEntry` of that URI (status,
  time, payload digest, ETag, Last-Modified, the WARC record that holds the capture).
  FetchHTTP reads it to send ``If-None-Match`` / ``If-Modified-Since``; a 304 becomes a
  revisit of that record.
* digest history, ``b"d" + "sha1:…"`` -> :class:`DigestHistoryEntry`, the first capture of a
  payload (URI, WARC-Date, record id, file, offset) and how many captures had that payload. The
  WARC writer reads it to write ``identical-payload-digest`` revisits (URL-agnostic dedup).

``import_from`` names the state directory (or run directory) of a finished earlier crawl; its
history is consulted, read-only, after this run's own, so a recrawl can send conditional
requests and write revisits against the earlier crawl's WARCs. A ``--workers`` run keeps one
history per worker (``workers/<id>/state/history``): all of them are imported. Each imported
database is first snapshotted into ``state/history-import/<n>/`` (its immutable table files
hard-linked where the file system allows, the rest copied; kept for a resumed crawl, which
uses them even if the earlier run is gone by then), because
LevelDB lets one process open a directory: every worker of a ``--workers`` recrawl opens its own
snapshot. Nothing is ever written to the earlier crawl's files (it must not be running).

Thread-safe: reads run at once in any number of threads; writes (each ``record_*``, with its
read-merge-write) take one write lock, local disk only, never network I/O under it. A write that
fails for a full disk waits for space (:class:`~crawler.disk.SpaceWait`), then the database is
reopened with no reader inside (:class:`~crawler.disk.reopen_gate.ReopenGate`; LevelDB's log may
end in a half record after which later records would not survive a reopen) and the write made
again: holding the write lock from failure to reopen, no other write lands on that log.
Heritrix counterpart:
``PersistStoreProcessor`` / ``FetchHistoryProcessor`` (fetch history) and the
``ContentDigestHistory`` store used by ``ContentDigestHistoryLoader`` /
``ContentDigestHistoryStorer`` (URL-agnostic dedup).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import plyvel

from crawler.disk import SPACE_WAIT, is_disk_full
from crawler.disk.reopen_gate import ReopenGate

if TYPE_CHECKING:
    from crawler.curi import CrawlURI

_FETCH = b"f"
_DIGEST = b"d"
HISTORY_DIR = "history"
"""Directory of the history database under the state directory."""
IMPORT_DIR = "history-import"
"""Directory, under the state directory, of the snapshots of imported histories."""
IMPORT_SOURCE_FILE = "IMPORTED-FROM"
"""File in each snapshot naming the database it was taken from (so a later crawl importing this
one can follow the chain of earlier crawls back)."""


@dataclass(frozen=True, slots=True)
class FetchHistoryEntry:
    """The latest fetch of one URI. The ``warc_*`` fields name the record holding its payload
    (the original ``response`` when the fetch itself was written as a revisit)."""

    status: int
    fetch_time_s: float
    payload_digest: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    warc_record_id: str | None = None
    warc_date: str | None = None
    warc_filename: str | None = None
    warc_offset: int | None = None
    warc_target_uri: str | None = None
    """URI of the record holding the payload when it is another URI's (URL-agnostic dedup)."""


@dataclass(frozen=True, slots=True)
class DigestHistoryEntry:
    """First capture of a payload digest and how many captures (including it) had that payload."""

    uri: str
    warc_date: str
    warc_record_id: str | None = None
    warc_filename: str | None = None
    warc_offset: int | None = None
    count: int = 1


def _encode(entry: FetchHistoryEntry | DigestHistoryEntry) -> bytes:
    # The fields in order (what dataclasses.astuple gives, without its deep copying).
    values = [getattr(entry, name) for name in type(entry).__slots__]
    return _JSON.encode(values).encode()


_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
"""What ``json.dumps(..., separators=(",", ":"), ensure_ascii=False)`` writes, without a new
encoder per call (thread-safe: an encoder keeps no state between calls)."""


def _validators(curi: CrawlURI) -> tuple[str | None, str | None]:
    """The response's first ``ETag`` and first ``Last-Modified`` (names case-insensitive), as
    ``curi.header`` gives each, in one pass over the headers."""
    etag = last_modified = None
    for key, value in curi.response_headers:
        name = key.lower()
        if name == "etag":
            if etag is None:
                etag = value
        elif name == "last-modified" and last_modified is None:
            last_modified = value
    return etag, last_modified


def _resolve_import(path: Path) -> list[Path]:
    """The history LevelDBs of an earlier crawl: inside a state dir, a run dir, or the database
    directory itself, and every ``workers/<id>/state/history`` of a ``--workers`` run dir."""
    found: list[Path] = []
    for candidate in (path / HISTORY_DIR, path / "state" / HISTORY_DIR, path):
        if (candidate / "CURRENT").is_file():
            found.append(candidate)
            break
    workers = path / "workers"
    if workers.is_dir():
        for worker in sorted(workers.iterdir()):
            candidate = worker / "state" / HISTORY_DIR
            if (candidate / "CURRENT").is_file():
                found.append(candidate)
    if not found:
        raise FileNotFoundError(f"no crawl history database under {path}")
    return found


def history_databases(path: Path) -> list[Path]:
    """The history databases ``history.import_from`` (``path``) names, as a crawl opens them;
    ``FileNotFoundError`` if there is none (checked before a run directory is made)."""
    return _resolve_import(path)


def _snapshot_sources(snapshots: Path) -> list[Path]:
    """The databases the complete snapshots under ``snapshots`` were taken from, in order."""
    found: list[tuple[int, Path]] = []
    for marker in snapshots.glob(f"*/{IMPORT_SOURCE_FILE}"):
        if marker.parent.name.isdigit():
            found.append((int(marker.parent.name), Path(marker.read_text(encoding="utf-8"))))
    return [source for _, source in sorted(found)]


@contextlib.contextmanager
def _locked(source: Path, wait_s: float) -> Iterator[None]:
    """Hold LevelDB's own lock on ``source`` (its ``LOCK`` file, as LevelDB takes it) while the
    snapshot is taken, so a running crawl's database is never copied half-written; another
    process taking a snapshot of it is waited for up to ``wait_s``. A database whose ``LOCK``
    cannot be opened for writing (a read-only copy) is copied unlocked.

    Raises ``ValueError`` if the lock stays taken (the earlier crawl is still running).
    """
    try:
        fd = os.open(source / "LOCK", os.O_RDWR)
    except OSError:
        yield
        return
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() >= deadline:
                    raise ValueError(
                        f"history import_from: {source} is in use (is that crawl still running?)"
                    ) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # releases the lock


def _snapshot(source: Path, dest: Path, lock_wait_s: float) -> Path:
    """A copy of the LevelDB ``source`` at ``dest`` (reused if a complete one of the same source
    is there): table files (immutable in LevelDB) hard-linked when possible, others copied."""
    marker = dest / IMPORT_SOURCE_FILE
    origin = str(source.resolve())
    if marker.is_file() and marker.read_text(encoding="utf-8") == origin:
        return dest
    partial = dest.with_name(dest.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.rmtree(dest, ignore_errors=True)
    partial.mkdir(parents=True)
    with _locked(source, lock_wait_s):
        for item in source.iterdir():
            if not item.is_file() or item.name == "LOCK":
                continue
            target = partial / item.name
            if item.suffix in (".ldb", ".sst"):
                try:
                    os.link(item, target)
                    continue
                except OSError:
                    pass
            shutil.copy2(item, target)
    (partial / IMPORT_SOURCE_FILE).write_text(origin, encoding="utf-8")
    partial.rename(dest)
    return dest


class CrawlHistory:
    """Fetch and payload-digest history of a crawl (see the module docstring)."""

    def __init__(
        self,
        db: Any,
        imported: list[Any] | None = None,
        path: Path | None = None,
        imported_from: list[Path] | None = None,
    ) -> None:
        self._db = db
        self._imported: list[Any] = imported or []
        self.imported_from: list[Path] = imported_from or []
        """The earlier crawl's history databases (as found, not their snapshots)."""
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._gate = ReopenGate()
        self.path = path

    @classmethod
    def open(
        cls, state_dir: Path, import_from: Path | None = None, lock_wait_s: float = 30.0
    ) -> CrawlHistory:
        """Open (creating if missing) ``state_dir/history``; ``import_from`` read-only beside it.

        Raises ``FileNotFoundError`` if ``import_from`` holds no history database,
        ``ValueError`` if it is this crawl's own or is still in use after ``lock_wait_s`` (a
        running crawl; other processes snapshotting it hold it briefly), and ``OSError``
        (plyvel's ``IOError``) if this crawl's database is locked by a running process.
        """
        path = Path(state_dir) / HISTORY_DIR
        path.mkdir(parents=True, exist_ok=True)
        sources: list[Path] = []
        if import_from is not None:
            try:
                sources = _resolve_import(Path(import_from))
            except FileNotFoundError:
                # A resumed recrawl whose earlier run has gone since: its snapshots serve.
                sources = _snapshot_sources(Path(state_dir) / IMPORT_DIR)
                if not sources:
                    raise
        for source in sources:
            if source.resolve() == path.resolve():
                raise ValueError(f"history import_from {import_from} is this crawl's own history")
        imported: list[Any] = []
        try:
            for n, source in enumerate(sources):
                copy = _snapshot(source, Path(state_dir) / IMPORT_DIR / str(n), lock_wait_s)
                imported.append(plyvel.DB(str(copy), create_if_missing=False))
            db = plyvel.DB(str(path), create_if_missing=True)
        except Exception:
            for earlier in imported:
                earlier.close()
            raise
        return cls(db, imported, path, sources)

    # ----------------------------------------------------------------- fetch history
    def fetch_history(self, uri: str) -> FetchHistoryEntry | None:
        """The latest recorded fetch of ``uri`` (this run's first, then the imported crawl's)."""
        raw = self._get(_FETCH + uri.encode("utf-8", "surrogateescape"))
        return FetchHistoryEntry(*json.loads(raw)) if raw is not None else None

    def record_fetch(
        self,
        curi: CrawlURI,
        warc_record_id: str | None,
        warc_date: str | None,
        warc_filename: str | None = None,
        warc_offset: int | None = None,
        warc_target_uri: str | None = None,
    ) -> FetchHistoryEntry:
        """Remember this fetch of ``curi`` (status, fetch start, digest, ETag, Last-Modified).

        The ``warc_*`` arguments name the record holding the payload: for a revisit, the record
        it refers to (``warc_target_uri`` when that record is another URI's). For a revisit the
        digest is ``curi.revisit.payload_digest`` (else the previous entry's), never the empty
        304 body's, and validators a 304 omits are kept from the previous entry so the next
        conditional request still has them.
        """
        key = _FETCH + curi.uri.encode("utf-8", "surrogateescape")
        revisit = curi.revisit
        digest = revisit.payload_digest if revisit is not None else curi.payload_digest
        etag, last_modified = _validators(curi)
        if warc_target_uri == curi.uri:
            warc_target_uri = None
        with self._write_lock:
            if revisit is not None and not (digest and etag and last_modified):
                raw = self._get(key)
                if raw is not None:
                    prev = FetchHistoryEntry(*json.loads(raw))
                    digest = digest or prev.payload_digest
                    etag = etag or prev.etag
                    last_modified = last_modified or prev.last_modified
            entry = FetchHistoryEntry(
                status=curi.status,
                fetch_time_s=curi.fetch_start_ms / 1000.0,
                payload_digest=digest,
                etag=etag,
                last_modified=last_modified,
                warc_record_id=warc_record_id,
                warc_date=warc_date,
                warc_filename=warc_filename,
                warc_offset=warc_offset,
                warc_target_uri=warc_target_uri,
            )
            self._write(lambda db: db.put(key, _encode(entry)))
        return entry

    def record_new_capture(
        self,
        curi: CrawlURI,
        warc_record_id: str,
        warc_date: str,
        warc_filename: str | None,
        warc_offset: int | None,
        payload_digest: str,
    ) -> None:
        """:meth:`record_fetch` and :meth:`record_digest` of a full response whose payload
        :meth:`lookup_digest` just said is new, in one write (no read-back of either key)."""
        etag, last_modified = _validators(curi)
        fetch = FetchHistoryEntry(
            status=curi.status,
            fetch_time_s=curi.fetch_start_ms / 1000.0,
            payload_digest=curi.payload_digest,
            etag=etag,
            last_modified=last_modified,
            warc_record_id=warc_record_id,
            warc_date=warc_date,
            warc_filename=warc_filename,
            warc_offset=warc_offset,
        )
        digest = DigestHistoryEntry(curi.uri, warc_date, warc_record_id, warc_filename, warc_offset)
        fetch_key = _FETCH + curi.uri.encode("utf-8", "surrogateescape")
        digest_key = _DIGEST + payload_digest.encode("ascii", "replace")

        def write(db: Any) -> None:
            with db.write_batch() as wb:
                wb.put(fetch_key, _encode(fetch))
                wb.put(digest_key, _encode(digest))

        with self._write_lock:
            self._write(write)

    @property
    def has_imported(self) -> bool:
        """Whether an earlier crawl's history was imported (read-only) beside this one."""
        return bool(self._imported)

    # ----------------------------------------------------------------- digest history
    def lookup_digest(self, payload_digest: str) -> DigestHistoryEntry | None:
        """The first capture of ``payload_digest`` (``sha1:…``), or None if never captured."""
        raw = self._get(_DIGEST + payload_digest.encode("ascii", "replace"))
        return DigestHistoryEntry(*json.loads(raw)) if raw is not None else None

    def record_digest(
        self,
        payload_digest: str,
        uri: str,
        warc_date: str,
        warc_record_id: str | None = None,
        warc_filename: str | None = None,
        warc_offset: int | None = None,
    ) -> DigestHistoryEntry:
        """Count one more capture of ``payload_digest``; the first capture recorded wins.

        Returns the stored entry: the given capture if it is the first, else the original one
        with its count increased.
        """
        key = _DIGEST + payload_digest.encode("ascii", "replace")
        with self._write_lock:
            raw = self._get(key)
            if raw is None:
                entry = DigestHistoryEntry(
                    uri, warc_date, warc_record_id, warc_filename, warc_offset
                )
            else:
                old = DigestHistoryEntry(*json.loads(raw))
                entry = DigestHistoryEntry(
                    old.uri,
                    old.warc_date,
                    old.warc_record_id,
                    old.warc_filename,
                    old.warc_offset,
                    old.count + 1,
                )
            self._write(lambda db: db.put(key, _encode(entry)))
        return entry

    # ----------------------------------------------------------------- lifecycle
    def _get(self, key: bytes) -> bytes | None:
        gate = self._gate
        gate.enter()
        try:
            db, imported = self._db, self._imported
            if db is None:
                raise RuntimeError("CrawlHistory is closed")
            raw: bytes | None = db.get(key)
            for earlier in imported:
                if raw is not None:
                    break
                raw = earlier.get(key)
            return raw
        finally:
            gate.leave()

    def _write(self, write: Callable[[Any], None]) -> None:
        """``write(db)`` with the write lock held; a full disk: wait, reopen, write again."""
        # Writers need no gate: the database is only ever reopened under the write lock.
        while True:
            db = self._db
            if db is None:
                raise RuntimeError("CrawlHistory is closed")
            try:
                write(db)
                return
            except Exception as exc:
                if not is_disk_full(exc):
                    raise
                failure: BaseException = exc
            path = self.path
            if path is None:
                raise failure
            SPACE_WAIT.wait(path, "history", failure)
            with self._gate.exclusive():
                while True:
                    try:
                        self._reopen(path)
                        break
                    except Exception as exc:
                        if not is_disk_full(exc):
                            raise
                        SPACE_WAIT.wait(path, "history", exc)

    def _reopen(self, path: Path) -> None:
        """Close and reopen this run's database (no reader inside, the write lock held)."""
        db, self._db = self._db, None
        if db is not None:
            db.close()
        self._db = plyvel.DB(str(path), create_if_missing=True)

    def close(self) -> None:
        """Close both databases. Idempotent; never raises."""
        with self._lock:
            for db in (self._db, *self._imported):
                if db is not None:
                    with contextlib.suppress(Exception):
                        db.close()
            self._db = None
            self._imported = []

    def __enter__(self) -> CrawlHistory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def scan_fetch_history(path: Path) -> Iterator[tuple[str, FetchHistoryEntry]]:
    """Every URI of a closed crawl history (``path``: its state directory, run directory or the
    database itself) with its latest fetch, in the order of the URIs' UTF-8 bytes.

    Streams (one entry in memory at a time); the database is open while the iterator is, so
    exhaust or close it. Raises ``FileNotFoundError`` if there is no history under ``path`` and
    ``OSError`` (plyvel's ``IOError``) if a running crawl holds it; ``ValueError`` if ``path``
    holds several (a ``--workers`` run: scan each worker's). One thread per iterator."""
    found = _resolve_import(Path(path))
    if len(found) != 1:
        raise ValueError(f"{path}: {len(found)} crawl histories (a --workers run); scan each")
    db = plyvel.DB(str(found[0]), create_if_missing=False)
    try:
        for key, raw in db.iterator(prefix=_FETCH, fill_cache=False):  # a scan: no caching
            uri = key[len(_FETCH) :].decode("utf-8", "surrogateescape")
            yield uri, FetchHistoryEntry(*json.loads(raw.decode("utf-8", "surrogateescape")))
    finally:
        db.close()
