"""RedisFrontier: the Frontier protocol over a :class:`RedisQueueStore`, shared by many workers.

The per-URI policy is the work-queue frontier's (same canonicalization, uniq filter, URI
precedence, queue assignment, sort key, retries of -1/-2/-3/-50 up to ``max_retries`` after
``retry_delay_s``, politeness delay, Retry-After back-off, bandwidth hold). The queue states are
in Redis (see :mod:`crawler.frontier.redis_scripts`):

* ``schedule_many`` (a page's outlinks): canonicalize, drop duplicates within the batch, one
  pipelined ``contains`` of the uniq filter, then SCHEDULE the new ones (queue id
  ``key\\tserver``, shard of the server; one call per shard group, one round trip), then one
  ``add_many`` of the uniq filter, then UNSCHEDULE any another worker recorded first: three round
  trips per page whatever its link count. ``schedule`` is ``schedule_many`` of one.
* ``next``: a round of this process's :class:`~crawler.frontier.redis_exchange.RedisExchange`
  (run by the asking thread itself when none is under way, else awaited) leases due queues for
  all waiting threads at once (CLAIM re-checks due time and the server cap and leases the head
  for ``lease_s``), one round trip per batch; Redis is polled only while a thread waits.
* ``finished``: FINISH (sent by the exchange with the next round) removes (or, for a retry,
  rewrites) the URI, frees the server slot, snoozes the queue for the politeness delay, wakes
  queues parked on the server and, when threads here wait and the queue may be fetched now,
  leases its next URI to this worker in the same call.
* a prerequisite (``P`` hop) of a URI in flight here stays in this worker (served first, retried
  here) and the via's queue stays leased until it is done: dns: and robots.txt results live in
  each worker's caches, so each worker fetches a host's robots.txt once, never for another.
* a background thread renews this worker's leases every ``lease_s / 4`` and reaps any worker's
  expired leases (a killed worker's URIs go back to the head of their queues).

Deviations from :class:`~crawler.frontier.WorkQueueFrontier`: no session budget rotation,
inactive queues or queue precedence (every non-empty queue competes by due time), no total
budget; a hash-policy queue spanning servers is split per server. ``is_empty`` is crawl-wide: two
reads of every shard's counters that agree (no operation in between) with nothing queued.

Reads/writes on the CrawlURI as WorkQueueFrontier does. Thread-safe: per-call Redis scripts are
atomic; local state (in-flight map, ordinals, the exchange's batches) is under one lock.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import structlog

from crawler.clock import Clock, SystemClock
from crawler.curi import RETRYABLE_STATUSES, CrawlURI, FetchStatus
from crawler.frontier.assignment import QueueAssignmentPolicy
from crawler.frontier.frontier import FrontierSnapshot, FrontierStateError
from crawler.frontier.politeness import BACKOFF_MS_KEY, SERVER_HOLD_MS_KEY
from crawler.frontier.preparer import FrontierPreparer
from crawler.frontier.queue_store import sort_key
from crawler.frontier.redis_conn import RedisUnavailableError
from crawler.frontier.redis_exchange import MAX_IDLE_SLEEP_S, Leased, RedisExchange
from crawler.frontier.redis_store import ORDINAL_BLOCK, RedisQueueStore
from crawler.order.schema import FrontierConfig
from crawler.uniq.uniq_filter import UniqStateError, UriUniqFilter
from crawler.urls import server_key

_GATED = ("http:", "https:", "ftp:")
PREFETCH = 0
"""URIs leased ahead while threads wait, so the next round trip overlaps their work."""
MAX_READ_WAIT_S = 5.0


class _InFlight:
    __slots__ = ("member", "qid", "server", "shard")

    def __init__(self, shard: int, qid: str, server: str, member: bytes) -> None:
        self.shard = shard
        self.qid = qid
        self.server = server
        self.member = member


class RedisFrontier:
    """A worker's view of the shared frontier. Build with the parts unopened, then :meth:`open`."""

    def __init__(
        self,
        store: RedisQueueStore,
        policy: QueueAssignmentPolicy[Any],
        uniq: UriUniqFilter[Any],
        config: FrontierConfig,
        *,
        clock: Clock | None = None,
        on_final: Callable[[CrawlURI], None] | None = None,
        logger: Any = None,
        uri_error: Callable[[str | None, str, str], None] | None = None,
    ) -> None:
        self._store = store
        self._uniq = uniq
        self._config = config
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._on_final = on_final
        self._logger: Any = logger if logger is not None else structlog.get_logger("frontier")
        self._uri_error = uri_error
        self._prep = FrontierPreparer(config, policy)
        self._max_retries = config.retries.max_retries
        pol = config.politeness
        self._min_delay_ms = pol.min_delay_ms
        self._max_conn = pol.host_max_connections
        self._interval_ms = pol.host_min_interval_ms
        self._lock = threading.Lock()
        self._in_flight: dict[str, _InFlight] = {}
        self._local: list[tuple[float, CrawlURI]] = []
        self._local_out: dict[int, str] = {}
        self._waiting: dict[str, CrawlURI] = {}
        self._claimed: deque[CrawlURI] = deque()
        self._waiters = 0
        self._wake = threading.Condition(self._lock)
        self._exchange = RedisExchange(
            store,
            self._logger,
            self._lock,
            max_conn=self._max_conn,
            interval_ms=self._interval_ms,
            demand=self._demand,
            on_leased=self._leased,
            held=self._in_flight.__len__,
        )
        self._ordinal = 0
        self._ordinal_end = 0
        self._finishing = 0
        self._closed = threading.Event()
        self._keeper: threading.Thread | None = None

    # ------------------------------------------------------------ lifecycle
    def open(self, state_dir: Path) -> None:
        """Connect the store and the uniq filter; start the exchange and lease keeper threads."""
        self._store.open(state_dir)
        try:
            self._uniq.open(state_dir)
        except (UniqStateError, RedisUnavailableError) as exc:
            self._store.close()
            raise FrontierStateError(f"cannot open the already-seen filter: {exc}") from exc
        self._exchange.start()
        self._keeper = threading.Thread(target=self._keep_leases, name="lease-keeper", daemon=True)
        self._keeper.start()

    def close(self) -> None:
        """Stop the threads and disconnect. URIs still leased return after their lease."""
        if self._closed.is_set():
            return
        self._closed.set()
        with self._lock:
            self._wake.notify_all()
        self._exchange.close()
        with self._lock:
            unused = list(self._claimed)
            self._claimed.clear()
        releases = []
        for curi in unused:  # leased ahead, never handed out: back to their queues now
            entry = self._in_flight.pop(curi.uri)
            score = int.from_bytes(entry.member[:8], "big") >> 48
            args = [entry.member, "r", entry.member, score, 0, 0, 0, 0, 0, 0]
            releases.append((entry.shard, entry.qid, entry.server, args, curi.uri))
        self._exchange.send_now(releases)
        if self._keeper is not None:
            self._keeper.join(timeout=5)
        self._store.close()
        self._uniq.close()

    def _keep_leases(self) -> None:
        period_s = max(0.05, self._store.params.lease_s / 4)
        while not self._closed.wait(period_s):
            with self._lock:
                held: dict[int, list[str]] = {}
                for entry in self._in_flight.values():
                    held.setdefault(entry.shard, []).append(entry.qid)
            try:
                if held:
                    self._store.renew(held)
                reaped = self._store.reap(self._max_conn)
                if reaped:
                    self._logger.warning("expired_leases_reaped", queues=reaped)
                    with self._lock:
                        self._exchange.poke(fresh=True)
            except RedisUnavailableError as exc:
                self._logger.error("lease_keeper_redis_unavailable", error=str(exc))
            except Exception:
                if self._closed.is_set():
                    return
                self._logger.exception("lease_keeper_failed")

    # ------------------------------------------------------------ schedule
    def schedule(self, curi: CrawlURI) -> bool:
        """Queue ``curi`` unless already seen crawl-wide. True if queued."""
        return self.schedule_many((curi,))[0]

    def schedule_many(self, curis: Sequence[CrawlURI]) -> list[bool]:
        """Queue each of ``curis`` unless already seen crawl-wide (or earlier in ``curis``); one
        flag per URI, True if queued. A few round trips whatever the count (module doc).

        Queue first, record second: a worker killed in between leaves at worst a URI queued
        twice, never one recorded as seen but queued nowhere.
        """
        out = [False] * len(curis)
        if self._closed.is_set():
            return out
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
        checked = [i for i in pending if not curis[i].force_fetch]
        contains_many = getattr(self._uniq, "contains_many", None)
        if checked and contains_many is not None:
            found = contains_many([curis[i].canonical for i in checked])
            seen = {i for i, hit in zip(checked, found, strict=True) if hit}
            pending = [i for i in pending if i not in seen]
        if not pending:
            return out
        placed = self._enqueue(curis, pending)
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
        return out

    def _enqueue(
        self, curis: Sequence[CrawlURI], indexes: list[int]
    ) -> list[tuple[int, int, str, bytes]]:
        """SCHEDULE ``curis[indexes]`` (one round trip); ``(index, shard, qid, member)`` of each
        one added."""
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
        if not by_shard:
            return []
        added = self._store.schedule_many(by_shard)
        placed: list[tuple[int, int, str, bytes]] = []
        for shard, entries in by_shard.items():
            for i, (qid, _, member), new in zip(where[shard], entries, added[shard], strict=True):
                if new:
                    placed.append((i, shard, qid, member))
        placed.sort()
        with self._lock:
            self._exchange.poke(fresh=True)
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
            self._local.append((0.0, curi))
            self._wake.notify()
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

    # ---------------------------------------------------------------- next
    def next(self, timeout_s: float) -> CrawlURI | None:
        """A leased URI whose queue and server may be fetched now, or None after ``timeout_s``.

        Waits on this process's exchange thread; never calls Redis itself."""
        deadline = time.monotonic() + max(0.0, timeout_s)
        with self._lock:
            self._waiters += 1
            try:
                exchange = self._exchange
                # Even with no time left, wait for one read of Redis begun after this call
                # (bounded), so ``next(0)`` answers for the shared frontier as it is now.
                read_by = -1
                while not self._closed.is_set():
                    curi, local_wait_s = self._take_local()
                    if curi is not None:
                        return curi
                    if self._claimed:
                        return self._claimed.popleft()
                    if read_by < 0:
                        read_by = exchange.reads_started + 1
                    now = time.monotonic()
                    if exchange.ready(now):
                        exchange.round()  # this thread does the round trip: no hand-off
                        continue
                    remaining = deadline - now
                    if remaining <= 0:
                        if exchange.last_empty_read >= read_by or now > deadline + MAX_READ_WAIT_S:
                            return None
                        remaining = MAX_READ_WAIT_S
                    exchange.poke()
                    # The round under way wakes us when done; else wake when polling is due.
                    poll_s = exchange.next_poll_s(now) if not exchange.busy else remaining
                    self._wake.wait(min(remaining, local_wait_s, poll_s + 0.001))
                return None
            finally:
                self._waiters -= 1

    def _demand(self) -> int:
        """URIs the exchange should lease now (called with the lock held)."""
        if not self._waiters:
            return 0
        return self._waiters + PREFETCH - len(self._claimed)

    def _leased(self, leased: list[Leased]) -> None:
        """Take URIs the exchange leased, if any, after a round (called with the lock held)."""
        for shard, qid, server, member in leased:
            curi = CrawlURI.from_bytes(member[8:])
            curi.queue_key = qid.rpartition("\t")[0]
            self._in_flight[curi.uri] = _InFlight(shard, qid, server, member)
            self._claimed.append(curi)
        if leased:
            self._wake.notify(len(leased) + 1)  # and one to run the next round if still needed
        else:  # a read found nothing: threads waiting for its answer may return
            self._wake.notify_all()

    def _take_local(self) -> tuple[CrawlURI | None, float]:
        """This worker's own due prerequisite, or how long until one is due (under the lock)."""
        if not self._local:
            return None, MAX_IDLE_SLEEP_S
        now = time.monotonic()
        for i, (due_s, curi) in enumerate(self._local):
            if due_s <= now:
                del self._local[i]
                if curi.uri not in self._in_flight:  # not a via coming back
                    self._local_out[id(curi)] = curi.via or ""
                return curi, 0.0
        soonest = min(due for due, _ in self._local)
        return None, max(0.001, soonest - now)

    # ------------------------------------------------------------ finished
    def finished(self, curi: CrawlURI) -> bool:
        """Retry ``curi`` (False) or record its final disposition and call ``on_final`` (True)."""
        status = curi.status
        with self._lock:
            via_uri = self._local_out.pop(id(curi), None)
            if via_uri is not None:
                entry = None
            elif (
                status == FetchStatus.DEFERRED
                and curi.fetch_attempts + 1 < self._max_retries
                and self._prerequisite_pending(curi.uri)
            ):
                # Keep the queue leased until this worker has the prerequisite (as Heritrix
                # keeps the queue busy): no other worker takes its next URI meanwhile.
                curi.fetch_attempts += 1
                curi.reset_for_retry()
                self._waiting[curi.uri] = curi
                return False
            else:
                entry = self._in_flight.pop(curi.uri, None)
        if via_uri is not None:
            return self._finish_local(curi, via_uri)
        if entry is None:
            raise ValueError(f"{curi!r} was not handed out by this frontier or is already finished")
        curi.fetch_attempts += 1
        backoff_ms = int(float(curi.data.pop(BACKOFF_MS_KEY, 0) or 0))
        hold_ms = int(float(curi.data.pop(SERVER_HOLD_MS_KEY, 0) or 0))
        max_conn = self._max_conn
        interval_ms = self._interval_ms if entry.server else 0
        if status in RETRYABLE_STATUSES and curi.fetch_attempts < self._max_retries:
            delay_ms = max(int(curi.retry_delay_s * 1000), backoff_ms)
            curi.reset_for_retry()
            skey_bytes = entry.member[:8]
            member = skey_bytes + curi.to_bytes()
            score = int.from_bytes(skey_bytes, "big") >> 48
            args = [entry.member, "r", member, score, delay_ms, backoff_ms, hold_ms, max_conn]
            with self._lock:
                self._exchange.put(
                    (entry.shard, entry.qid, entry.server, [*args, 0, interval_ms], curi.uri)
                )
            return False
        delay_ms = curi.politeness_delay_ms
        if delay_ms < 0:
            delay_ms = self._min_delay_ms
        if curi.is_disregarded:
            kind = "disregarded"
        elif curi.is_success:
            kind = "succeeded"
        else:
            kind = "failed"
        args = [
            entry.member,
            kind,
            b"",
            0,
            max(delay_ms, backoff_ms),
            backoff_ms,
            hold_ms,
            max_conn,
            0,
            interval_ms,
        ]
        with self._lock:
            self._finishing += 1
        try:
            # Log first: a worker killed between the two leaves a URI crawled (and logged) twice
            # rather than one crawled and never logged.
            if self._on_final is not None:
                self._on_final(curi)
        except Exception:
            self._logger.exception("frontier_on_final_failed", uri=curi.uri)
        with self._lock:
            self._exchange.put((entry.shard, entry.qid, entry.server, args, curi.uri))
            self._finishing -= 1
        return True

    def _prerequisite_pending(self, via_uri: str) -> bool:
        """Whether a prerequisite of ``via_uri`` is queued or in flight here (under the lock)."""
        return via_uri in self._local_out.values() or any(c.via == via_uri for _, c in self._local)

    def _finish_local(self, curi: CrawlURI, via_uri: str) -> bool:
        curi.fetch_attempts += 1
        curi.data.pop(BACKOFF_MS_KEY, None)
        curi.data.pop(SERVER_HOLD_MS_KEY, None)
        if curi.status in RETRYABLE_STATUSES and curi.fetch_attempts < self._max_retries:
            due_s = time.monotonic() + max(0.0, curi.retry_delay_s)
            curi.reset_for_retry()
            with self._lock:
                self._local.append((due_s, curi))
                self._wake.notify()
            return False
        with self._lock:
            via = self._waiting.get(via_uri)
            if via is not None and not self._prerequisite_pending(via_uri):
                del self._waiting[via_uri]
                self._local.append((0.0, via))
                self._wake.notify()
        try:
            if self._on_final is not None:
                self._on_final(curi)
        except Exception:
            self._logger.exception("frontier_on_final_failed", uri=curi.uri)
        return True

    def flush(self, timeout_s: float = 30.0) -> bool:
        """Wait until every ``finished`` so far reached Redis; False on timeout."""
        return self._exchange.wait_idle(timeout_s)

    @property
    def lost_leases(self) -> int:
        """URIs this worker finished after its lease had expired (another worker had them)."""
        return self._exchange.lost_leases

    # ------------------------------------------------------------- reports
    def is_empty(self) -> bool:
        """Nothing queued crawl-wide and nothing being finished here (see the module doc)."""
        with self._lock:
            if self._finishing or self._in_flight or self._local or self._local_out:
                return False
        with self._lock:
            if self._exchange.pending():
                return False
        try:
            first = self._store.shard_states()
            if any(s["queued"] or s["in_process"] for s in first):
                return False
            second = self._store.shard_states()
        except RedisUnavailableError:
            return False
        return all(
            a["ops"] == b["ops"] and not b["queued"] and not b["in_process"]
            for a, b in zip(first, second, strict=True)
        )

    def snapshot(self) -> FrontierSnapshot:
        """Crawl-wide counts (all workers), from every shard's counters."""
        try:
            states = self._store.shard_states()
        except RedisUnavailableError:
            return FrontierSnapshot()
        total = {k: sum(s[k] for s in states) for k in states[0]} if states else {}
        queues = {
            "ready": total.get("ready", 0),
            "in_process": total.get("in_process", 0),
            "snoozed": total.get("snoozed", 0),
            "inactive": 0,
            "retired": 0,
            "exhausted": 0,
        }
        active = queues["ready"] + queues["in_process"] + queues["snoozed"]
        busy = queues["in_process"] + queues["snoozed"]
        return FrontierSnapshot(
            discovered=self._uniq.count(),
            queued=total.get("queued", 0),
            in_process=queues["in_process"],
            succeeded=total.get("succeeded", 0),
            failed=total.get("failed", 0),
            disregarded=total.get("disregarded", 0),
            queues=queues,
            total_queues=active,
            congestion=active / busy if busy else 0.0,
        )

    def queue_details(self, limit: int = 2000) -> list[Any]:
        """Per-queue detail is not kept for the shared frontier (reports show the counts)."""
        return []

    @property
    def config(self) -> FrontierConfig:
        """The frontier section of the order this frontier runs with."""
        return self._config


def _server_of(uri: str) -> str | None:
    if not uri.startswith(_GATED):
        return None
    try:
        return server_key(uri)
    except ValueError:
        return None
