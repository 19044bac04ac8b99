"""RedisQueueStore: the plumbing of the shared frontier — connection, keys, scripts, schedule.

Named in the order as ``frontier.store: {class: crawler.frontier.RedisQueueStore, params: {url:
redis://...}}``. Like the LevelDB and memory stores it keeps state, not policy: the decisions
are :mod:`crawler.frontier.policy`'s, made by each worker's
:class:`~crawler.frontier.redis.redis_frontier.RedisFrontier` (the crawl builder runs one over
this store, not a WorkQueueFrontier). Unlike them it also keeps the queue states the workers
share (ready, inactive, leased, each server's cap and pace), since no one process holds them:
see :mod:`crawler.frontier.store.queue_store` for what every store keeps. This module holds the
connection, the key layout, the registered scripts and the calls that add or take back URIs
(SCHEDULE, UNSCHEDULE), the inline gate's and the reports'; a worker's lease traffic (DUE,
CLAIM, FINISH, RENEW, REAP) is :class:`~crawler.frontier.redis.redis_leases.RedisLeases`
(``store.leases``).

Layout and transitions: :mod:`crawler.frontier.redis.redis_scripts`. ``shards`` frontier shards,
each under its own hash tag, hold whole servers (shard = crc32(server) mod shards), so every script
touches one Cluster slot. ``<ns>meta`` records the shard count (fixed per crawl); ``<ns>ord``
hands out ordinals in blocks. Every call that Redis may fail to answer (restart, failover) is
retried by :func:`~crawler.frontier.redis.redis_conn.retrying` for up to ``outage_timeout_s``.

Thread-safety: thread-safe (redis-py pools connections; no state here changes after open).
Heritrix counterpart: none (Heritrix's frontier is per JVM; its multi-crawler mode hands URIs
between crawlers as "divert" files).
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field

from crawler.frontier.frontier import FrontierStateError
from crawler.frontier.policy.pace_rule import NO_PACE
from crawler.frontier.redis import redis_conn, redis_scripts
from crawler.frontier.redis.redis_leases import RedisLeases
from crawler.frontier.store.queue_store import QueueStoreBase, StoreBatch
from crawler.params import Params

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from crawler.frontier.redis.redis_ride import Ride


LAYOUT_VERSION = "2"
ORDINAL_BLOCK = 4096
_STATE_FIELDS = (
    "now_ms",
    "queued",
    "ops",
    "succeeded",
    "failed",
    "disregarded",
    "reaped",
    "ready",
    "snoozed",
    "in_process",
    "next_due_ms",
    "next_expiry_ms",
    "retired",
    "ineligible",
    "inactive",
)


class RedisQueueStoreParams(Params):
    """Where the shared frontier lives and how leases behave."""

    url: str = Field("redis://127.0.0.1:6379/0", description="Redis URL (server or Cluster node)")
    namespace: str = Field(
        "", description="key prefix of this crawl; set by `crawler run --workers`/`crawler worker`"
    )
    worker_id: str = Field("w1", min_length=1, description="this worker's name in leases")
    shards: int = Field(16, ge=1, le=4096, description="frontier shards (hash tags); fixed")
    lease_s: float = Field(
        60.0, gt=0, description="a leased URI whose worker stops renewing returns after this"
    )
    outage_timeout_s: float = Field(
        600.0, gt=0, description="how long workers wait for an unreachable Redis before failing"
    )
    start_wait_s: float = Field(
        0.0,
        ge=0,
        description="how long opening waits for an unreachable Redis (0: a clear error at once; "
        "a worker that joined a running crawl waits its outage timeout)",
    )


class RedisQueueStore(QueueStoreBase[RedisQueueStoreParams]):
    """Shared frontier state in Redis. Build with params, then :meth:`open`."""

    shared: ClassVar[bool] = True

    def __init__(self, params: RedisQueueStoreParams | None = None) -> None:
        super().__init__(params)
        p = self.params
        self.ns = p.namespace
        self.worker = p.worker_id
        self.shards = p.shards
        self.lease_ms = int(p.lease_s * 1000)
        self.pace_args: tuple[float, ...] = NO_PACE
        """FINISH's pace parameters (``pace_rule.PARAMS``); all 0 = no adaptive pace. The
        frontier sets them from the order (:func:`~crawler.frontier.policy.pace_rule.
        pace_arguments`)."""
        self.precedence_args: list[Any] = [255, 3, 0]
        """SCHEDULE's queue precedence parameters: floor, base, mode (1 ``highest_uri``, 2
        ``success_counts``, 0 the base alone). The frontier sets them from the order."""
        self.client: Any = None
        self.one_node = True
        self._scripts: dict[str, Any] = {}
        self._tags = [f"{{{self.ns}f{n}}}" for n in range(p.shards)]
        self._bound_keys = [f"{self.ns}fbound:r", f"{self.ns}fbound:n", f"{self.ns}fbound:a"]
        self.leases = RedisLeases(self)
        """This worker's lease traffic (:mod:`~crawler.frontier.redis.redis_leases`)."""

    # ------------------------------------------------------------ lifecycle
    def open(self, state_dir: Path) -> None:
        """Connect and check the crawl's layout. ``state_dir`` is unused (state is in Redis).

        Raises :class:`FrontierStateError` if Redis is unreachable or the layout differs.
        """
        if self.client is not None:
            return
        if not self.ns:
            raise FrontierStateError(
                "RedisQueueStore needs a crawl namespace: start the crawl with "
                "`crawler run ORDER --workers N` or join it with `crawler worker ORDER --redis URL`"
            )
        try:
            client = redis_conn.connect(self.params.url, outage_timeout_s=self.params.start_wait_s)
        except redis_conn.RedisUnavailableError as exc:
            raise FrontierStateError(str(exc)) from exc
        meta = f"{self.ns}meta"
        client.hsetnx(meta, "version", LAYOUT_VERSION)
        client.hsetnx(meta, "shards", str(self.shards))
        stored = {k.decode(): v.decode() for k, v in client.hgetall(meta).items()}
        if stored.get("version") != LAYOUT_VERSION or stored.get("shards") != str(self.shards):
            client.close()
            raise FrontierStateError(
                f"the shared frontier {meta} has layout {stored}; this order says version "
                f"{LAYOUT_VERSION} with {self.shards} shards (frontier.store.params.shards)"
            )
        for name in (
            "SCHEDULE",
            "RECORD_SCHEDULE",
            "UNSCHEDULE",
            "DUE",
            "CLAIM",
            "FINISH",
            "REAP",
            "RENEW",
            "SHARD_STATE",
            "QUEUE_LIST",
            "QUEUE_DETAIL",
            "INACTIVE_BY_PRECEDENCE",
            "INLINE_ENTER",
            "INLINE_LEAVE",
        ):
            self._scripts[name] = client.register_script(getattr(redis_scripts, name))
        self.one_node = not redis_conn.is_cluster(client)
        self.client = client

    def close(self) -> None:
        client, self.client = self.client, None
        if client is not None:
            client.close()

    # ------------------------------------------------------------ QueueStore protocol
    # Used when a single WorkQueueFrontier runs over this store (no sharing, state in Redis):
    # every key under one hash tag so a batch is one MULTI/EXEC on one slot.
    def write(self, batch: StoreBatch) -> None:
        """Apply ``batch`` atomically (MULTI/EXEC)."""
        t = f"{{{self.ns}x}}"

        def run() -> None:
            pipe = self.client.pipeline(transaction=True)
            for key, skey in batch.deletes:
                pipe.zrem(f"{t}z:{key}", skey.to_bytes(8, "big"))
                pipe.hdel(f"{t}v:{key}", skey)
            for key, skey, value in batch.puts:
                pipe.zadd(f"{t}z:{key}", {skey.to_bytes(8, "big"): 0})
                pipe.hset(f"{t}v:{key}", str(skey), value)
            for name, meta in batch.meta.items():
                if meta is None:
                    pipe.hdel(f"{t}m", name)
                else:
                    pipe.hset(f"{t}m", name, meta)
            pipe.execute()

        self.call("store_write", run)

    def head(self, queue_key: str) -> tuple[int, bytes] | None:
        """The lowest-sorting pending record of ``queue_key``."""
        t = f"{{{self.ns}x}}"
        first = self.call("store_head", lambda: self.client.zrange(f"{t}z:{queue_key}", 0, 0))
        if not first:
            return None
        skey = int.from_bytes(first[0], "big")
        value = self.call("store_head", lambda: self.client.hget(f"{t}v:{queue_key}", str(skey)))
        return None if value is None else (skey, bytes(value))

    def get_meta(self, name: str) -> bytes | None:
        raw = self.call("store_meta", lambda: self.client.hget(f"{{{self.ns}x}}m", name))
        return None if raw is None else bytes(raw)

    def scan_meta(self, prefix: str) -> Iterator[tuple[str, bytes]]:
        match = (
            prefix.replace("\\", "\\\\").replace("*", "\\*").replace("?", "\\?").replace("[", "\\[")
            + "*"
        )
        found = self.call(
            "store_meta",
            lambda: dict(self.client.hscan_iter(f"{{{self.ns}x}}m", match=match, count=1000)),
        )
        for name in sorted(found):
            yield name.decode("utf-8", "surrogateescape"), bytes(found[name])

    # ------------------------------------------------------------ keys
    def tag(self, shard: int) -> str:
        """The key prefix (with its Cluster hash tag) of ``shard``'s keys."""
        return self._tags[shard]

    def script(self, name: str) -> Any:
        """The registered script ``name`` of :mod:`crawler.frontier.redis.redis_scripts`."""
        return self._scripts[name]

    def shard_of(self, server: str) -> int:
        """The frontier shard holding ``server``'s queues."""
        return zlib.crc32(server.encode("utf-8", "surrogatepass")) % self.shards

    def bound_keys(self) -> list[str]:
        """The node-wide keys of ``redis_scripts._BOUNDS``: the shards' earliest due and first
        inactive scores (lower bounds) and their active queue counts, passed last to the
        scripts that read or change them, so that DUE skips shards with nothing due and counts
        the active queues without reading every shard. On one redis-server only (a Cluster
        script's keys share one slot): empty on a Cluster, where DUE reads each shard."""
        return self._bound_keys if self.one_node else []

    def due_keys(self, shard: int) -> tuple[str, ...]:
        """KEYS of DUE for ``shard``: ready, hungry, lease, spent, inactive, stats."""
        t = self._tags[shard]
        return f"{t}r", f"{t}h", f"{t}l", f"{t}b", f"{t}n", f"{t}s"

    def queue_keys(self, shard: int, qid: str, server: str) -> list[str]:
        """KEYS of CLAIM/FINISH/REAP: ready, lease, cur, stats, queue, server, park, hungry."""
        t = self._tags[shard]
        return [
            f"{t}r",
            f"{t}l",
            f"{t}c",
            f"{t}s",
            f"{t}q:{qid}",
            f"{t}v:{server}",
            f"{t}p:{server}",
            f"{t}h",
        ]

    # ------------------------------------------------------------ calls
    def call(self, what: str, run: Callable[[], Any]) -> Any:
        """``run()``, waiting out a Redis outage (see :func:`redis_conn.retrying`)."""
        return redis_conn.retrying(run, outage_timeout_s=self.params.outage_timeout_s, what=what)

    def reserve_ordinals(self) -> int:
        """The first of ``ORDINAL_BLOCK`` ordinals reserved for this process."""
        end = int(
            self.call(
                "reserve_ordinals", lambda: self.client.incrby(f"{self.ns}ord", ORDINAL_BLOCK)
            )
        )
        return end - ORDINAL_BLOCK + 1

    def groups(self, shards: Iterable[int]) -> list[list[int]]:
        """Shards that one script call may span: all of them on one server, one on a Cluster."""
        ordered = sorted(set(shards))
        if self.one_node:
            return [ordered] if ordered else []
        return [[s] for s in ordered]

    def schedule(self, shard: int, entries: list[tuple[str, int, bytes]]) -> int:
        """Add ``(qid, score, member)`` entries of one shard; returns how many were new."""
        return sum(self.schedule_many({shard: entries})[shard])

    def schedule_many(
        self,
        by_shard: dict[int, list[tuple[str, int, bytes]]],
        ride: Ride | None = None,
        record: tuple[str, list[str], list[Any]] | None = None,
    ) -> dict[int, list[bool]]:
        """Add ``(qid, score, member)`` entries of several shards in one round trip per node;
        per shard, whether each entry was new. ``ride``: plain commands carried first when they
        are for this server (:func:`~crawler.frontier.redis.redis_conn.run_calls`).

        ``record`` (one redis-server only): ``(forced, uniq KEYS, uniq ARGV)`` of the uniq
        filter on this server for the entries taken shard by shard in ascending order
        (:meth:`~crawler.uniq.redis_uniq.RedisUriUniqFilter.record_args`; ``forced`` one
        '0'/'1' per entry). Each entry is then recorded and queued in one step, queued only if
        new to the filter or forced (RECORD_SCHEDULE); the flags say which were queued."""
        script = self._scripts["SCHEDULE" if record is None else "RECORD_SCHEDULE"]
        calls: list[tuple[Any, list[str], list[Any]]] = []
        order: list[list[int]] = []
        groups = self.groups(s for s, entries in by_shard.items() if entries)
        if record is not None and (not self.one_node or len(groups) > 1):
            raise ValueError("recording while scheduling needs one redis-server")
        for group in groups:
            keys: list[str] = []
            args: list[Any] = [len(group), *self.precedence_args]
            if record is not None:
                args.append(sum(len(by_shard[shard]) for shard in group))
            queue_keys: list[str] = []
            for g, shard in enumerate(group, 1):
                t = self._tags[shard]
                keys += (f"{t}r", f"{t}c", f"{t}s", f"{t}x", f"{t}b", f"{t}i", f"{t}n")
                for qid, score, member in by_shard[shard]:
                    queue_keys.append(f"{t}q:{qid}")
                    args += (g, qid, score, member)
            keys = keys + queue_keys + self.bound_keys()
            if record is not None:
                forced, uniq_keys, uniq_args = record
                keys += uniq_keys
                args += (forced, *uniq_args)
            calls.append((script, keys, args))
            order.append(group)
        results = self.call("schedule", lambda: redis_conn.run_calls(self.client, calls, ride))
        out: dict[int, list[bool]] = {}
        for group, flags in zip(order, results, strict=True):
            it = iter(flags)
            for shard in group:
                out[shard] = [int(next(it)) == 1 for _ in by_shard[shard]]
        return out

    def unschedule(self, shard: int, qid: str, member: bytes) -> bool:
        """Take back a member :meth:`schedule` added; False if it was already handed out."""
        return self.unschedule_many([(shard, qid, member)])[0]

    def unschedule_many(self, items: list[tuple[int, str, bytes]]) -> list[bool]:
        """Take back ``(shard, qid, member)`` entries :meth:`schedule_many` added (one round trip
        per node); False where one was already handed out."""
        script = self._scripts["UNSCHEDULE"]
        calls: list[tuple[Any, list[str], list[Any]]] = []
        index: list[list[int]] = []
        by_shard: dict[int, list[int]] = {}
        for i, (shard, _, _) in enumerate(items):
            by_shard.setdefault(shard, []).append(i)
        for group in self.groups(by_shard):
            keys: list[str] = []
            args: list[Any] = []
            idx: list[int] = []
            for shard in group:
                t = self._tags[shard]
                for i in by_shard[shard]:
                    _, qid, member = items[i]
                    keys += (f"{t}r", f"{t}c", f"{t}s", f"{t}q:{qid}", f"{t}x", f"{t}n")
                    args += (qid, member)
                    idx.append(i)
            calls.append((script, keys + self.bound_keys(), args))
            index.append(idx)
        results = self.call("unschedule", lambda: redis_conn.run_calls(self.client, calls))
        out = [False] * len(items)
        for idx, flags in zip(index, results, strict=True):
            for i, flag in zip(idx, flags, strict=True):
                out[i] = int(flag) == 1
        return out

    def _inline_keys(self, server: str) -> list[str]:
        t = self._tags[self.shard_of(server)]
        return [
            f"{t}v:{server}",
            f"{t}o:{server}",
            f"{t}p:{server}",
            f"{t}r",
            f"{t}g",
            f"{t}k",
            *self.bound_keys(),
        ]

    def inline_enter(
        self, server: str, token: str, own: bool, max_conn: int, interval_ms: int, slot_ms: int
    ) -> int:
        """INLINE_ENTER: 0 if a fetch outside the frontier may start on ``server`` now (a slot
        taken as ``token`` for ``slot_ms`` at most, unless ``own``: under the caller's page's
        slot), -1 if no slot is free, else the ms until the server's next start."""
        keys = self._inline_keys(server)
        args = [token, 1 if own else 0, max_conn, interval_ms, slot_ms]
        calls = [(self._scripts["INLINE_ENTER"], keys, args)]
        return int(self.call("inline_enter", lambda: redis_conn.run_calls(self.client, calls))[0])

    def inline_leave(
        self,
        server: str,
        token: str,
        own: bool,
        max_conn: int,
        pace: tuple[int, int, int],
        backoff_ms: int,
        hold_ms: int,
    ) -> bool:
        """INLINE_LEAVE: the fetch admitted as ``token`` is over; its answer (``pace``: kind,
        age, duration as FINISH takes them) paces the server, ``backoff_ms``/``hold_ms`` hold
        it. True if the slot was given back (False: own, or taken back after ``slot_ms``)."""
        keys = self._inline_keys(server)
        args = [token, 1 if own else 0, max_conn, *pace, backoff_ms, hold_ms, *self.pace_args]
        calls = [(self._scripts["INLINE_LEAVE"], keys, args)]
        freed = self.call("inline_leave", lambda: redis_conn.run_calls(self.client, calls))[0]
        return int(freed) == 1

    def paced_servers(self, limit: int) -> list[tuple[str, float]]:
        """``(server, gap s)`` of the servers whose adaptive pace (``g`` in their hash) holds
        them back most, longest gap first: the ``limit`` first of each shard's paced set (``T
        g``, kept by the scripts), one pipelined read, also on a Cluster."""
        client = self.client

        def read() -> list[tuple[str, float]]:
            pipe = client.pipeline(transaction=False)
            for t in self._tags:
                pipe.zrevrange(f"{t}g", 0, limit - 1, withscores=True)
            rows = [
                (bytes(key).decode("utf-8", "replace").split("v:", 1)[1], float(gap) / 1000.0)
                for shard_rows in pipe.execute()
                for key, gap in shard_rows
            ]
            rows.sort(key=lambda r: (-r[1], r[0]))
            return rows[:limit]

        result: list[tuple[str, float]] = self.call("paced_servers", read)
        return result

    def shard_states(self) -> list[dict[str, int]]:
        """Counters and queue counts of every shard (SHARD_STATE's fields by name)."""
        script = self._scripts["SHARD_STATE"]
        groups = self.groups(range(self.shards))
        calls: list[tuple[Any, list[str], list[Any]]] = [
            (script, [k for s in g for k in self._state_keys(s)], []) for g in groups
        ]
        rows = self.call("shard_states", lambda: redis_conn.run_calls(self.client, calls))
        return [
            dict(zip(_STATE_FIELDS, (int(v) for v in row), strict=True))
            for group_rows in rows
            for row in group_rows
        ]

    def _state_keys(self, shard: int) -> tuple[str, ...]:
        t = self._tags[shard]
        return f"{t}r", f"{t}l", f"{t}s", f"{t}x", f"{t}i", f"{t}n"

    def inactive_by_precedence(self) -> dict[int, int]:
        """How many inactive queues (ineligible ones, at or past the floor, included) per
        precedence: counted in Redis (INACTIVE_BY_PRECEDENCE), one call per shard group, without
        reading the queues themselves."""
        script = self._scripts["INACTIVE_BY_PRECEDENCE"]
        calls: list[tuple[Any, list[str], list[Any]]] = [
            (script, [f"{self._tags[s]}{k}" for s in g for k in "in"], [])
            for g in self.groups(range(self.shards))
        ]
        rows = self.call("inactive_by_precedence", lambda: redis_conn.run_calls(self.client, calls))
        counts: dict[int, int] = {}
        for flat in rows:
            for prec, queues in zip(flat[::2], flat[1::2], strict=True):
                counts[int(prec)] = counts.get(int(prec), 0) + int(queues)
        return dict(sorted(counts.items()))
