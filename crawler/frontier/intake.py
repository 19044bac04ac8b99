"""FrontierIntake: how new URIs join the work queues of the WorkQueueFrontier.

Takes new CrawlURIs to their work queue (heritrix.md §5): canonical key
(:class:`~crawler.frontier.preparer.FrontierPreparer`; a URI that cannot be canonicalized goes to
uri-errors.log) -> uniq filter (``force_fetch`` records without asking) -> precedence and queue
key (preparer) -> ordinal -> store. A new or exhausted queue becomes *inactive*.

Crash safety (:mod:`crawler.frontier.recovery`): a URI in flight gets its in-flight marker,
durably, before its first link's uniq check; each queued URI is written with its mark in the
same batch as its record; ordinals are reserved :data:`ORDINAL_BLOCK` at a time in the
``frontier`` metadata (also written by :meth:`~FrontierIntake.restore` and
:meth:`~FrontierIntake.close`). While URIs recovered from a crash schedule their links, a link
the uniq filter has seen but no mark records was lost in the crash and is queued after all.

Thread-safe: shares the frontier's Condition and holds it for queue and store updates (store
writes go to the frontier's :class:`~crawler.frontier.write_behind_store.WriteBehindStore`,
made durable after the lock is released); canonicalization, the uniq check and serialization
run outside it. ``in_flight`` is the frontier's map of URIs out (URI -> queue), read here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from crawler.frontier import recovery as rec
from crawler.frontier.queue_store import StoreBatch, sort_key
from crawler.frontier.workqueue import EXHAUSTED, INACTIVE, RETIRED, WorkQueue

if TYPE_CHECKING:
    import threading

    from crawler.curi import CrawlURI
    from crawler.frontier.preparer import FrontierPreparer
    from crawler.frontier.scheduler import QueueScheduler
    from crawler.frontier.write_behind_store import WriteBehindStore
    from crawler.uniq.uniq_filter import UriUniqFilter

ORDINAL_BLOCK = 4096
"""Ordinals are reserved in the store this many at a time (gaps after a restart are harmless)."""


class FrontierIntake:
    """Schedules new URIs into the frontier's queues (see the module docstring).

    ``on_queued(n)`` is called with the frontier's lock held when ``n`` URIs joined queues that
    are not retired. After :meth:`close` nothing more is queued.
    """

    def __init__(
        self,
        store: WriteBehindStore,
        uniq: UriUniqFilter[Any],
        prepare: FrontierPreparer,
        cond: threading.Condition,
        sched: QueueScheduler,
        log: rec.RecoveryLog,
        in_flight: dict[str, WorkQueue],
        *,
        on_queued: Callable[[int], None],
        uri_error: Callable[[str | None, str, str], None] | None,
        logger: Any,
    ) -> None:
        self._store = store
        self._uniq = uniq
        self._prepare = prepare
        self._cond = cond
        self._sched = sched
        self._log = log
        self._in_flight = in_flight
        self._on_queued = on_queued
        self._uri_error = uri_error
        self._logger = logger
        self._ordinal = 0
        self._ordinal_reserved = 0
        self._closed = False
        # While URIs recovered from a crash are re-scheduling their links: canonicals another
        # thread is adding to the uniq filter right now (not yet marked as queued), so a
        # recovered URI re-finding one does not take it for a link lost in the crash.
        self._adding: Counter[str] = Counter()

    # ------------------------------------------------------------ counters
    def restore(self, ordinal_reserved: int) -> None:
        """Continue after the ordinals an earlier session reserved; record that (lock held)."""
        self._ordinal = self._ordinal_reserved = ordinal_reserved
        self._store.write(StoreBatch(meta={rec.FRONTIER_META: self._counters_meta()}))

    def close(self, save: bool) -> None:
        """Queue nothing more; with ``save``, write the counters (lock held)."""
        self._closed = True
        if save:
            batch = self._log.batch()
            batch.meta[rec.FRONTIER_META] = self._counters_meta()
            self._store.write(batch)

    def _counters_meta(self) -> bytes:
        return rec.counters_meta(self._ordinal_reserved)

    # ------------------------------------------------------------ schedule
    def schedule(self, curi: CrawlURI) -> bool:
        """Queue ``curi`` unless already seen (see the module docstring). True if queued."""
        if self._closed:
            return False
        uri = curi.uri
        try:
            canonical = self._prepare.canonical(uri)
        except ValueError as exc:
            if self._uri_error is not None:
                self._uri_error(curi.via, str(exc), uri)
            return False
        curi.canonical = canonical
        if curi.force_fetch:
            self._uniq.add_force(canonical)
            return self._enqueue(curi)
        via_q = self._in_flight.get(curi.via) if curi.via else None
        if via_q is not None and not via_q.marked:
            # Durable before the uniq check: after a crash this URI's links are re-checked.
            with self._cond:
                self._log.mark_in_flight(via_q)
            self._store.sync()
        if not self._log.recovered:
            if not self._uniq.add(canonical):
                return False
            return self._enqueue(curi)
        with self._cond:
            self._adding[canonical] += 1
        try:
            if not self._uniq.add(canonical):
                if curi.via not in self._log.recovered:
                    return False
                with self._cond:
                    self._adding[canonical] -= 1
                    while self._adding[canonical] > 0 and not self._closed:
                        self._cond.wait(0.5)  # another thread is queuing it: not lost
                    self._adding[canonical] += 1
                    if not self._log.was_lost(canonical):
                        return False
                self._logger.info("lost_uri_requeued", uri=uri)
            return self._enqueue(curi)
        finally:
            with self._cond:
                self._adding[canonical] -= 1
                if self._adding[canonical] <= 0:
                    del self._adding[canonical]
                    self._cond.notify_all()

    def schedule_many(self, curis: Sequence[CrawlURI]) -> list[bool]:
        """:meth:`schedule` each of ``curis`` in order, sharing the work: one uniq-filter call,
        one lock hold and one store write for the lot."""
        if self._closed:
            return [False] * len(curis)
        if self._log.recovered:
            return [self.schedule(curi) for curi in curis]  # crash recovery: the careful path
        out = [False] * len(curis)
        canonical_of = self._prepare.canonical
        forced: list[int] = []
        checked: list[int] = []
        for i, curi in enumerate(curis):
            try:
                curi.canonical = canonical_of(curi.uri)
            except ValueError as exc:
                if self._uri_error is not None:
                    self._uri_error(curi.via, str(exc), curi.uri)
                continue
            (forced if curi.force_fetch else checked).append(i)
        if checked:
            # Links recorded lately are answered without I/O; only the rest need the via's
            # in-flight marker and the filter's check-and-add.
            maybe = self._uniq.maybe_new([curis[i].canonical for i in checked])
            checked = [i for i, new in zip(checked, maybe, strict=True) if new]
        if checked:
            self._mark_vias_in_flight({curis[i].via for i in checked})
            added = self._uniq.add_many([curis[i].canonical for i in checked])
            checked = [i for i, new in zip(checked, added, strict=True) if new]
        for i in forced:
            self._uniq.add_force(curis[i].canonical)
        chosen = sorted(forced + checked) if forced else checked
        queued = self._enqueue_many([curis[i] for i in chosen])
        for i, ok in zip(chosen, queued, strict=True):
            out[i] = ok
        return out

    def claim(self, curi: CrawlURI) -> bool:
        """Add ``curi``'s canonical form to the uniq filter without queueing it: the URI is
        fetched elsewhere (a browser page's sub-resource). True if it was new."""
        if self._closed:
            return False
        try:
            curi.canonical = self._prepare.canonical(curi.uri)
        except ValueError:
            return False
        return bool(self._uniq.add(curi.canonical))

    def seen_recently(self, uris: Sequence[str]) -> list[bool]:
        """True for each URI the uniq filter recorded lately (answered without I/O or lock).

        A True is final (the URI was scheduled); a False only means "not known cheaply". Lets
        a caller skip the per-link work (scope rules) for the links of a page seen already.
        """
        canonical_of = self._prepare.canonical
        canonicals: list[str] = []
        for uri in uris:
            try:
                canonicals.append(canonical_of(uri))
            except ValueError:
                canonicals.append("")
        return [not new for new in self._uniq.maybe_new(canonicals)]

    def _mark_vias_in_flight(self, vias: set[str | None]) -> None:
        """Durable before the uniq check: after a crash these URIs' links are re-checked."""
        marks = [q for via in vias if via and (q := self._in_flight.get(via)) and not q.marked]
        if marks:
            with self._cond:
                for q in marks:
                    self._log.mark_in_flight(q)
            self._store.sync()

    # ------------------------------------------------------------- enqueue
    def _enqueue(self, curi: CrawlURI) -> bool:
        return self._enqueue_many([curi])[0]

    def _enqueue_many(self, curis: list[CrawlURI]) -> list[bool]:
        """Queue ``curis`` (already past the uniq filter) with one store write."""
        out = [False] * len(curis)
        entries: list[tuple[int, CrawlURI, bytes, str]] = []
        for i, curi in enumerate(curis):
            # A via in flight is on the calling thread, so its entry cannot change under us.
            via_q = self._in_flight.get(curi.via) if curi.via else None
            try:
                key = self._prepare.queue_key(
                    curi, (via_q.key, via_q.current_key) if via_q is not None else None
                )
            except ValueError as exc:
                if self._uri_error is not None:
                    self._uri_error(curi.via, str(exc), curi.uri)
                continue
            curi.queue_key = key
            entries.append((i, curi, curi.to_bytes(), rec.mark_name(curi.canonical)))
        if not entries:
            return out
        with self._cond:
            if self._closed:
                return out
            batch = self._log.batch()
            touched: dict[str, WorkQueue] = {}
            queued = 0
            for i, curi, value, mark in entries:
                q = self._add_locked(curi)
                if q.state != RETIRED:
                    queued += 1
                touched[q.key] = q
                skey = sort_key(curi.directive, curi.precedence, curi.ordinal)
                batch.puts.append((q.key, skey, value))
                batch.meta[mark] = b""
                out[i] = True
            self._on_queued(queued)
            for q in touched.values():
                batch.meta[q.meta_name] = q.to_meta()
            if self._ordinal >= self._ordinal_reserved:
                self._ordinal_reserved = self._ordinal + ORDINAL_BLOCK
                batch.meta[rec.FRONTIER_META] = self._counters_meta()
            self._store.write(batch)
        self._store.sync()
        return out

    def _add_locked(self, curi: CrawlURI) -> WorkQueue:
        """Give ``curi`` its ordinal and count it in its queue (lock held)."""
        self._ordinal += 1
        curi.ordinal = self._ordinal
        q = self._sched.get_or_add(curi.queue_key)
        q.size += 1
        q.total_enqueues += 1
        self._sched.uris.queued(q.key, curi.uri)
        if q.state == EXHAUSTED:
            q.best_uri_precedence = curi.precedence
            self._sched.deactivate(q)
        elif curi.precedence < q.best_uri_precedence:
            q.best_uri_precedence = curi.precedence
            if q.state == INACTIVE and self._sched.precedence_of(q) < q.precedence:
                self._sched.deactivate(q)  # to the FIFO of its better precedence
        return q
