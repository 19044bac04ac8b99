"""InactiveIndex: the inactive queues' FIFOs (one per queue precedence) as rows of the store.

Heritrix keeps its inactive queues in per-precedence lists; with 10^7 host queues such lists
would hold most of the crawl's queues in RAM. Here each inactive queue is one metadata row

    ``i:<precedence, 8 hex digits><sequence, 16 hex digits>`` -> queue key (UTF-8)

so the store's name order is the FIFO order: lowest precedence first, then in the order the
queues were deactivated. A queue's record (``q:<key>``) names its row by ``inactive_seq``; a row
whose queue has moved on since (activated, deactivated again at another precedence, retired) is
*stale*, recognised when popped (:meth:`pop` hands out ``(seq, key)``, the scheduler checks the
queue) and deleted then. Rows are written in the batch that changes the queue's record, so after
a ``kill -9`` every inactive queue still has its row (recovery rebuilds nothing).

RAM holds, per precedence, only the front of its FIFO: up to ``read_rows`` rows read in one scan
(the store's pending writes are flushed first), refilled when they run out, and a ``complete``
flag while the store holds no later row (then new rows join the front directly, up to
``read_rows``). Sequences are reserved in the store :data:`SEQ_BLOCK` at a time (``iseq``
metadata) so that they grow across restarts.

Not thread-safe: the scheduler calls it under the frontier's lock.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from crawler.frontier.store.queue_store import StoreBatch
    from crawler.frontier.store.write_behind_store import WriteBehindStore

ROW_PREFIX = "i:"
SEQ_META = "iseq"
SEQ_BLOCK = 4096
READ_ROWS = 256
"""Rows of one precedence read per scan of the store."""
_MAX_PRECEDENCE = 0xFFFFFFFF


def fifo_prefix(precedence: int) -> str:
    """The name prefix of the rows of one precedence's FIFO."""
    p = 0 if precedence < 0 else min(precedence, _MAX_PRECEDENCE)
    return f"{ROW_PREFIX}{p:08x}"


def row_name(precedence: int, seq: int) -> str:
    """The metadata name of the row of sequence ``seq`` in ``precedence``'s FIFO."""
    return f"{fifo_prefix(precedence)}{seq:016x}"


class _Front:
    """The first rows of one FIFO, as read from the store."""

    __slots__ = ("after", "complete", "rows")

    def __init__(self, complete: bool) -> None:
        self.rows: deque[tuple[int, str]] = deque()
        self.after = 0  # the last sequence read (or joined) into ``rows``
        self.complete = complete  # no row in the store past ``after``


class InactiveIndex:
    """The inactive FIFOs in the store (see the module docstring)."""

    def __init__(self, store: WriteBehindStore, read_rows: int = READ_ROWS) -> None:
        self._store = store
        self._read_rows = max(1, read_rows)
        self._fronts: dict[int, _Front] = {}
        self._seq = 0
        self._reserved = 0

    def restore(self, precedences: set[int] | None = None) -> None:
        """Continue after the sequences reserved so far; ``precedences``: those whose FIFOs may
        hold rows (their fronts are read from the store when first needed)."""
        raw = self._store.read_meta(SEQ_META)
        self._seq = self._reserved = int(raw) if raw else 0
        self._fronts = {p: _Front(complete=False) for p in precedences or ()}

    def stored(self, precedence: int) -> None:
        """A restored inactive queue has a row in ``precedence``'s FIFO."""
        if precedence not in self._fronts:
            self._fronts[precedence] = _Front(complete=False)

    def push(self, precedence: int, key: str, batch: StoreBatch) -> int:
        """Add queue ``key`` at the back of ``precedence``'s FIFO (its row goes in ``batch``,
        which must also carry the queue's record); returns the row's sequence."""
        self._seq = seq = self._seq + 1
        batch.meta[row_name(precedence, seq)] = key.encode()
        if seq > self._reserved:
            self._reserved = seq + SEQ_BLOCK
            batch.meta[SEQ_META] = str(self._reserved).encode()
        front = self._fronts.get(precedence)
        if front is None:
            front = self._fronts[precedence] = _Front(complete=True)
        if front.complete:
            if len(front.rows) < self._read_rows:
                front.rows.append((seq, key))
                front.after = seq
            else:
                front.complete = False
        return seq

    def pop(self, precedence: int) -> tuple[int, str] | None:
        """The first row of ``precedence``'s FIFO, ``(seq, queue key)``, taken off the front;
        None if the FIFO is empty. The caller deletes the row (:func:`row_name`) in the batch
        that activates the queue, or at once if the row is stale."""
        front = self._fronts.get(precedence)
        if front is None:
            return None
        if not front.rows and not front.complete:
            self._read(precedence, front)
        return front.rows.popleft() if front.rows else None

    def _read(self, precedence: int, front: _Front) -> None:
        prefix = fifo_prefix(precedence)
        after = row_name(precedence, front.after) if front.after else ""
        rows = self._store.scan_meta_range(prefix, after, self._read_rows)
        for name, value in rows:
            seq = int(name[len(prefix) :], 16)
            front.rows.append((seq, value.decode()))
            front.after = seq
        front.complete = len(rows) < self._read_rows

    def front_rows(self) -> int:
        """Rows held in RAM (all precedences)."""
        return sum(len(f.rows) for f in self._fronts.values())
