"""GroupCommit: many threads' batches run as one call, by one of them (group commit).

Every toe thread ends a page by scheduling its new links: canonical keys, the uniq filter's
check-and-add under its lock (its write-ahead announce, its write), the frontier's lock for
the queues, a store write and its sync. With hundreds of threads those locks form a convoy:
each page waits for the pages before it, and each hand-off of a lock is a thread switch.
Databases solve this with a group commit, and so does this class: the first thread to arrive
leads and runs every batch waiting at that moment as one call (one lock hold, one announce,
one write, one sync for them all); threads that arrive meanwhile wait for the leader of the
next group. When a leader's call is done, it hands each thread its own results and, if
batches arrived meanwhile, wakes the first of their threads to lead them.

``run(items) -> results`` must take a list of items and return one result per item, in order,
as running each batch alone would (for the frontier: ``schedule_many``, where a URI found in
two batches of a group is new in the first only, as if the two calls had run one after the
other). If the call for a group raises, each batch of the group is run again alone, so a
batch that cannot be scheduled fails only its own caller.

Thread-safe; ``submit`` returns (or raises) once the caller's batch has been run, so what the
call makes durable is durable when it returns, as with a direct call.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class _Ticket(Generic[T, R]):
    """One caller's batch: its items, then its results or error; ``lead`` when it is woken to
    lead the next group rather than because its batch was run."""

    __slots__ = ("error", "event", "items", "lead", "results")

    def __init__(self, items: Sequence[T]) -> None:
        self.items = items
        self.results: list[R] | None = None
        self.error: BaseException | None = None
        self.lead = False
        self.event = threading.Event()


class GroupCommit(Generic[T, R]):
    """Runs the batches of concurrent callers together (see the module docstring)."""

    def __init__(self, run: Callable[[list[T]], list[R]]) -> None:
        self._run = run
        self._lock = threading.Lock()
        self._waiting: list[_Ticket[T, R]] = []
        self._leading = False
        self.groups = 0
        """Calls of ``run`` made for groups (not counting batches run again alone)."""
        self.batches = 0
        """Batches run in those groups."""

    def submit(self, items: Sequence[T]) -> list[R]:
        """``run``'s results for ``items``, run with the batches of other callers waiting now."""
        ticket: _Ticket[T, R] = _Ticket(items)
        with self._lock:
            self._waiting.append(ticket)
            lead = not self._leading
            self._leading = True
        if not lead:
            ticket.event.wait()
            if not ticket.lead:
                return _outcome(ticket)
        self._lead()
        return _outcome(ticket)

    def _lead(self) -> None:
        """Run every waiting batch (the leader's among them), give each its results, and pass
        the lead to a batch that arrived meanwhile."""
        with self._lock:
            group, self._waiting = self._waiting, []
            self.groups += 1
            self.batches += len(group)
        try:
            self._run_group(group)
        except BaseException as exc:  # noqa: BLE001 - no batch left without an outcome
            for ticket in group:
                if ticket.results is None and ticket.error is None:
                    ticket.error = exc
        finally:
            with self._lock:
                successor = self._waiting[0] if self._waiting else None
                if successor is None:
                    self._leading = False
            for ticket in group:
                ticket.event.set()
            if successor is not None:
                successor.lead = True
                successor.event.set()

    def _run_group(self, group: list[_Ticket[T, R]]) -> None:
        if len(group) == 1:
            _run_alone(self._run, group[0])
            return
        items = [item for ticket in group for item in ticket.items]
        try:
            results = self._run(items)
        except Exception:  # noqa: BLE001 - each batch is run again alone: its own outcome
            for ticket in group:
                _run_alone(self._run, ticket)
            return
        start = 0
        for ticket in group:
            end = start + len(ticket.items)
            ticket.results = results[start:end]
            start = end


def _run_alone(run: Callable[[list[T]], list[R]], ticket: _Ticket[T, R]) -> None:
    try:
        ticket.results = run(list(ticket.items))
    except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
        ticket.error = exc


def _outcome(ticket: _Ticket[T, R]) -> list[R]:
    if ticket.error is not None:
        raise ticket.error
    assert ticket.results is not None
    return ticket.results
