"""FrontierIntake: how new URIs join the work queues of the WorkQueueFrontier.

Takes new CrawlURIs to their work queue (as in Heritrix's work-queue frontier): canonical key
(:class:`~crawler.frontier.intake.preparer.FrontierPreparer`; a URI that cannot be canonicalized
goes to uri-errors.log) -> uniq filter (``force_fetch`` records without asking) -> precedence and
queue key (preparer) -> ordinal -> store. A new or exhausted queue becomes *inactive*.

Crash safety (:mod:`crawler.frontier.store.recovery`): the uniq filter announces the URIs it is
about to record as new, and their write-ahead entry is durable before it records them; the batch
that queues them deletes it. Ordinals are reserved :data:`ORDINAL_BLOCK` at a time in the
``frontier`` metadata (also written by :meth:`~FrontierIntake.restore` and
:meth:`~FrontierIntake.close`). While links that may have been lost in a crash are known, each
one scheduled again is queued, by the one thread that takes it out of that set.

Thread-safe: shares the frontier's Condition and holds it for queue and store updates (store
writes go to the frontier's :class:`~crawler.frontier.store.write_behind_store.WriteBehindStore`,
made durable after the lock is released); canonicalization, the uniq check and serialization
run outside it. ``in_flight`` is the frontier's map of URIs out (URI -> queue), read here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from crawler.frontier.intake.recently_seen import RecentlySeen
from crawler.frontier.store import recovery as rec
from crawler.frontier.store.queue_store import StoreBatch, sort_key
from crawler.frontier.workqueue import EXHAUSTED, INACTIVE, RETIRED, WorkQueue

if TYPE_CHECKING:
    import threading

    from crawler.curi import CrawlURI
    from crawler.frontier.intake.preparer import FrontierPreparer
    from crawler.frontier.rotation.scheduler import QueueScheduler
    from crawler.frontier.store.write_behind_store import WriteBehindStore
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
        # a link a crash may have lost is recorded but not queued: "seen" would keep it lost
        self._recently_seen = RecentlySeen(prepare, uniq, may_be_lost=log.maybe_lost)
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
        return self.schedule_many((curi,))[0]

    def schedule_many(self, curis: Sequence[CrawlURI]) -> list[bool]:
        """:meth:`schedule` each of ``curis`` in order, sharing the work: one uniq-filter call,
        one lock hold and one store write for the lot."""
        if self._closed:
            return [False] * len(curis)
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
        log = self._log
        suspects: set[int] = set()
        if checked and log.lost:  # after a crash: links it may have lost are queued again
            flags = log.maybe_lost([curis[i].canonical for i in checked])
            suspects = {i for i, lost in zip(checked, flags, strict=True) if lost}
        announced: list[str] = []
        if checked:
            added = self._uniq.add_many_announced(
                [curis[i].canonical for i in checked],
                lambda new: announced.append(log.announce(new)),
            )
            checked = [i for i, new in zip(checked, added, strict=True) if new or i in suspects]
        for i in forced:
            self._uniq.add_force(curis[i].canonical)
        chosen = sorted(forced + checked) if forced else checked
        queued = self._enqueue_many(
            [curis[i] for i in chosen], [i in suspects for i in chosen], announced
        )
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
        if self._log.lost:
            return self._uniq.add_many_announced([curi.canonical], self._log.dismiss)[0]
        return bool(self._uniq.add(curi.canonical))

    def seen_recently(self, uris: Sequence[str]) -> list[bool]:
        """True for each URI the uniq filter surely recorded (its fast path, then its local
        look-ups; no frontier lock).

        A True is final (the URI was scheduled); a False only means "new, or not known". Lets
        a caller skip the per-link work (scope rules) for the links of a page seen already
        (:class:`~crawler.frontier.intake.recently_seen.RecentlySeen`, which also remembers the URIs
        it found seen as they are).
        """
        return self._recently_seen.seen(uris)

    # ------------------------------------------------------------- enqueue
    def _enqueue_many(
        self, curis: list[CrawlURI], suspects: list[bool], announced: list[str]
    ) -> list[bool]:
        """Queue ``curis`` (past the uniq filter, or forced, or possibly lost: ``suspects``)
        with one store write that also deletes the write-ahead entries ``announced``."""
        out = [False] * len(curis)
        entries: list[tuple[int, CrawlURI, bytes]] = []
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
            entries.append((i, curi, curi.to_bytes()))
        if not entries:
            for name in announced:
                self._log.delete_later(name)  # nothing to queue: nothing to recover
            return out
        log = self._log
        requeued: list[str] = []
        with self._cond:
            if self._closed:
                return out
            batch = log.batch()
            for name in announced:
                batch.meta[name] = None
            touched: dict[str, WorkQueue] = {}
            last_queued: dict[str, str] = {}  # queue -> its last URI, in order of last touch
            queued = 0
            for i, curi, value in entries:
                if suspects[i] or log.lost:
                    took = log.take_lost(curi.canonical, batch)
                    if suspects[i] and not took:
                        continue  # another thread took it: queued there
                    if took and not curi.force_fetch:
                        requeued.append(curi.uri)
                q = self._add_locked(curi, batch)
                if q.state != RETIRED:
                    queued += 1
                touched[q.key] = q
                last_queued.pop(q.key, None)
                last_queued[q.key] = curi.uri
                skey = sort_key(curi.directive, curi.precedence, curi.ordinal)
                batch.puts.append((q.key, skey, value))
                out[i] = True
            self._on_queued(queued)
            # Each queue's last URI, told once: the same bounded map as one call per URI gives.
            note_queued = self._sched.uris.queued
            for key, uri in last_queued.items():
                note_queued(key, uri)
            self._sched.record(batch, *touched.values())
            if self._ordinal >= self._ordinal_reserved:
                self._ordinal_reserved = self._ordinal + ORDINAL_BLOCK
                batch.meta[rec.FRONTIER_META] = self._counters_meta()
            self._store.write(batch)
            self._sched.trim()
        self._store.sync()
        for uri in requeued:
            self._logger.info("lost_uri_requeued", uri=uri)
        return out

    def _add_locked(self, curi: CrawlURI, batch: StoreBatch) -> WorkQueue:
        """Give ``curi`` its ordinal and count it in its queue (lock held); a queue that becomes
        inactive has its index row written in ``batch``. The caller notes the queue's last URI
        (``uris.queued``)."""
        self._ordinal += 1
        curi.ordinal = self._ordinal
        q = self._sched.get_or_add(curi.queue_key)
        q.size += 1
        q.total_enqueues += 1
        if q.state == EXHAUSTED:
            q.best_uri_precedence = curi.precedence
            self._sched.deactivate(q, batch)
        elif curi.precedence < q.best_uri_precedence:
            q.best_uri_precedence = curi.precedence
            if q.state == INACTIVE and self._sched.precedence_of(q) < q.precedence:
                self._sched.deactivate(q, batch)  # to the FIFO of its better precedence
        return q
