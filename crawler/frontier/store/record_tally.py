"""RecordTally: the sums over every queue record in the store, kept as the records are written.

A resume needs, of the ``q:<key>`` queue records, only sums — queues per state (as
:func:`~crawler.frontier.workqueue.parse_meta` reads a record back), inactive queues per
precedence, URIs queued, succeeded / failed / disregarded — and the records of the queues in
rotation. Reading every record for them took a minute at 10^7 queues. Instead:

* every queue record the frontier writes goes through :meth:`RecordTally.record`, which moves
  the sums from what the queue's previous record added (``WorkQueue.recorded``) to what the new
  one adds (:data:`~crawler.frontier.workqueue.RecordCounts`), and puts in the same batch the
  queue's row of the *rotation index* (``r:<key>``, present while the record says the queue is
  in rotation) when that changes;
* every batch holding queue records also holds the sums after it, as the ``tally`` record
  (:meth:`RecordTally.stamp`).

Batches are atomic and applied in the order written, so after a ``kill -9`` the ``tally`` record
equals the sums over the records the store holds, and the ``r:`` rows name exactly the records in
rotation: a resume reads those, not every record (:mod:`crawler.frontier.store.recovery`, which
falls back to the full pass when the ``tally`` is missing, of another :data:`TALLY_VERSION`, or
not vouched for by the ``frontier`` record).

Not thread-safe: called under the frontier's lock, each stamped batch written before the next
one is recorded.
"""

from __future__ import annotations

import itertools
import struct

from crawler.frontier.store.queue_store import StoreBatch
from crawler.frontier.workqueue import (
    EXHAUSTED,
    INACTIVE,
    READY,
    RETIRED,
    STATES,
    RecordCounts,
    WorkQueue,
)

TALLY_META = "tally"
TALLY_VERSION = 1
"""Bumped whenever what the ``tally`` record sums or how it is written changes."""
_HEAD = struct.Struct("<9q")
"""The ``tally`` record: version; records ready, inactive, retired, exhausted; URIs queued;
succeeded, failed, disregarded — then ``(precedence, inactive records)`` pairs, also int64."""
ROTATION_PREFIX = "r:"
"""Rows ``r:<queue key>`` -> b"" of the queues whose record says they are in rotation."""


class RecordTally:
    """Sums over the store's queue records (see the module docstring)."""

    __slots__ = (
        "_by_prec",
        "counts",
        "disregarded",
        "failed",
        "inactive",
        "queued",
        "succeeded",
    )

    def __init__(self) -> None:
        self.counts = dict.fromkeys(STATES, 0)
        """Records per state as a resume reads them back (ready, inactive, retired, exhausted)."""
        self.inactive: dict[int, int] = {}
        """Inactive records per precedence (no zero entries)."""
        self.queued = 0
        self.succeeded = 0
        self.failed = 0
        self.disregarded = 0
        self._by_prec: bytes | None = b""  # ``inactive`` as written, None once it changed

    # ------------------------------------------------------------ writing
    def record(self, q: WorkQueue, batch: StoreBatch) -> bool:
        """Put ``q``'s record in ``batch`` (with its rotation row if that changes) and move the
        sums to it; returns whether the URIs it counts as queued grew. The caller stamps the
        batch (:meth:`stamp`) and writes it before recording another."""
        batch.meta[q.meta_name] = q.to_meta()
        # The record as parse_meta reads it back: retired stays retired (its URIs not
        # counted); empty is exhausted; active comes back ready; the rest inactive.
        state, size = q.state, q.size
        if state == RETIRED:
            size = 0
        elif size <= 0:
            state, size = EXHAUSTED, 0
        elif state in (INACTIVE, EXHAUSTED):
            state = INACTIVE
        else:
            state = READY
        prec = q.precedence
        old = q.recorded
        if old is not None and old[0] == state and old[5] == prec:
            # Same state and precedence (most records): only the numbers move.
            succeeded, failed, disregarded = q.succeeded, q.failed, q.disregarded
            was = old[1]
            if size != was:
                self.queued += size - was
            if succeeded != old[2]:
                self.succeeded += succeeded - old[2]
            if failed != old[3]:
                self.failed += failed - old[3]
            if disregarded != old[4]:
                self.disregarded += disregarded - old[4]
            q.recorded = (state, size, succeeded, failed, disregarded, prec)
            return size > was
        new = (state, size, q.succeeded, q.failed, q.disregarded, prec)
        q.recorded = new
        was_ready = False
        if old is not None:
            self._add(old, -1)
            was_ready = old[0] == READY
        self._add(new, 1)
        if (new[0] == READY) != was_ready:
            batch.meta[ROTATION_PREFIX + q.key] = None if was_ready else b""
        return old is None or new[1] > old[1]

    def stamp(self, batch: StoreBatch) -> None:
        """Put the sums, as they are now, in ``batch`` (the ``tally`` record)."""
        c = self.counts
        by_prec = self._by_prec
        if by_prec is None:
            items = sorted(self.inactive.items())
            by_prec = self._by_prec = struct.pack(f"<{2 * len(items)}q", *itertools.chain(*items))
        batch.meta[TALLY_META] = (
            _HEAD.pack(
                TALLY_VERSION,
                c[READY],
                c[INACTIVE],
                c[RETIRED],
                c[EXHAUSTED],
                self.queued,
                self.succeeded,
                self.failed,
                self.disregarded,
            )
            + by_prec
        )

    def _add(self, t: RecordCounts, sign: int) -> None:
        state = t[0]
        self.counts[state] += sign
        if state == INACTIVE:
            inactive, prec = self.inactive, t[5]
            n = inactive.get(prec, 0) + sign
            if n:
                inactive[prec] = n
            else:
                del inactive[prec]
            self._by_prec = None
        self.queued += sign * t[1]
        self.succeeded += sign * t[2]
        self.failed += sign * t[3]
        self.disregarded += sign * t[4]

    def add_record(self, t: RecordCounts) -> None:
        """Count one record read from the store (the full pass of a resume)."""
        self._add(t, 1)

    # ------------------------------------------------------------ the record
    @classmethod
    def decode(cls, raw: bytes | None) -> RecordTally | None:
        """The tally of a ``tally`` record; None if there is none, it is of another version,
        or malformed (the caller then sums the records themselves)."""
        if raw is None or len(raw) < _HEAD.size or (len(raw) - _HEAD.size) % 16:
            return None
        numbers = _HEAD.unpack_from(raw)
        if numbers[0] != TALLY_VERSION:
            return None
        out = cls()
        c = out.counts
        _, c[READY], c[INACTIVE], c[RETIRED], c[EXHAUSTED] = numbers[:5]
        out.queued, out.succeeded, out.failed, out.disregarded = numbers[5:]
        pairs = struct.unpack_from(f"<{(len(raw) - _HEAD.size) // 8}q", raw, _HEAD.size)
        out.inactive = dict(zip(pairs[::2], pairs[1::2], strict=True))
        out._by_prec = None
        return out
