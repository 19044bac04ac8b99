"""QueueStore: where the frontier keeps its pending URIs, queue metadata and counters.

The store knows nothing of politeness or queue states; it holds two things:

* **pending records** — ``(queue key, sort key) -> serialized CrawlURI``. The 64-bit sort key packs
  the scheduling directive (top byte), the URI precedence (next byte, clipped to 127) and the
  global ordinal (low 48 bits), so ascending order within a queue is directive, then precedence,
  then FIFO (Heritrix's ``BdbMultipleWorkQueues`` key layout).
* **metadata** — ``name -> bytes``: ``q:<queue>`` queue records, ``frontier`` (format version,
  ordinal reservation), ``tally`` and ``r:`` (the sums over the queue records and the queues in
  rotation), and the crash-recovery entries ``i:``, ``j:``, ``u:`` of
  :mod:`crawler.frontier.store.recovery`. A resume rebuilds every in-memory structure from these
  alone.

Contract (what :class:`~crawler.frontier.workqueue_frontier.WorkQueueFrontier` relies on):

1. ``write(batch)`` is atomic and durable against a process crash once it returns: after
   ``kill -9`` a reopened store holds all of a batch or none of it. Deletes apply before puts.
2. ``head(queue)`` returns the pending record with the lowest sort key, reflecting every
   ``write`` that returned before (read-your-writes).
3. ``scan_meta(prefix)`` yields every metadata entry with that prefix, in name order;
   ``get_meta`` is a point read. Both see all writes that returned.
4. ``open`` refuses a state it cannot use with
   :class:`~crawler.frontier.frontier.FrontierStateError` (locked by another process, corrupt).
5. Calls are serialized (by the frontier's
   :class:`~crawler.frontier.store.write_behind_store.WriteBehindStore`): a store need not be
   thread-safe.

Optional, used when present (runtime-checkable protocols, tested once when the frontier wraps the
store): ``write_many(batches)`` (:class:`WritesMany`) applies several batches, in order, as one
atomic write (group commit); ``head_many(queue, limit)`` (:class:`ReadsHeads`) returns up to
``limit`` lowest records (the frontier caches a queue's first records and reads the store again
only when they run out); ``scan_meta_range(prefix, after, limit)`` (:class:`ScansMetaRange`)
reads a few metadata entries from a point on (the frontier pages its inactive-queue index and its
queue records through it, never holding them all in RAM).

The frontier's decisions (which URI is retried, what it costs, when its queue may fetch again,
which queue goes next, the server cap, the lateness guard) are made once, in
:mod:`crawler.frontier.policy`, and every store's frontier applies them: a LevelDB or memory
store keeps only what one process's :class:`~crawler.frontier.workqueue_frontier.
WorkQueueFrontier` decides, in this layout. The Redis store
(:class:`~crawler.frontier.redis.redis_store.RedisQueueStore`, shared by many crawler processes)
keeps more: besides the pending URIs (one sorted set per queue), the queue states that the
processes share — the ready set scored by the next allowed fetch time, the inactive set,
leases on in-flight URIs, each server's cap, pace and parked queues — because no process can
hold them in memory for the others. Its Lua scripts apply the policy's results, passed as
arguments, or rules generated from the policy's constants, each transition one atomic script;
they make no decision of their own (:mod:`crawler.frontier.redis.redis_scripts`).

Heritrix counterpart: ``BdbMultipleWorkQueues`` and the BDB environment of ``BdbFrontier``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Generic, Protocol, TypeVar, runtime_checkable

from crawler.params import Params, params_model_of

MAX_PRECEDENCE = 127
ORDINAL_BITS = 48
ORDINAL_MASK = (1 << ORDINAL_BITS) - 1


def sort_key(directive: int, precedence: int, ordinal: int) -> int:
    """The 64-bit in-queue sort key: directive byte, precedence byte (0..127), 48-bit ordinal."""
    d = 0 if directive < 0 else (255 if directive > 255 else directive)
    p = 0 if precedence < 0 else (MAX_PRECEDENCE if precedence > MAX_PRECEDENCE else precedence)
    return (d << 56) | (p << ORDINAL_BITS) | (ordinal & ORDINAL_MASK)


def check_queue_key(queue_key: str) -> None:
    """Reject queue keys that would break the ``key, 0x00, sort key`` record layout."""
    if not queue_key or "\x00" in queue_key:
        raise ValueError(f"invalid queue key {queue_key!r}")


@dataclass(slots=True)
class StoreBatch:
    """Changes applied atomically by :meth:`QueueStore.write`.

    ``puts`` add or replace pending records ``(queue key, sort key, value)``; ``deletes`` remove
    pending records ``(queue key, sort key)``; ``meta`` sets metadata (``None`` deletes it).
    Deletes are applied before puts.
    """

    puts: list[tuple[str, int, bytes]] = field(default_factory=list)
    deletes: list[tuple[str, int]] = field(default_factory=list)
    meta: dict[str, bytes | None] = field(default_factory=dict)


class QueueStore(Protocol):
    """Persistent pending URIs per queue plus metadata. See the module docstring."""

    def open(self, state_dir: Path) -> None:
        """Open (creating if needed) the store under ``state_dir``."""
        ...

    def write(self, batch: StoreBatch) -> None:
        """Apply ``batch`` atomically."""
        ...

    def head(self, queue_key: str) -> tuple[int, bytes] | None:
        """The pending record of ``queue_key`` with the lowest sort key, or None if empty."""
        ...

    def get_meta(self, name: str) -> bytes | None:
        """One metadata value, or None."""
        ...

    def scan_meta(self, prefix: str) -> Iterator[tuple[str, bytes]]:
        """Every metadata ``(name, value)`` whose name starts with ``prefix``, in name order."""
        ...

    def close(self) -> None:
        """Flush and release resources. Idempotent."""
        ...


@runtime_checkable
class WritesMany(Protocol):
    """A store that applies several batches as one atomic write (group commit)."""

    def write_many(self, batches: list[StoreBatch]) -> None:
        """Apply ``batches`` in order, all or none."""
        ...


@runtime_checkable
class ReadsHeads(Protocol):
    """A store that reads a queue's first records in one call."""

    def head_many(self, queue_key: str, limit: int) -> list[tuple[int, bytes]]:
        """Up to ``limit`` pending records of ``queue_key`` with the lowest sort keys, in order."""
        ...


@runtime_checkable
class ScansMetaRange(Protocol):
    """A store that reads metadata entries from a given name on."""

    def scan_meta_range(self, prefix: str, after: str, limit: int) -> list[tuple[str, bytes]]:
        """Up to ``limit`` metadata ``(name, value)`` whose name starts with ``prefix`` and is
        greater than ``after`` (byte order of the UTF-8 names), in name order."""
        ...


P = TypeVar("P", bound=Params)


def store_is_shared(store_class: type[object]) -> bool:
    """Whether stores of ``store_class`` are shared by many crawler processes."""
    return issubclass(store_class, QueueStoreBase) and store_class.shared


class QueueStoreBase(Generic[P]):
    """Common base of the built-in stores: binds the parameter model (component convention).

    ``shared`` is True for a store many crawler processes share; only a frontier whose own
    ``shared`` is True may run over it, and a store that does not derive from this base is a
    local one (:func:`store_is_shared`).
    """

    params_model: ClassVar[type[Params]] = Params
    shared: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.params_model = params_model_of(cls, QueueStoreBase)

    def __init__(self, params: P | None = None) -> None:
        self.params: P = params if params is not None else self.params_model()  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.params!r})"
