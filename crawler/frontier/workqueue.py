"""WorkQueue: the in-memory state of one frontier queue (its URIs live in the QueueStore).

A queue is in exactly one state (Heritrix's glossary):

* ``ready`` — may hand out its head now; waits in the frontier's ready FIFO.
* ``in_process`` — its head is out with a ToeThread (one URI at a time per queue).
* ``snoozed`` — politeness or retry wait until ``wake_s`` (clock monotonic seconds).
* ``inactive`` — has URIs but waits its turn: activated only when no queue is ready.
* ``retired`` — over its total budget; keeps its URIs, which stop counting as queued.
* ``exhausted`` — empty.

Heritrix counterpart: ``WorkQueue``/``BdbWorkQueue``. Not thread-safe: guarded by the frontier lock.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from crawler.curi import CrawlURI

READY = "ready"
IN_PROCESS = "in_process"
SNOOZED = "snoozed"
INACTIVE = "inactive"
RETIRED = "retired"
EXHAUSTED = "exhausted"
STATES = (READY, IN_PROCESS, SNOOZED, INACTIVE, RETIRED, EXHAUSTED)
ACTIVE_STATES = frozenset({READY, IN_PROCESS, SNOOZED})

META_PREFIX = "q:"
"""Metadata name prefix of queue records: ``q:<queue key>``."""


class WorkQueue:
    """One queue's counters and state; ``size`` counts its URIs in the store, the one out too."""

    __slots__ = (
        "current",
        "current_key",
        "disregarded",
        "failed",
        "key",
        "session_spent",
        "size",
        "state",
        "succeeded",
        "total_spent",
        "wake_s",
    )

    def __init__(self, key: str) -> None:
        self.key = key
        self.state = EXHAUSTED
        self.size = 0
        self.wake_s = 0.0
        self.current: CrawlURI | None = None
        self.current_key = 0
        self.session_spent = 0
        self.total_spent = 0
        self.succeeded = 0
        self.failed = 0
        self.disregarded = 0

    @property
    def meta_name(self) -> str:
        """The queue's metadata name in the store."""
        return META_PREFIX + self.key

    def to_meta(self) -> bytes:
        """Persistent part of the queue, for the store's metadata."""
        return json.dumps(
            [
                self.state,
                self.size,
                self.session_spent,
                self.total_spent,
                self.succeeded,
                self.failed,
                self.disregarded,
            ],
            separators=(",", ":"),
        ).encode()

    @classmethod
    def from_meta(cls, key: str, raw: bytes) -> WorkQueue:
        """Rebuild a queue saved by :meth:`to_meta`.

        Active queues come back ``ready`` (their URI out, if any, is still at the head of the
        store and is handed out again); empty queues ``exhausted``; retired stay retired.
        """
        q = cls(key)
        state, q.size, q.session_spent, q.total_spent, q.succeeded, q.failed, q.disregarded = (
            json.loads(raw)
        )
        if state == RETIRED:
            q.state = RETIRED
        elif q.size <= 0:
            q.size = 0
            q.state = EXHAUSTED
        elif state in ACTIVE_STATES:
            q.state = READY
        else:
            q.state = INACTIVE
        return q

    def __repr__(self) -> str:
        return f"WorkQueue({self.key!r}, {self.state}, size={self.size})"
