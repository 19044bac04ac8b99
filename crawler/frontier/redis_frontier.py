"""RedisFrontier: the Frontier protocol over a :class:`RedisQueueStore`, shared by many workers.

The per-URI policy is the work-queue frontier's (same canonicalization, uniq filter, URI
precedence, queue assignment, sort key, retries of -1/-2/-3/-50 up to ``max_retries`` after
``retry_delay_s``, politeness delay, Retry-After back-off, bandwidth hold). The queue states are
in Redis (see :mod:`crawler.frontier.redis_scripts`):

* ``schedule``: canonicalize -> uniq filter (shared) -> queue key -> queue id ``key\\tserver``
  -> shard of the server -> SCHEDULE (queue becomes ready unless one of its URIs is in flight).
* ``next``: read the earliest ready queues of every shard (one pipelined round trip), try to
  CLAIM due ones in random order (the script re-checks due time and the server cap, and leases
  the head for ``lease_s``); sleep until the earliest due time (at most 0.5 s) otherwise.
* ``finished``: FINISH removes (or, for a retry, rewrites) the URI, frees the server slot,
  snoozes the queue for the politeness delay and wakes queues parked on the server.
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
atomic; local state (in-flight map, ordinals) is under one lock.
"""

from __future__ import annotations

import random
import threading
import time
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
from crawler.frontier.redis_outbox import FinishOutbox
from crawler.frontier.redis_store import ORDINAL_BLOCK, RedisQueueStore
from crawler.order.schema import FrontierConfig
from crawler.uniq.uniq_filter import UniqStateError, UriUniqFilter
from crawler.urls import server_key

_GATED = ("http:", "https:", "ftp:")
CANDIDATES_PER_SHARD = 8
CLAIM_BATCH = 8
"""Queues claimed per round trip; those not handed out at once wait for this worker's threads."""
CANDIDATES_TTL_S = 0.05
"""How long a read of the ready queues serves claims (a stale one only costs failed claims)."""
MAX_IDLE_SLEEP_S = 0.2


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
        self._cands: list[tuple[int, str]] = []
        self._claimed: list[CrawlURI] = []
        self._waiters = 0
        self._wake = threading.Condition(self._lock)
        self._outbox = FinishOutbox(store, self._logger, self._released)
        self._cands_at = -CANDIDATES_TTL_S
        self._cands_wait_s = 0.0
        self._cands_found = False
        self._ordinal = 0
        self._ordinal_end = 0
        self._finishing = 0
        self._closed = threading.Event()
        self._keeper: threading.Thread | None = None

    # ------------------------------------------------------------ lifecycle
    def open(self, state_dir: Path) -> None:
        """Connect the store and the uniq filter; start the lease keeper thread."""
        self._store.open(state_dir)
        try:
            self._uniq.open(state_dir)
        except (UniqStateError, RedisUnavailableError) as exc:
            self._store.close()
            raise FrontierStateError(f"cannot open the already-seen filter: {exc}") from exc
        self._outbox.start()
        self._keeper = threading.Thread(target=self._keep_leases, name="lease-keeper", daemon=True)
        self._keeper.start()

    def close(self) -> None:
        """Stop the lease keeper and disconnect. URIs still leased return after their lease."""
        if self._closed.is_set():
            return
        self._closed.set()
        with self._lock:
            self._wake.notify_all()
            unused, self._claimed = self._claimed, []
        for curi in unused:  # claimed ahead, never handed out: back to their queues now
            entry = self._in_flight.pop(curi.uri)
            args = [entry.member, "r", entry.member, int.from_bytes(entry.member[:8], "big") >> 48]
            self._outbox.put((entry.shard, entry.qid, entry.server, [*args, 0, 0, 0, 0], curi.uri))
        self._outbox.close()
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
            except RedisUnavailableError as exc:
                self._logger.error("lease_keeper_redis_unavailable", error=str(exc))
            except Exception:
                if self._closed.is_set():
                    return
                self._logger.exception("lease_keeper_failed")

    # ------------------------------------------------------------ schedule
    def schedule(self, curi: CrawlURI) -> bool:
        """Queue ``curi`` unless already seen crawl-wide. True if queued."""
        if self._closed.is_set():
            return False
        uri = curi.uri
        prep = self._prep
        try:
            canonical = prep.canonical(uri)
        except ValueError as exc:
            if self._uri_error is not None:
                self._uri_error(curi.via, str(exc), uri)
            return False
        curi.canonical = canonical
        # Queue first, record second (re-checking): a worker killed in between leaves at worst a
        # URI queued twice, never one recorded as seen but queued nowhere.
        contains = getattr(self._uniq, "contains", None)
        if not curi.force_fetch and contains is not None and contains(canonical):
            return False
        via = self._in_flight.get(curi.via) if curi.via and curi.hop_path.endswith("P") else None
        try:
            key = prep.queue_key(
                curi,
                None if via is None else (via.qid, int.from_bytes(via.member[:8], "big")),
            )
        except ValueError as exc:
            if self._uri_error is not None:
                self._uri_error(curi.via, str(exc), uri)
            return False
        if via is not None:
            # A prerequisite (dns:, robots.txt) serves this worker's own caches: it stays here,
            # handed out before anything else, so another worker never fetches it for nothing.
            if not self._record(curi):
                return False
            curi.queue_key = key.rpartition("\t")[0]
            with self._lock:
                self._local.append((0.0, curi))
                self._wake.notify()
            return True
        server = _server_of(uri) or ""
        shard, qid = self._store.shard_of(server or key), f"{key}\t{server}"
        curi.queue_key = key
        curi.ordinal = self._next_ordinal()
        skey = sort_key(curi.directive, curi.precedence, curi.ordinal)
        member = skey.to_bytes(8, "big") + curi.to_bytes()
        self._store.schedule(shard, [(qid, skey >> 48, member)])
        if not self._record(curi):
            self._store.unschedule(shard, qid, member)
            return False
        return True

    def schedule_many(self, curis: Sequence[CrawlURI]) -> list[bool]:
        """:meth:`schedule` each of ``curis`` in order."""
        return [self.schedule(curi) for curi in curis]

    def _record(self, curi: CrawlURI) -> bool:
        """Record ``curi.canonical`` in the uniq filter; False if another worker was first."""
        if curi.force_fetch:
            self._uniq.add_force(curi.canonical)
            return True
        return self._uniq.add(curi.canonical)

    def _next_ordinal(self) -> int:
        with self._lock:
            if self._ordinal >= self._ordinal_end:
                self._ordinal = self._store.reserve_ordinals()
                self._ordinal_end = self._ordinal + ORDINAL_BLOCK
            self._ordinal += 1
            return self._ordinal

    # ---------------------------------------------------------------- next
    def next(self, timeout_s: float) -> CrawlURI | None:
        """A leased URI whose queue and server may be fetched now, or None after ``timeout_s``."""
        deadline = time.monotonic() + max(0.0, timeout_s)
        with self._lock:
            self._waiters += 1
        try:
            return self._next(deadline)
        finally:
            with self._lock:
                self._waiters -= 1

    def _next(self, deadline: float) -> CrawlURI | None:
        while not self._closed.is_set():
            try:
                curi, wait_s = self._try_claim()
            except RedisUnavailableError as exc:
                self._logger.error("frontier_redis_unavailable", error=str(exc))
                curi, wait_s = None, MAX_IDLE_SLEEP_S
            if curi is not None:
                return curi
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            with self._lock:
                if not self._claimed and not self._local and not self._closed.is_set():
                    self._wake.wait(min(remaining, wait_s))
        return None

    def _take_local(self) -> tuple[CrawlURI | None, float]:
        """This worker's own due prerequisite, or how long until one is due (inf: none)."""
        now = time.monotonic()
        with self._lock:
            for i, (due_s, curi) in enumerate(self._local):
                if due_s <= now:
                    del self._local[i]
                    if curi.uri not in self._in_flight:  # not a via coming back
                        self._local_out[id(curi)] = curi.via or ""
                    return curi, 0.0
            soonest = min((due for due, _ in self._local), default=now + MAX_IDLE_SLEEP_S)
        return None, soonest - now

    def _try_claim(self) -> tuple[CrawlURI | None, float]:
        local, local_wait_s = self._take_local()
        if local is not None:
            return local, 0.0
        with self._lock:
            if self._claimed:
                return self._claimed.pop(), 0.0
        refreshed = False
        while True:
            with self._lock:
                fresh = time.monotonic() - self._cands_at < CANDIDATES_TTL_S
                # Claim ahead only for threads already waiting here: a queue claimed ahead is
                # out of the other workers' reach until one of ours takes it.
                want = min(CLAIM_BATCH, max(1, self._waiters - len(self._claimed)))
                batch = self._cands[-want:] if fresh else []
                del self._cands[len(self._cands) - len(batch) :]
            if not batch:
                if refreshed or (fresh and not self._cands_found):
                    break  # this thread, or another one just now, found nothing due
                self._refresh_candidates()
                refreshed = True
                continue
            items = [(shard, qid, qid.rpartition("\t")[2]) for shard, qid in batch]
            members = self._store.claim_many(items, self._max_conn, self._interval_ms)
            got: list[CrawlURI] = []
            with self._lock:
                for (shard, qid, server), member in zip(items, members, strict=True):
                    if member is None:
                        continue
                    curi = CrawlURI.from_bytes(member[8:])
                    curi.queue_key = qid.rpartition("\t")[0]
                    self._in_flight[curi.uri] = _InFlight(shard, qid, server, member)
                    got.append(curi)
                if got:
                    first = got.pop()
                    if got:
                        self._claimed.extend(got)
                        self._wake.notify(len(got))
                    return first, 0.0
        return None, min(MAX_IDLE_SLEEP_S, local_wait_s, self._cands_wait_s)

    def _refresh_candidates(self) -> None:
        """Read the earliest queues of every shard (one round trip) into the shared cache: the
        due ones, shuffled, for the threads to claim; the time until the next one is due."""
        due, wait_ms = self._store.candidates(CANDIDATES_PER_SHARD)
        random.shuffle(due)
        wait_s = MAX_IDLE_SLEEP_S if wait_ms < 0 else wait_ms / 1000.0
        with self._lock:
            self._cands = due
            self._cands_found = bool(due)
            self._cands_at = time.monotonic()
            self._cands_wait_s = min(MAX_IDLE_SLEEP_S, max(0.005, wait_s))

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
        if status in RETRYABLE_STATUSES and curi.fetch_attempts < self._max_retries:
            delay_ms = max(int(curi.retry_delay_s * 1000), backoff_ms)
            curi.reset_for_retry()
            skey_bytes = entry.member[:8]
            member = skey_bytes + curi.to_bytes()
            score = int.from_bytes(skey_bytes, "big") >> 48
            args = [entry.member, "r", member, score, delay_ms, backoff_ms, hold_ms, max_conn]
            self._outbox.put((entry.shard, entry.qid, entry.server, args, curi.uri))
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
        self._outbox.put((entry.shard, entry.qid, entry.server, args, curi.uri))
        with self._lock:
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

    def _released(self) -> None:
        """Queues this worker finished are back in Redis: look again now, not at the next poll."""
        with self._lock:
            if not self._cands:
                self._cands_at = -CANDIDATES_TTL_S
            self._wake.notify()

    def flush(self, timeout_s: float = 30.0) -> bool:
        """Wait until every ``finished`` so far reached Redis; False on timeout."""
        return self._outbox.wait_idle(timeout_s)

    @property
    def lost_leases(self) -> int:
        """URIs this worker finished after its lease had expired (another worker had them)."""
        return self._outbox.lost_leases

    # ------------------------------------------------------------- reports
    def is_empty(self) -> bool:
        """Nothing queued crawl-wide and nothing being finished here (see the module doc)."""
        with self._lock:
            if self._finishing or self._in_flight or self._local or self._local_out:
                return False
        if self._outbox.pending():
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
