"""RedisFrontier: the Frontier protocol over a :class:`RedisQueueStore`, shared by many workers.

The per-URI policy is the work-queue frontier's (same canonicalization, uniq filter, URI
precedence, queue assignment, sort key, retries of -1/-2/-3/-50 up to ``max_retries`` after
``retry_delay_s``, politeness delay, Retry-After back-off, bandwidth hold). The queue states are in Redis (see
:mod:`crawler.frontier.redis_scripts`):

* ``schedule``: canonicalize -> uniq filter (shared) -> queue key -> queue id ``key\\tserver``
  -> shard of the server -> SCHEDULE (queue becomes ready unless one of its URIs is in flight).
* ``next``: read the earliest ready queues of every shard (one pipelined round trip), try to
  CLAIM due ones in random order (the script re-checks due time and the server cap, and leases
  the head for ``lease_s``); sleep until the earliest due time (at most 0.5 s) otherwise.
* ``finished``: FINISH removes (or, for a retry, rewrites) the URI, frees the server slot,
  snoozes the queue for the politeness delay and wakes queues parked on the server.
* a prerequisite (``P`` hop) of a URI in flight here stays in this worker (served first, retried
  here): dns: and robots.txt results live in each worker's caches, so every worker fetches a
  host's robots.txt once, and never on behalf of another.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog

from crawler.clock import Clock, SystemClock
from crawler.curi import RETRYABLE_STATUSES, CrawlURI
from crawler.frontier.assignment import QueueAssignmentPolicy
from crawler.frontier.frontier import FrontierSnapshot, FrontierStateError
from crawler.frontier.politeness import BACKOFF_MS_KEY, SERVER_HOLD_MS_KEY
from crawler.frontier.precedence import COST_POLICIES, uri_precedence_function
from crawler.frontier.queue_store import sort_key
from crawler.frontier.redis_conn import RedisUnavailableError
from crawler.frontier.redis_store import ORDINAL_BLOCK, RedisQueueStore
from crawler.order.schema import FrontierConfig
from crawler.uniq.uniq_filter import UniqStateError, UriUniqFilter
from crawler.urls import Canonicalizer, server_key

_GATED = ("http:", "https:", "ftp:")
_NEEDS_HOST = frozenset({"http", "https", "ftp", "dns"})
CANDIDATES_PER_SHARD = 8
MAX_IDLE_SLEEP_S = 0.5


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
        self._policy = policy
        self._uniq = uniq
        self._config = config
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._on_final = on_final
        self._logger: Any = logger if logger is not None else structlog.get_logger("frontier")
        self._uri_error = uri_error
        self._canonicalize = Canonicalizer(config.canonicalization).canonicalize
        self._cost = COST_POLICIES[config.cost_policy]
        self._uri_precedence = uri_precedence_function(config, self._cost)
        self._max_retries = config.retries.max_retries
        pol = config.politeness
        self._min_delay_ms = pol.min_delay_ms
        self._max_conn = pol.host_max_connections
        self._interval_ms = pol.host_min_interval_ms
        self._lock = threading.Lock()
        self._in_flight: dict[str, _InFlight] = {}
        self._local: list[tuple[float, CrawlURI]] = []
        self._local_out: set[int] = set()
        self._ordinal = 0
        self._ordinal_end = 0
        self._finishing = 0
        self._closed = threading.Event()
        self._keeper: threading.Thread | None = None
        self.lost_leases = 0

    # ------------------------------------------------------------ lifecycle
    def open(self, state_dir: Path) -> None:
        """Connect the store and the uniq filter; start the lease keeper thread."""
        self._store.open(state_dir)
        try:
            self._uniq.open(state_dir)
        except (UniqStateError, RedisUnavailableError) as exc:
            self._store.close()
            raise FrontierStateError(f"cannot open the already-seen filter: {exc}") from exc
        self._keeper = threading.Thread(target=self._keep_leases, name="lease-keeper", daemon=True)
        self._keeper.start()

    def close(self) -> None:
        """Stop the lease keeper and disconnect. URIs still leased return after their lease."""
        if self._closed.is_set():
            return
        self._closed.set()
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
        try:
            canonical = self._canonicalize(uri)
            _check_host(canonical, uri)
        except ValueError as exc:
            if self._uri_error is not None:
                self._uri_error(curi.via, str(exc), uri)
            return False
        curi.canonical = canonical
        if curi.force_fetch:
            self._uniq.add_force(canonical)
        elif not self._uniq.add(canonical):
            return False
        if self._uri_precedence is not None:
            curi.precedence = self._uri_precedence(curi)
        via = self._in_flight.get(curi.via) if curi.via and curi.hop_path.endswith("P") else None
        if via is not None:
            # A prerequisite (dns:, robots.txt) serves this worker's own caches: it stays here,
            # handed out before anything else, so another worker never fetches it for nothing.
            curi.queue_key = via.qid.rpartition("\t")[0]
            with self._lock:
                self._local.append((0.0, curi))
            return True
        try:
            key = curi.queue_key or self._policy.key(curi)
        except ValueError as exc:
            if self._uri_error is not None:
                self._uri_error(curi.via, f"no queue for URI: {exc}", uri)
            return False
        server = _server_of(uri) or ""
        shard, qid = self._store.shard_of(server or key), f"{key}\t{server}"
        curi.queue_key = key
        curi.ordinal = self._next_ordinal()
        skey = sort_key(curi.directive, curi.precedence, curi.ordinal)
        member = skey.to_bytes(8, "big") + curi.to_bytes()
        self._store.schedule(shard, [(qid, skey >> 48, member)])
        return True

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
            self._closed.wait(min(remaining, wait_s))
        return None

    def _take_local(self) -> tuple[CrawlURI | None, float]:
        """This worker's own due prerequisite, or how long until one is due (inf: none)."""
        now = time.monotonic()
        with self._lock:
            for i, (due_s, curi) in enumerate(self._local):
                if due_s <= now:
                    del self._local[i]
                    self._local_out.add(id(curi))
                    return curi, 0.0
            soonest = min((due for due, _ in self._local), default=now + MAX_IDLE_SLEEP_S)
        return None, soonest - now

    def _try_claim(self) -> tuple[CrawlURI | None, float]:
        local, local_wait_s = self._take_local()
        if local is not None:
            return local, 0.0
        now_ms, rows = self._store.candidates(CANDIDATES_PER_SHARD)
        due = [(shard, qid) for score, shard, qid in rows if score <= now_ms]
        later = [score for score, _, _ in rows if score > now_ms]
        random.shuffle(due)
        for shard, qid in due:
            server = qid.rpartition("\t")[2]
            member, due_ms = self._store.claim(
                shard,
                qid,
                server,
                self._max_conn if server else 0,
                self._interval_ms if server else 0,
            )
            if member is None:
                if due_ms:
                    later.append(due_ms)
                continue
            curi = CrawlURI.from_bytes(member[8:])
            curi.queue_key = qid.rpartition("\t")[0]
            with self._lock:
                self._in_flight[curi.uri] = _InFlight(shard, qid, server, member)
            return curi, 0.0
        wait_ms = (min(later) - now_ms) if later else MAX_IDLE_SLEEP_S * 1000
        return None, min(MAX_IDLE_SLEEP_S, local_wait_s, max(0.005, wait_ms / 1000.0))

    # ------------------------------------------------------------ finished
    def finished(self, curi: CrawlURI) -> bool:
        """Retry ``curi`` (False) or record its final disposition and call ``on_final`` (True)."""
        with self._lock:
            entry = self._in_flight.pop(curi.uri, None)
            local = entry is None and id(curi) in self._local_out
            if local:
                self._local_out.discard(id(curi))
        if local:
            return self._finish_local(curi)
        if entry is None:
            raise ValueError(f"{curi!r} was not handed out by this frontier or is already finished")
        curi.fetch_attempts += 1
        status = curi.status
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
            self._finish(entry, args, curi)
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
            self._finish(entry, args, curi)
            if self._on_final is not None:
                self._on_final(curi)
        except Exception:
            self._logger.exception("frontier_on_final_failed", uri=curi.uri)
        finally:
            with self._lock:
                self._finishing -= 1
        return True

    def _finish_local(self, curi: CrawlURI) -> bool:
        curi.fetch_attempts += 1
        curi.data.pop(BACKOFF_MS_KEY, None)
        curi.data.pop(SERVER_HOLD_MS_KEY, None)
        if curi.status in RETRYABLE_STATUSES and curi.fetch_attempts < self._max_retries:
            due_s = time.monotonic() + max(0.0, curi.retry_delay_s)
            curi.reset_for_retry()
            with self._lock:
                self._local.append((due_s, curi))
            return False
        try:
            if self._on_final is not None:
                self._on_final(curi)
        except Exception:
            self._logger.exception("frontier_on_final_failed", uri=curi.uri)
        return True

    def _finish(self, entry: _InFlight, args: list[Any], curi: CrawlURI) -> None:
        if not self._store.finish(entry.shard, entry.qid, entry.server, args):
            self.lost_leases += 1
            self._logger.warning("lease_lost", uri=curi.uri, queue=entry.qid)

    # ------------------------------------------------------------- reports
    def is_empty(self) -> bool:
        """Nothing queued crawl-wide and nothing being finished here (see the module doc)."""
        with self._lock:
            if self._finishing or self._in_flight or self._local or self._local_out:
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


def _check_host(canonical: str, uri: str) -> None:
    colon = canonical.find(":")
    scheme = canonical[:colon] if colon > 0 else ""
    if not scheme:
        raise ValueError(f"no scheme in {uri[:200]!r}")
    if scheme in _NEEDS_HOST:
        rest = canonical[colon + 1 :]
        host = rest[2:] if rest.startswith("//") else rest
        if not host or host[0] in "/?#":
            raise ValueError(f"no host in {uri[:200]!r}")
