"""LevelDBQueueStore: the default QueueStore, one LevelDB directory under the run's ``state/``.

Record layout (byte-wise order is the crawl order within a queue):

* pending: ``b"p" + queue key (UTF-8) + 0x00 + 8-byte big-endian sort key`` -> serialized CrawlURI
* metadata: ``b"m" + name (UTF-8)`` -> value

Heritrix counterpart: ``BdbMultipleWorkQueues`` (its ``pending`` database). This is the only
frontier module that imports plyvel. A LevelDB directory can be opened by one process at a time:
``open`` raises :class:`~crawler.frontier.frontier.FrontierStateError` when another process holds
it, or when it is corrupt.

Deleting a queue's head leaves a tombstone that a seek from the queue's first key would step over
again until compaction; the store therefore remembers, per queue, a sort key below which every
record is known to be deleted and seeks from there. That floor is only a hint: it starts at 0 on
open, and only the :data:`FLOORS_KEPT` queues whose floor moved last keep theirs (a floor per
queue cost ~75 bytes of RAM for every queue ever visited). Not thread-safe (the frontier
serializes calls).

A write that fails for a full disk is not lost: LevelDB applied none of it, but its log may end
in a half record after which later records would not survive a reopen, so the store waits for
space (:class:`~crawler.disk.SpaceWait`), closes and reopens the database (which replays the
log up to the failure and starts a new one) and writes the batch again. Nothing acknowledged
before the failure is lost, and nothing is written between the failure and the reopen (calls
are serialized).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import plyvel
from pydantic import Field

from crawler.disk import SPACE_WAIT
from crawler.frontier.frontier import FrontierStateError
from crawler.frontier.store.queue_store import QueueStoreBase, StoreBatch, check_queue_key
from crawler.params import Params

_PENDING = b"p"
_META = b"m"
FLOORS_KEPT = 1 << 15
"""Queues whose seek floor is remembered (those whose floor moved last)."""


class LevelDBQueueStoreParams(Params):
    """Where and how the LevelDB frontier store is opened."""

    dir_name: str = Field("frontier", min_length=1, description="directory under state/")
    lru_cache_mb: int = Field(64, ge=1, description="LevelDB block cache size (MiB)")
    write_buffer_mb: int = Field(16, ge=1, description="LevelDB memtable size (MiB)")
    sync_writes: bool = Field(False, description="fsync every batch (slow; survives power loss)")


class LevelDBQueueStore(QueueStoreBase[LevelDBQueueStoreParams]):
    """Pending URIs and metadata in one LevelDB (plyvel)."""

    def __init__(self, params: LevelDBQueueStoreParams | None = None) -> None:
        super().__init__(params)
        self._db: Any = None
        # queue key -> (sort-key floor, head returned last) — see module docstring.
        self._floor: OrderedDict[str, int] = OrderedDict()
        self._last_head: dict[str, int] = {}
        self._dir: Path | None = None

    @property
    def path(self) -> Path | None:
        """The database directory once opened."""
        return Path(self._db.name.decode()) if self._db is not None else None

    def open(self, state_dir: Path) -> None:
        if self._db is not None:
            return
        path = Path(state_dir) / self.params.dir_name
        try:
            path.mkdir(parents=True, exist_ok=True)
            self._db = self._open_db(path)
            self._dir = path
        except plyvel.IOError as exc:
            if "lock" in str(exc).lower():
                raise FrontierStateError(
                    f"frontier state {path} is in use by another running crawler process "
                    f"(LevelDB lock held); stop it first"
                ) from exc
            raise FrontierStateError(f"cannot open frontier state {path}: {exc}") from exc
        except plyvel.CorruptionError as exc:
            raise FrontierStateError(f"frontier state {path} is corrupt: {exc}") from exc
        except (plyvel.Error, OSError) as exc:
            raise FrontierStateError(f"cannot open frontier state {path}: {exc}") from exc

    def _open_db(self, path: Path) -> Any:
        return plyvel.DB(
            str(path),
            create_if_missing=True,
            lru_cache_size=self.params.lru_cache_mb << 20,
            write_buffer_size=self.params.write_buffer_mb << 20,
            # Queue records are looked up by name when a queue is touched that is not in RAM;
            # most of those of a new queue's find nothing.
            bloom_filter_bits=10,
        )

    def _reopen(self) -> None:
        """Close and reopen the database after a failed write (see the module docstring)."""
        assert self._dir is not None
        db, self._db = self._db, None
        if db is not None:
            db.close()
        self._db = self._open_db(self._dir)

    def _require(self) -> Any:
        if self._db is None:
            raise RuntimeError("LevelDBQueueStore is not open")
        return self._db

    def write(self, batch: StoreBatch) -> None:
        self.write_many([batch])

    def write_many(self, batches: list[StoreBatch]) -> None:
        """Apply ``batches`` in order as one atomic write (a group commit). A full disk makes
        it wait for space and write them again."""
        self._require()
        assert self._dir is not None
        SPACE_WAIT.retry(lambda: self._write_many(batches), self._reopen, self._dir, "frontier")

    def _write_many(self, batches: list[StoreBatch]) -> None:
        db = self._require()
        floor, last_head = self._floor, self._last_head
        # A page's records go to few queues: each queue's key prefix is checked and built once.
        prefixes: dict[str, bytes] = {}
        with db.write_batch(sync=self.params.sync_writes) as wb:
            for batch in batches:
                for queue_key, key in batch.deletes:
                    wb.delete(_PENDING + queue_key.encode() + b"\x00" + key.to_bytes(8, "big"))
                    if last_head.get(queue_key) == key:
                        # Everything below the head was already gone: the floor may pass it.
                        floor[queue_key] = key + 1
                        floor.move_to_end(queue_key)
                        del last_head[queue_key]
                for queue_key, key, value in batch.puts:
                    prefix = prefixes.get(queue_key)
                    if prefix is None:
                        check_queue_key(queue_key)
                        prefix = prefixes[queue_key] = _PENDING + queue_key.encode() + b"\x00"
                    wb.put(prefix + key.to_bytes(8, "big"), value)
                    if key < floor.get(queue_key, 0):
                        floor[queue_key] = key
                    head = last_head.get(queue_key)
                    if head is not None and key < head:
                        del last_head[queue_key]
                for name, meta in batch.meta.items():
                    if meta is None:
                        wb.delete(_META + name.encode())
                    else:
                        wb.put(_META + name.encode(), meta)
        while len(floor) > FLOORS_KEPT:
            floor.popitem(last=False)
        if len(last_head) > FLOORS_KEPT:
            last_head.clear()  # a hint too: bounded like the floors

    def head(self, queue_key: str) -> tuple[int, bytes] | None:
        db = self._require()
        prefix = _PENDING + queue_key.encode() + b"\x00"
        start = prefix + self._floor.get(queue_key, 0).to_bytes(8, "big")
        with db.iterator(start=start, stop=prefix + b"\xff" * 9) as it:
            for raw_key, value in it:
                key = int.from_bytes(raw_key[len(prefix) :], "big")
                self._last_head[queue_key] = key
                return key, value
        self._last_head.pop(queue_key, None)
        return None

    def head_many(self, queue_key: str, limit: int) -> list[tuple[int, bytes]]:
        """Up to ``limit`` pending records of ``queue_key``, lowest sort keys first."""
        db = self._require()
        prefix = _PENDING + queue_key.encode() + b"\x00"
        start = prefix + self._floor.get(queue_key, 0).to_bytes(8, "big")
        rows: list[tuple[int, bytes]] = []
        with db.iterator(start=start, stop=prefix + b"\xff" * 9) as it:
            for raw_key, value in it:
                rows.append((int.from_bytes(raw_key[len(prefix) :], "big"), value))
                if len(rows) >= limit:
                    break
        if rows:
            self._last_head[queue_key] = rows[0][0]
        else:
            self._last_head.pop(queue_key, None)
        return rows

    def get_meta(self, name: str) -> bytes | None:
        value: bytes | None = self._require().get(_META + name.encode())
        return value

    def scan_meta(self, prefix: str) -> Iterator[tuple[str, bytes]]:
        db = self._require()
        start = _META + prefix.encode()
        with db.iterator(prefix=start) as it:
            for raw_key, value in it:
                yield raw_key[len(_META) :].decode(), value

    def scan_meta_range(self, prefix: str, after: str, limit: int) -> list[tuple[str, bytes]]:
        """Up to ``limit`` metadata entries named ``prefix``... after ``after``, in name order."""
        db = self._require()
        # No UTF-8 name holds the byte 0xff: it bounds every name starting with ``prefix``.
        start = _META + max(after.encode() + b"\x00", prefix.encode())
        rows: list[tuple[str, bytes]] = []
        if limit <= 0:
            return rows
        with db.iterator(start=start, stop=_META + prefix.encode() + b"\xff") as it:
            for raw_key, value in it:
                rows.append((raw_key[len(_META) :].decode(), value))
                if len(rows) >= limit:
                    break
        return rows

    def memory_bytes(self) -> int:
        """What LevelDB reports holding in RAM: its block cache and memtables (not the table
        cache's index and filter blocks, nor pages of mapped table files); 0 when closed."""
        db = self._db
        raw = db.get_property(b"leveldb.approximate-memory-usage") if db is not None else None
        return int(raw) if raw else 0

    def close(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            db.close()
        self._floor.clear()
        self._last_head.clear()
