"""RedisScheduler: a worker's ``schedule_many`` into the shared frontier, in a few round trips.

For a page's outlinks: canonicalize, drop duplicates within the batch, one pipelined
``contains`` of the uniq filter, then queue the new ones (queue id ``key\\tserver``, shard of the
server). When the uniq filter is on the frontier's one redis-server, one RECORD_SCHEDULE call
records each URI and queues it only if it was new, in one step: two round trips per page
whatever its link count; two workers scheduling one URI at once queue it once; a worker killed
at any point leaves a URI recorded and queued, or neither. On a Cluster (the filter's keys are
not in the queues' slots) or with the filter on another server: SCHEDULE (one call per shard
group, one round trip), then one ``add_many`` of the uniq filter, then UNSCHEDULE any another
worker recorded first, three round trips. Queue first, record second: a worker killed in
between leaves at worst a URI queued twice, never one recorded as seen but queued nowhere; this
worker's exchange is told of the new queues only after the UNSCHEDULE (a copy another worker's
round leases before it is taken back is still fetched twice).

Writes that must be in Redis before anything is queued (``before_queueing``, set once: the
digest index's entries waiting, so a worker fetching a page's link finds the page's payload)
ride first in the ``contains`` round trip, or else in the SCHEDULE one
(:class:`~crawler.frontier.redis.redis_ride.Ride`): no round trip of their own on one
redis-server; sent alone before the SCHEDULE when they cannot ride (a Cluster, another server);
given back unsent when nothing is queued.

A prerequisite (``P`` hop) of a URI in flight here is not queued in Redis but kept by this
worker (:class:`~crawler.frontier.redis.redis_prerequisites.LocalPrerequisites`). Ordinals (the FIFO
part of the sort key) come from crawl-wide blocks reserved in Redis.

Reads/writes on the CrawlURI as WorkQueueFrontier's scheduling does (``canonical``,
``queue_key``, ``ordinal``). Thread-safety: any thread; the ordinal block and the hand-over to
the local prerequisites are under the frontier's lock, the rest touches no shared local state.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from crawler.frontier.redis.redis_store import ORDINAL_BLOCK
from crawler.frontier.store.queue_store import sort_key
from crawler.uniq.redis_uniq import RedisUriUniqFilter
from crawler.urls import server_key

if TYPE_CHECKING:
    from crawler.curi import CrawlURI
    from crawler.frontier.intake.preparer import FrontierPreparer
    from crawler.frontier.redis.redis_exchange import RedisExchange
    from crawler.frontier.redis.redis_lease_keeper import InFlight
    from crawler.frontier.redis.redis_prerequisites import LocalPrerequisites
    from crawler.frontier.redis.redis_ride import Ride
    from crawler.frontier.redis.redis_store import RedisQueueStore
    from crawler.uniq.uniq_filter import UriUniqFilter

_GATED = ("http:", "https:", "ftp:")


class RedisScheduler:
    """Schedules URIs into the shared frontier (see the module docstring)."""

    def __init__(
        self,
        store: RedisQueueStore,
        uniq: UriUniqFilter[Any],
        prep: FrontierPreparer,
        lock: threading.Lock,
        exchange: RedisExchange,
        in_flight: dict[str, InFlight],
        prerequisites: LocalPrerequisites,
        uri_error: Callable[[str | None, str, str], None] | None,
    ) -> None:
        self._store = store
        self._uniq = uniq
        self._prep = prep
        self._lock = lock
        self._exchange = exchange
        self._in_flight = in_flight
        self._prerequisites = prerequisites
        self._uri_error = uri_error
        self._ordinal = 0
        self._ordinal_end = 0
        self.before_queueing: Callable[[], Ride | None] | None = None
        """Writes to make before anything is queued (module docstring); set before the crawl."""

    def schedule_many(self, curis: Sequence[CrawlURI]) -> list[bool]:
        """Queue each of ``curis`` unless already seen crawl-wide (or earlier in ``curis``); one
        flag per URI, True if queued."""
        out = [False] * len(curis)
        prep = self._prep
        pending: list[int] = []
        batch_seen: set[str] = set()
        for i, curi in enumerate(curis):
            try:
                canonical = prep.canonical(curi.uri)
            except ValueError as exc:
                self._bad_uri(curi, exc)
                continue
            curi.canonical = canonical
            if curi.via and curi.hop_path.endswith("P") and curi.via in self._in_flight:
                out[i] = self._schedule_local(curi)
                continue
            if not curi.force_fetch:
                if canonical in batch_seen:
                    continue
                batch_seen.add(canonical)
            pending.append(i)
        if not pending:
            return out
        ride = self.before_queueing() if self.before_queueing is not None else None
        try:
            checked = [i for i in pending if not curis[i].force_fetch]
            contains_many = getattr(self._uniq, "contains_many", None)
            records_here = self.records_here()
            if checked and contains_many is not None:
                names = [curis[i].canonical for i in checked]
                if records_here:  # exact whatever the check says: trust a fresh "absent"
                    found = contains_many(names, ride, trust_absent=True)
                elif ride is not None:
                    found = contains_many(names, ride)
                else:
                    found = contains_many(names)
                seen = {i for i, hit in zip(checked, found, strict=True) if hit}
                pending = [i for i in pending if i not in seen]
            if not pending:
                return out
            if records_here:
                return self._record_and_enqueue(curis, pending, ride, out)
            placed = self._enqueue(curis, pending, ride)
        finally:
            if ride is not None:
                ride.close()
        if not placed:
            return out
        recorded = self._uniq.add_many([curis[i].canonical for i, _, _, _ in placed])
        undo: list[tuple[int, str, bytes]] = []
        for (i, shard, qid, member), new in zip(placed, recorded, strict=True):
            if new or curis[i].force_fetch:
                out[i] = True
            else:  # another worker (or an earlier URI of this batch) recorded it first
                undo.append((shard, qid, member))
        if undo:
            self._store.unschedule_many(undo)
        if len(undo) < len(placed):
            # Only now: a round started at once would lease what is about to be taken back
            # (a URI another worker recorded first), and it would be fetched twice.
            with self._lock:
                self._exchange.poke(fresh=True)
        return out

    def records_here(self) -> bool:
        """Whether the uniq filter is on the frontier's one redis-server, so a URI can be
        recorded and queued by one script (RECORD_SCHEDULE)."""
        uniq = self._uniq
        return (
            isinstance(uniq, RedisUriUniqFilter)
            and self._store.one_node
            and uniq.on_server(self._store.params.url)
        )

    def _record_and_enqueue(
        self, curis: Sequence[CrawlURI], indexes: list[int], ride: Ride | None, out: list[bool]
    ) -> list[bool]:
        """Record ``curis[indexes]`` in the uniq filter and queue those new to it (or forced) in
        one step, one round trip: no copy is queued only to be taken back, so two workers
        scheduling one URI at once queue it once. Sets ``out``'s flags and returns it."""
        uniq = self._uniq
        assert isinstance(uniq, RedisUriUniqFilter)  # records_here
        by_shard, where = self._entries(curis, indexes)
        if not by_shard:
            return out
        shards = sorted(by_shard)
        sent = [i for shard in shards for i in where[shard]]
        fps, uniq_keys, uniq_args = uniq.record_args([curis[i].canonical for i in sent])
        forced = "".join("1" if curis[i].force_fetch else "0" for i in sent)
        if ride is not None:
            ride.ready_for(self._store.client)
        added = self._store.schedule_many(by_shard, ride, (forced, uniq_keys, uniq_args))
        uniq.remember(fps)
        queued = False
        for shard in shards:
            for i, new in zip(where[shard], added[shard], strict=True):
                out[i] = new
                queued = queued or new
        if queued:
            with self._lock:
                self._exchange.poke(fresh=True)
        return out

    def _entries(
        self, curis: Sequence[CrawlURI], indexes: list[int]
    ) -> tuple[dict[int, list[tuple[str, int, bytes]]], dict[int, list[int]]]:
        """SCHEDULE's ``(qid, score, member)`` entries of ``curis[indexes]`` by shard, and the
        index of each; a URI without a queue key is reported and left out."""
        prep = self._prep
        by_shard: dict[int, list[tuple[str, int, bytes]]] = {}
        where: dict[int, list[int]] = {}
        for i in indexes:
            curi = curis[i]
            try:
                key = prep.queue_key(curi, None)
            except ValueError as exc:
                self._bad_uri(curi, exc)
                continue
            server = _server_of(curi.uri) or ""
            shard = self._store.shard_of(server or key)
            curi.queue_key = key
            curi.ordinal = self._next_ordinal()
            skey = sort_key(curi.directive, curi.precedence, curi.ordinal)
            member = skey.to_bytes(8, "big") + curi.to_bytes()
            by_shard.setdefault(shard, []).append((f"{key}\t{server}", skey >> 48, member))
            where.setdefault(shard, []).append(i)
        return by_shard, where

    def _enqueue(
        self, curis: Sequence[CrawlURI], indexes: list[int], ride: Ride | None = None
    ) -> list[tuple[int, int, str, bytes]]:
        """SCHEDULE ``curis[indexes]`` (one round trip, ``ride`` applied first); ``(index,
        shard, qid, member)`` of each one added."""
        by_shard, where = self._entries(curis, indexes)
        if not by_shard:
            return []
        if ride is not None:
            ride.ready_for(self._store.client)
        added = self._store.schedule_many(by_shard, ride)
        placed: list[tuple[int, int, str, bytes]] = []
        for shard, entries in by_shard.items():
            for i, (qid, _, member), new in zip(where[shard], entries, added[shard], strict=True):
                if new:
                    placed.append((i, shard, qid, member))
        placed.sort()
        return placed

    def _schedule_local(self, curi: CrawlURI) -> bool:
        """A prerequisite (dns:, robots.txt) of a URI in flight here serves this worker's own
        caches: it stays here, handed out before anything else, so another worker never fetches
        it for nothing."""
        via = self._in_flight.get(curi.via or "")
        if via is None:
            return False
        if not curi.force_fetch:
            contains = getattr(self._uniq, "contains", None)
            if contains is not None and contains(curi.canonical):
                return False
        try:
            key = self._prep.queue_key(curi, (via.qid, int.from_bytes(via.member[:8], "big")))
        except ValueError as exc:
            self._bad_uri(curi, exc)
            return False
        if curi.force_fetch:
            self._uniq.add_force(curi.canonical)
        elif not self._uniq.add(curi.canonical):
            return False
        curi.queue_key = key.rpartition("\t")[0]
        with self._lock:
            self._prerequisites.add(curi)
        return True

    def _bad_uri(self, curi: CrawlURI, exc: ValueError) -> None:
        if self._uri_error is not None:
            self._uri_error(curi.via, str(exc), curi.uri)

    def _next_ordinal(self) -> int:
        with self._lock:
            if self._ordinal >= self._ordinal_end:
                self._ordinal = self._store.reserve_ordinals()
                self._ordinal_end = self._ordinal + ORDINAL_BLOCK
            self._ordinal += 1
            return self._ordinal


def _server_of(uri: str) -> str | None:
    if not uri.startswith(_GATED):
        return None
    try:
        return server_key(uri)
    except ValueError:
        return None
