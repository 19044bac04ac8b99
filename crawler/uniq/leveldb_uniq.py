"""LevelDBUriUniqFilter: the default uniq filter, 64-bit fingerprints in LevelDB.

Keys are :func:`~crawler.uniq.uniq_filter.fingerprint` (authority prefix + exact 64-bit murmur3)
under ``b"k"``; the count is kept under ``b"c"`` in the same write batch, so it survives a restart.
A bounded in-memory cache of recently seen fingerprints answers the common "already seen" case
(navigation links repeated on every page) without touching LevelDB. The cache has two
generations: when the young one fills, it becomes the old one and the previous old is dropped.

Heritrix counterpart: ``BdbUriUniqFilter`` (database ``alreadySeenUrl``). Thread-safe: one lock
around check-and-add (plyvel itself is thread-safe; the lock makes put-if-absent atomic).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import plyvel
from pydantic import Field

from crawler.params import Params
from crawler.uniq.uniq_filter import UriUniqFilter, fingerprint

_KEY = b"k"
_COUNT = b"c"


class LevelDBUriUniqFilterParams(Params):
    """Where the filter lives and how much it caches."""

    dir_name: str = Field("uniq", min_length=1, description="directory under state/")
    cache_size: int = Field(
        200_000, ge=0, description="recent fingerprints kept in RAM per generation (2 generations)"
    )
    lru_cache_mb: int = Field(32, ge=1, description="LevelDB block cache size (MiB)")


class LevelDBUriUniqFilter(UriUniqFilter[LevelDBUriUniqFilterParams]):
    """Exact (64-bit) persistent uniq filter."""

    def __init__(self, params: LevelDBUriUniqFilterParams | None = None) -> None:
        super().__init__(params)
        self._db: Any = None
        self._count = 0
        self._lock = threading.Lock()
        self._young: set[bytes] = set()
        self._old: set[bytes] = set()

    def open(self, state_dir: Path) -> None:
        with self._lock:
            if self._db is not None:
                return
            path = Path(state_dir) / self.params.dir_name
            path.mkdir(parents=True, exist_ok=True)
            self._db = plyvel.DB(
                str(path), create_if_missing=True, lru_cache_size=self.params.lru_cache_mb << 20
            )
            raw = self._db.get(_COUNT)
            self._count = int.from_bytes(raw, "big") if raw else 0

    def _remember(self, fp: bytes) -> None:
        young = self._young
        young.add(fp)
        if len(young) > self.params.cache_size:
            self._old = young
            self._young = set()

    def _seen(self, db: Any, fp: bytes) -> bool:
        if fp in self._young or fp in self._old:
            return True
        if db.get(_KEY + fp) is not None:
            self._remember(fp)
            return True
        return False

    def _require(self) -> Any:
        if self._db is None:
            raise RuntimeError("LevelDBUriUniqFilter is not open")
        return self._db

    def add(self, canonical: str) -> bool:
        fp = fingerprint(canonical)
        with self._lock:
            db = self._require()
            if self._seen(db, fp):
                return False
            self._count += 1
            with db.write_batch() as wb:
                wb.put(_KEY + fp, b"")
                wb.put(_COUNT, self._count.to_bytes(8, "big"))
            self._remember(fp)
            return True

    def add_force(self, canonical: str) -> None:
        self.add(canonical)

    def add_many(self, canonicals: Iterable[str]) -> list[bool]:
        fps = [fingerprint(c) for c in canonicals]
        out: list[bool] = []
        with self._lock:
            db = self._require()
            batch: set[bytes] = set()
            for fp in fps:
                if fp in batch or self._seen(db, fp):
                    out.append(False)
                else:
                    batch.add(fp)
                    out.append(True)
            if batch:
                self._count += len(batch)
                with db.write_batch() as wb:
                    for fp in batch:
                        wb.put(_KEY + fp, b"")
                    wb.put(_COUNT, self._count.to_bytes(8, "big"))
                for fp in batch:
                    self._remember(fp)
        return out

    def count(self) -> int:
        return self._count

    def close(self) -> None:
        with self._lock:
            db, self._db = self._db, None
            self._young = set()
            self._old = set()
        if db is not None:
            db.close()
