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
history is opened as a second, read-only source consulted after this run's own, so a recrawl
can send conditional requests and write revisits against the earlier crawl's WARCs. Nothing is
ever written to it (LevelDB itself may tidy its log on open; the earlier crawl must not be running).

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
import json
import threading
from collections.abc import Callable
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
    return json.dumps(values, separators=(",", ":"), ensure_ascii=False).encode()


def resolve_import(path: Path) -> Path:
    """The history LevelDB inside a state dir, a run dir, or the database directory itself."""
    for candidate in (path / HISTORY_DIR, path / "state" / HISTORY_DIR, path):
        if (candidate / "CURRENT").is_file():
            return candidate
    raise FileNotFoundError(f"no crawl history database under {path}")


class CrawlHistory:
    """Fetch and payload-digest history of a crawl (see the module docstring)."""

    def __init__(self, db: Any, imported: Any = None, path: Path | None = None) -> None:
        self._db = db
        self._imported = imported
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._gate = ReopenGate()
        self.path = path

    @classmethod
    def open(cls, state_dir: Path, import_from: Path | None = None) -> CrawlHistory:
        """Open (creating if missing) ``state_dir/history``; ``import_from`` read-only beside it.

        Raises ``FileNotFoundError`` if ``import_from`` holds no history database and
        ``OSError`` (plyvel's ``IOError``) if a database is locked by a running process.
        """
        path = Path(state_dir) / HISTORY_DIR
        path.mkdir(parents=True, exist_ok=True)
        imported = None
        if import_from is not None:
            source = resolve_import(Path(import_from))
            if source.resolve() == path.resolve():
                raise ValueError(f"history import_from {import_from} is this crawl's own history")
            imported = plyvel.DB(str(source), create_if_missing=False)
        try:
            db = plyvel.DB(str(path), create_if_missing=True)
        except Exception:
            if imported is not None:
                imported.close()
            raise
        return cls(db, imported, path)

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
        etag = curi.header("ETag")
        last_modified = curi.header("Last-Modified")
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
        fetch = FetchHistoryEntry(
            status=curi.status,
            fetch_time_s=curi.fetch_start_ms / 1000.0,
            payload_digest=curi.payload_digest,
            etag=curi.header("ETag"),
            last_modified=curi.header("Last-Modified"),
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
        return self._imported is not None

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
            if raw is None and imported is not None:
                raw = imported.get(key)
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
            for db in (self._db, self._imported):
                if db is not None:
                    with contextlib.suppress(Exception):
                        db.close()
            self._db = self._imported = None

    def __enter__(self) -> CrawlHistory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
