"""LevelDBDigestIndex: a :class:`~crawler.continuity.digest_index.DigestIndex` in one LevelDB.

One process only (LevelDB's lock): a run's own index (``state/digest-index``) or a job's
(``jobs/NAME/digest-index``). Keys and values are :mod:`~crawler.continuity.digest_codec`'s;
the database keeps a bloom filter (10 bits a key), so the lookup of a payload never captured,
the common case, rarely reads a block.

Thread-safety: lookups run at once in any number of threads; :meth:`add` (read, then write if
absent) holds one lock, local disk only, never network I/O under it. A write that fails for a
full disk waits for space (:class:`~crawler.disk.SpaceWait`), then the database is reopened with
no reader inside (:class:`~crawler.disk.reopen_gate.ReopenGate`: LevelDB's log may end in a half
record after a failed write) and the write made again.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import plyvel

from crawler.continuity.digest_codec import decode_entry, digest_key, digest_of_key, encode_entry
from crawler.continuity.digest_entry import DigestEntry
from crawler.crawler_error import CrawlerError
from crawler.disk import SPACE_WAIT, is_disk_full
from crawler.disk.reopen_gate import ReopenGate

BLOOM_BITS = 10


_decoded = functools.lru_cache(maxsize=1024)(decode_entry)
""":func:`decode_entry` of a value found by a lookup, cached by its bytes (a pure function of
them; the entry is immutable): the payloads found again and again are a few (a site's logo,
style sheet, scripts), each decoded once."""


class DigestIndexBusyError(CrawlerError, OSError):
    """The index's LevelDB is open in another process (another run of the job)."""


def _open_db(path: Path) -> Any:
    try:
        return plyvel.DB(str(path), create_if_missing=True, bloom_filter_bits=BLOOM_BITS)
    except plyvel.Error as exc:
        if isinstance(exc, plyvel.IOError) and "lock" in str(exc).lower():
            raise DigestIndexBusyError(f"{path} is in use by another process ({exc})") from None
        raise OSError(f"{path}: {exc}") from None


class LevelDBDigestIndex:
    """Payload digest -> first capture, in the LevelDB at ``path`` (module docstring)."""

    def __init__(self, path: Path) -> None:
        """Open (creating if missing) the index at ``path``.

        Raises :class:`DigestIndexBusyError` if another process has it open, ``OSError`` if it
        cannot be created or is damaged.
        """
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self._db: Any = _open_db(self.path)
        self._write_lock = threading.Lock()
        self._gate = ReopenGate()

    def lookup(self, payload_digest: str) -> DigestEntry | None:
        raw = self._get(digest_key(payload_digest))
        return _decoded(raw) if raw is not None else None

    def add(self, payload_digest: str, entry: DigestEntry) -> DigestEntry:
        key = digest_key(payload_digest)
        with self._write_lock:
            # The handle is closed or reopened only under this lock: no gate needed here.
            db = self._db
            if db is None:
                raise RuntimeError(f"digest index {self.path} is closed")
            raw: bytes | None = db.get(key)
            if raw is not None:
                return decode_entry(raw)
            self._put(key, encode_entry(entry))
        return entry

    def entries(self) -> Iterator[tuple[str, DigestEntry]]:
        db = self._db
        if db is None:
            raise RuntimeError(f"digest index {self.path} is closed")
        # A snapshot: adds made while iterating are not seen, and the iterator is this thread's.
        with db.snapshot() as snap, snap.iterator() as it:
            for key, raw in it:
                yield digest_of_key(key), decode_entry(raw)

    def __len__(self) -> int:
        """How many digests are stored (counts them: O(n))."""
        db = self._db
        if db is None:
            return 0
        with db.iterator(include_value=False) as it:
            return sum(1 for _ in it)

    def compact(self) -> None:
        """Compact the whole database (its files then hold each entry once, compressed)."""
        with self._write_lock:
            db = self._db
            if db is not None:
                db.compact_range()

    def _get(self, key: bytes) -> bytes | None:
        gate = self._gate
        gate.enter()
        try:
            db = self._db
            if db is None:
                raise RuntimeError(f"digest index {self.path} is closed")
            raw: bytes | None = db.get(key)
            return raw
        finally:
            gate.leave()

    def _put(self, key: bytes, value: bytes) -> None:
        """Write with the write lock held; a full disk: wait, reopen, write again."""
        while True:
            db = self._db
            if db is None:
                raise RuntimeError(f"digest index {self.path} is closed")
            try:
                db.put(key, value)
                return
            except Exception as exc:
                if not is_disk_full(exc):
                    raise
                failure: BaseException = exc
            SPACE_WAIT.wait(self.path, "digest index", failure)
            with self._gate.exclusive():
                while True:
                    try:
                        old, self._db = self._db, None
                        if old is not None:
                            old.close()
                        self._db = _open_db(self.path)
                        break
                    except Exception as exc:
                        if not is_disk_full(exc):
                            raise
                        SPACE_WAIT.wait(self.path, "digest index", exc)

    def close(self) -> None:
        """Close the database once no lookup is inside it; later calls raise RuntimeError."""
        with self._write_lock, self._gate.exclusive():
            db, self._db = self._db, None
            if db is not None:
                with contextlib.suppress(Exception):
                    db.close()

    def __enter__(self) -> LevelDBDigestIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
