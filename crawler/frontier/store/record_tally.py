"""RecordTally: the sums over every queue record in the store, kept as the records are written.

A resume needs, of the ``q:<key>`` queue records, only sums — queues per state (as
:func:`~crawler.frontier.workqueue.parse_meta` reads a record back), inactive queues per
precedence, URIs queued, succeeded / failed / disregarded — and the records of the queues in
rotation. Reading every record for them took a minute at 10^7 queues. Instead:

* every queue record the frontier writes goes through :meth:`RecordTally.record`, which moves
  the sums from what the queue's previous record added (``WorkQueue.recorded``) to what the new
  one adds (:func:`~crawler.frontier.workqueue.tallied`), and puts in the same batch the
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

from typing import TYPE_CHECKING

from crawler.frontier.workqueue import INACTIVE, READY, STATES, Tally, WorkQueue, tallied

if TYPE_CHECKING:
    from crawler.frontier.store.queue_store import StoreBatch

TALLY_META = "tally"
TALLY_VERSION = 1
"""Bumped whenever what the ``tally`` record sums or how it is written changes."""
ROTATION_PREFIX = "r:"
"""Rows ``r:<queue key>`` -> b"" of the queues whose record says they are in rotation."""


class RecordTally:
    """Sums over the store's queue records (see the module docstring)."""

    __slots__ = ("counts", "disregarded", "failed", "inactive", "queued", "succeeded")

    def __init__(self) -> None:
        self.counts = dict.fromkeys(STATES, 0)
        """Records per state as a resume reads them back (ready, inactive, retired, exhausted)."""
        self.inactive: dict[int, int] = {}
        """Inactive records per precedence (no zero entries)."""
        self.queued = 0
        self.succeeded = 0
        self.failed = 0
        self.disregarded = 0

    # ------------------------------------------------------------ writing
    def record(self, q: WorkQueue, batch: StoreBatch) -> bool:
        """Put ``q``'s record in ``batch`` (with its rotation row if that changes) and move the
        sums to it; returns whether the URIs it counts as queued changed. The caller stamps
        the batch (:meth:`stamp`) and writes it before recording another."""
        new = tallied(q)
        old = q.recorded
        batch.meta[q.meta_name] = q.to_meta()
        if new == old:
            return False
        q.recorded = new
        if old is None:
            self._add(new, 1)
            was_ready = False
        else:
            self._add(old, -1)
            self._add(new, 1)
            was_ready = old[0] == READY
        if (new[0] == READY) != was_ready:
            batch.meta[ROTATION_PREFIX + q.key] = b"" if not was_ready else None
        return old is None or old[1] != new[1]

    def stamp(self, batch: StoreBatch) -> None:
        """Put the sums, as they are now, in ``batch`` (the ``tally`` record)."""
        batch.meta[TALLY_META] = self.encode()

    def _add(self, t: Tally, sign: int) -> None:
        state = t[0]
        self.counts[state] += sign
        if state == INACTIVE:
            inactive, prec = self.inactive, t[5]
            n = inactive.get(prec, 0) + sign
            if n:
                inactive[prec] = n
            else:
                del inactive[prec]
        self.queued += sign * t[1]
        self.succeeded += sign * t[2]
        self.failed += sign * t[3]
        self.disregarded += sign * t[4]

    def add_record(self, t: Tally) -> None:
        """Count one record read from the store (the full pass of a resume)."""
        self._add(t, 1)

    # ------------------------------------------------------------ the record
    def encode(self) -> bytes:
        """The ``tally`` record: version, counts per state (in :data:`STATES` order), queued,
        succeeded, failed, disregarded, then ``precedence:count`` of the inactive records."""
        c = self.counts
        head = ",".join(
            map(
                str,
                (
                    TALLY_VERSION,
                    *(c[s] for s in STATES),
                    self.queued,
                    self.succeeded,
                    self.failed,
                    self.disregarded,
                ),
            )
        )
        return (head + ";" + ",".join(f"{p}:{n}" for p, n in self.inactive.items())).encode()

    @classmethod
    def decode(cls, raw: bytes | None) -> RecordTally | None:
        """The tally of a ``tally`` record; None if there is none, it is of another version,
        or malformed (the caller then sums the records themselves)."""
        if raw is None:
            return None
        try:
            head, _, by_prec = raw.decode("ascii").partition(";")
            numbers = [int(x) for x in head.split(",")]
            if len(numbers) != 1 + len(STATES) + 4 or numbers[0] != TALLY_VERSION:
                return None
            out = cls()
            out.counts = dict(zip(STATES, numbers[1 : 1 + len(STATES)], strict=True))
            out.queued, out.succeeded, out.failed, out.disregarded = numbers[1 + len(STATES) :]
            for item in filter(None, by_prec.split(",")):
                p, _, n = item.partition(":")
                out.inactive[int(p)] = int(n)
        except (UnicodeDecodeError, ValueError):
            return None
        return out
