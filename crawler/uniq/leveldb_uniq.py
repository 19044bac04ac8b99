"""LevelDBUriUniqFilter: the default uniq filter, exact 64-bit fingerprints in LevelDB.

Keys are :func:`~crawler.uniq.uniq_filter.fingerprint` (3 bytes of the scheme+authority hash,
so a host's keys are adjacent, then the exact 64-bit hash of the canonical URI) under ``b"k"``
with an empty value; the count is kept under ``b"c"`` in the same write batch, so it survives a
restart or a kill -9 (LevelDB's log is replayed on open). ``b"f"`` records the fingerprint
function, ``b"v"`` the layout version: reopening with another function or an unknown version is
refused (the keys would not match). LevelDB's own Bloom filter (10 bits per key) lets a lookup
of a new fingerprint skip the disk blocks, and one of a recorded fingerprint skip the tables of
the levels that do not hold it; the read of the block that holds it is what the block cache
(``lru_cache_mb``) saves: a miss costs ~4x a hit, so the cache is sized to hold the seen set of a
crawl of a few million URIs (~18 B per URI on disk). Look-ups go in the batch's order: sorting a
batch's keys first bought nothing measurable (one host's keys share blocks either way).

``add_many_announced`` announces the new fingerprints' URIs under the lock, after the look-ups
and before the write: exactly the ones it then reports new.

Fast path: a :class:`~crawler.uniq.recent_keys.RecentKeys` cache of recently recorded or
confirmed fingerprints answers "already seen" without the lock or LevelDB. ``recorded`` looks
the others up in LevelDB without the lock (a recorded key is never removed, so its True is
final); a :class:`~crawler.disk.reopen_gate.ReopenGate` keeps ``close`` and the full-disk
reopen from closing the database under such a look-up.

A write that fails for a full disk waits for space, reopens the database (LevelDB's log may end
in a half record after the failure) and is made again under the same lock, so no URI is lost.

Heritrix counterpart: ``BdbUriUniqFilter`` (database ``alreadySeenUrl``). Thread-safe: one lock
around check-and-add (plyvel itself is thread-safe; the lock makes put-if-absent atomic).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import plyvel
from pydantic import Field

from crawler.disk import SPACE_WAIT
from crawler.disk.reopen_gate import ReopenGate
from crawler.params import Params
from crawler.uniq.recent_keys import RecentKeys
from crawler.uniq.uniq_filter import (
    FingerprintFunction,
    UniqStateError,
    UriUniqFilter,
    fingerprint,
)

_KEY = b"k"
_COUNT = b"c"
_FUNCTION = b"f"
_VERSION = b"v"
LAYOUT_VERSION = b"1"
_LEVELDB_BLOOM_BITS = 10


class LevelDBUriUniqFilterParams(Params):
    """Where the filter lives, how much it caches and how it fingerprints."""

    dir_name: str = Field("uniq", min_length=1, description="directory under state/")
    cache_size: int = Field(
        200_000, ge=0, description="recent fingerprints kept in RAM per generation (2 generations)"
    )
    lru_cache_mb: int = Field(
        128, ge=1, description="LevelDB block cache size (MiB); ~16-20 B per seen URI holds it all"
    )
    fingerprint: FingerprintFunction = Field(
        "mmh3", description="hash of the fingerprints: mmh3 (fast) or md5; fixed once created"
    )


class LevelDBUriUniqFilter(UriUniqFilter[LevelDBUriUniqFilterParams]):
    """Exact (64-bit) persistent uniq filter."""

    def __init__(self, params: LevelDBUriUniqFilterParams | None = None) -> None:
        super().__init__(params)
        self._db: Any = None
        self._count = 0
        self._lock = threading.Lock()
        self._gate = ReopenGate()  # look-ups of recorded() made outside the lock
        self._recent: RecentKeys[bytes] = RecentKeys(self.params.cache_size)
        self._function: FingerprintFunction = self.params.fingerprint
        self._path: Path | None = None
        self._holds_all = False  # opened empty with a cache: RecentKeys holds every key until
        # it drops some (RecentKeys.dropped), and recorded() needs no LevelDB until then

    def open(self, state_dir: Path) -> None:
        with self._lock:
            if self._db is not None:
                return
            path = Path(state_dir) / self.params.dir_name
            try:
                path.mkdir(parents=True, exist_ok=True)
                db = self._open_db(path)
            except (OSError, plyvel.Error) as exc:
                hint = (
                    " (is another crawl using this state directory?)"
                    if "lock" in str(exc).lower()
                    else ""
                )
                raise UniqStateError(f"cannot open the uniq filter at {path}: {exc}{hint}") from exc
            try:
                self._check_layout(db, path)
            except UniqStateError:
                db.close()
                raise
            raw = db.get(_COUNT)
            self._count = int.from_bytes(raw, "big") if raw else 0
            self._holds_all = self._count == 0 and self.params.cache_size > 0
            self._db = db
            self._path = path

    def _open_db(self, path: Path) -> Any:
        return plyvel.DB(
            str(path),
            create_if_missing=True,
            lru_cache_size=self.params.lru_cache_mb << 20,
            bloom_filter_bits=_LEVELDB_BLOOM_BITS,
        )

    def _reopen(self) -> None:
        """Close and reopen the database after a failed write (the lock held)."""
        assert self._path is not None
        with self._gate.exclusive():
            db, self._db = self._db, None
            if db is not None:
                db.close()
            self._db = self._open_db(self._path)

    def _put(self, fps: Iterable[bytes], count: int) -> None:
        """Write ``fps`` and the new count in one batch, waiting out a full disk (lock held)."""
        assert self._path is not None

        def write() -> None:
            with self._require().write_batch() as wb:
                for fp in fps:
                    wb.put(_KEY + fp, b"")
                wb.put(_COUNT, count.to_bytes(8, "big"))

        SPACE_WAIT.retry(write, self._reopen, self._path, "uniq")

    def _check_layout(self, db: Any, path: Path) -> None:
        version, function = db.get(_VERSION), db.get(_FUNCTION)
        if version is None:
            # A fresh directory, or one written before these records existed (always mmh3).
            if function is None:
                function = b"mmh3" if db.get(_COUNT) else self._function.encode()
            db.put(_FUNCTION, function)
            db.put(_VERSION, LAYOUT_VERSION)
            version = LAYOUT_VERSION
        if version != LAYOUT_VERSION:
            raise UniqStateError(
                f"the uniq filter at {path} has layout version {version.decode(errors='replace')}"
                f", this crawler reads version {LAYOUT_VERSION.decode()}"
            )
        if function != self._function.encode():
            raise UniqStateError(
                f"the uniq filter at {path} was built with fingerprint "
                f"{function.decode(errors='replace')!r}, the order says {self._function!r}: "
                "set frontier.uniq_filter.params.fingerprint to the first"
            )

    def _require(self) -> Any:
        if self._db is None:
            raise RuntimeError("LevelDBUriUniqFilter is not open")
        return self._db

    def add(self, canonical: str) -> bool:
        fp = fingerprint(canonical, self._function)
        recent = self._recent
        if fp in recent:
            return False
        with self._lock:
            db = self._require()
            if fp in recent or db.get(_KEY + fp) is not None:
                recent.remember(fp)
                return False
            self._put((fp,), self._count + 1)
            self._count += 1
            recent.remember(fp)
            return True

    def maybe_new(self, canonicals: list[str]) -> list[bool]:
        function = self._function
        return self._recent.unknown([fingerprint(c, function) for c in canonicals])

    def recorded(self, canonicals: list[str]) -> list[bool]:
        """Exact: the fingerprints RecentKeys does not hold are looked up in LevelDB (one get
        each, outside the lock: a recorded key is never removed, so a True stays true) — unless
        RecentKeys still holds every key recorded since the filter was opened empty (a young
        crawl), when its answer is exact alone."""
        function = self._function
        fps = [fingerprint(c, function) for c in canonicals]
        recent = self._recent
        out = [not unknown for unknown in recent.unknown(fps)]
        if all(out) or (self._holds_all and not recent.dropped):
            return out
        gate = self._gate
        gate.enter()
        try:
            get = self._require().get
            for i, fp in enumerate(fps):
                if not out[i]:
                    out[i] = get(_KEY + fp) is not None
        finally:
            gate.leave()
        return out

    def add_many(self, canonicals: Iterable[str]) -> list[bool]:
        return self._add_many(list(canonicals), None)

    def add_many_announced(
        self, canonicals: Sequence[str], announce: Callable[[list[str]], None]
    ) -> list[bool]:
        return self._add_many(list(canonicals), announce)

    def _add_many(
        self, canonicals: list[str], announce: Callable[[list[str]], None] | None
    ) -> list[bool]:
        function, recent = self._function, self._recent
        fps = [fingerprint(c, function) for c in canonicals]
        out = recent.unknown(fps)
        if not any(out):
            return out
        with self._lock:
            get = self._require().get
            # Looked up again under the lock: another thread may have recorded some meanwhile.
            known = recent.unknown(fps)
            fresh: dict[bytes, str] = {}
            for i, fp in enumerate(fps):
                if not out[i]:
                    continue
                if not known[i] or fp in fresh or get(_KEY + fp) is not None:
                    out[i] = False
                else:
                    fresh[fp] = canonicals[i]
            if fresh:
                if announce is not None:
                    announce(list(fresh.values()))
                self._put(fresh, self._count + len(fresh))
                self._count += len(fresh)
                recent.remember_many(fresh)
        return out

    def count(self) -> int:
        return self._count

    def memory_bytes(self) -> int:
        """What LevelDB reports holding in RAM: its block cache and memtables (not the table
        cache's index and filter blocks, nor pages of mapped table files); 0 when closed."""
        db = self._db
        raw = db.get_property(b"leveldb.approximate-memory-usage") if db is not None else None
        return int(raw) if raw else 0

    def close(self) -> None:
        with self._lock, self._gate.exclusive():
            db, self._db = self._db, None
            self._recent.clear()
        if db is not None:
            db.close()
