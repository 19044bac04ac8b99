"""RedisQueueStore: the frontier's queues, leases and server politeness, shared through Redis.

Named in the order as ``frontier.store: {class: crawler.frontier.RedisQueueStore, params: {url:
redis://...}}``. Unlike the LevelDB and memory stores, which persist what one process's
:class:`~crawler.frontier.WorkQueueFrontier` schedules in memory, this store *is* the
scheduler: queue states live in Redis so that any number of worker processes, on any number of
machines, share one politeness clock. The crawl builder runs a
:class:`~crawler.frontier.redis.redis_frontier.RedisFrontier` over it (not a WorkQueueFrontier).

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
from crawler.frontier.queue_store import QueueStoreBase, StoreBatch
from crawler.frontier.redis import redis_conn, redis_scripts
from crawler.params import Params

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator


LAYOUT_VERSION = "1"
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
        self.pace_args: list[Any] = [0] * 6
        """FINISH's pace parameters (``redis_scripts.PACE_FN``); all 0 = no adaptive pace. The
        frontier sets them from the order's ``frontier.pace``."""
        self.precedence_args: list[Any] = [255, 3, 0]
        """SCHEDULE's queue precedence parameters: floor, base, mode (1 ``highest_uri``, 2
        ``success_counts``, 0 the base alone). The frontier sets them from the order."""
        self.client: Any = None
        self.one_node = True
        self._scripts: dict[str, Any] = {}
        self._tags = [f"{{{self.ns}f{n}}}" for n in range(p.shards)]

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
            client = redis_conn.connect(self.params.url)
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
            "UNSCHEDULE",
            "DUE",
            "CLAIM",
            "FINISH",
            "REAP",
            "RENEW",
            "SHARD_STATE",
            "QUEUE_LIST",
            "QUEUE_DETAIL",
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

    def _groups(self, shards: Iterable[int]) -> list[list[int]]:
        """Shards that one script call may span: all of them on one server, one on a Cluster."""
        ordered = sorted(set(shards))
        if self.one_node:
            return [ordered] if ordered else []
        return [[s] for s in ordered]

    def schedule(self, shard: int, entries: list[tuple[str, int, bytes]]) -> int:
        """Add ``(qid, score, member)`` entries of one shard; returns how many were new."""
        return sum(self.schedule_many({shard: entries})[shard])

    def schedule_many(
        self, by_shard: dict[int, list[tuple[str, int, bytes]]]
    ) -> dict[int, list[bool]]:
        """Add ``(qid, score, member)`` entries of several shards in one round trip per node;
        per shard, whether each entry was new."""
        script = self._scripts["SCHEDULE"]
        calls: list[tuple[Any, list[str], list[Any]]] = []
        order: list[list[int]] = []
        for group in self._groups(s for s, entries in by_shard.items() if entries):
            keys: list[str] = []
            args: list[Any] = [len(group), *self.precedence_args]
            queue_keys: list[str] = []
            for g, shard in enumerate(group, 1):
                t = self._tags[shard]
                keys += (f"{t}r", f"{t}c", f"{t}s", f"{t}x", f"{t}b", f"{t}i")
                for qid, score, member in by_shard[shard]:
                    queue_keys.append(f"{t}q:{qid}")
                    args += (g, qid, score, member)
            calls.append((script, keys + queue_keys, args))
            order.append(group)
        results = self.call("schedule", lambda: redis_conn.run_calls(self.client, calls))
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
        for group in self._groups(by_shard):
            keys: list[str] = []
            args: list[Any] = []
            idx: list[int] = []
            for shard in group:
                t = self._tags[shard]
                for i in by_shard[shard]:
                    _, qid, member = items[i]
                    keys += (f"{t}r", f"{t}c", f"{t}s", f"{t}q:{qid}", f"{t}x")
                    args += (qid, member)
                    idx.append(i)
            calls.append((script, keys, args))
            index.append(idx)
        results = self.call("unschedule", lambda: redis_conn.run_calls(self.client, calls))
        out = [False] * len(items)
        for idx, flags in zip(index, results, strict=True):
            for i, flag in zip(idx, flags, strict=True):
                out[i] = int(flag) == 1
        return out

    def candidates(
        self, per_shard: int, hungry_ms: int = 0, held: int = 0
    ) -> tuple[list[tuple[int, str]], int]:
        """Due queues ``(shard, qid)`` of every shard (earliest first, up to ``per_shard`` each)
        and the ms until the next one is due (-1: none is waiting), in one round trip. With
        ``hungry_ms``, shards with nothing due record this worker as hungry for that long,
        holding ``held`` URIs."""
        calls = self._due_calls(per_shard, hungry_ms, held)
        rows = self.call("candidates", lambda: redis_conn.run_calls(self.client, calls))
        return self._parse_due(calls, rows)

    def _due_calls(
        self, per_shard: int, hungry_ms: int, held: int
    ) -> list[tuple[Any, list[str], list[Any]]]:
        script = self._scripts["DUE"]
        return [
            (
                script,
                [k for s in group for k in (f"{self._tags[s]}r", f"{self._tags[s]}h")],
                [per_shard, self.worker, hungry_ms, held],
            )
            for group in self._groups(range(self.shards))
        ]

    def _parse_due(
        self, calls: list[tuple[Any, list[str], list[Any]]], rows: list[Any]
    ) -> tuple[list[tuple[int, str]], int]:
        due: list[tuple[int, str]] = []
        wait_ms = -1
        groups = self._groups(range(self.shards))
        for group, row in zip(groups, rows, strict=True):
            now_ms = int(row[0])
            for shard, per in zip(group, row[1:], strict=True):
                next_ms = int(per[0])
                if next_ms >= 0 and (wait_ms < 0 or next_ms - now_ms < wait_ms):
                    wait_ms = max(0, next_ms - now_ms)
                due.extend((shard, q.decode("utf-8", "surrogateescape")) for q in per[1:])
        return due, wait_ms

    def _queue_calls(
        self, name: str, items: list[tuple[int, str, str, list[Any]]], *extra_head: Any
    ) -> tuple[list[tuple[Any, list[str], list[Any]]], list[list[int]]]:
        """Calls of the per-queue script ``name`` for ``(shard, qid, server, args)`` items:
        one per group of shards, with the item indexes of each. Each call's arguments start
        with the worker, the lease time and ``extra_head``. FINISH also gets each shard's
        spent, retired and ineligible keys after the queue's 8."""
        budget_keys = name == "FINISH"
        script = self._scripts[name]
        by_shard: dict[int, list[int]] = {}
        for i, item in enumerate(items):
            by_shard.setdefault(item[0], []).append(i)
        calls: list[tuple[Any, list[str], list[Any]]] = []
        index: list[list[int]] = []
        for group in self._groups(by_shard):
            keys: list[str] = []
            args: list[Any] = [self.worker, self.lease_ms, *extra_head]
            idx: list[int] = []
            for shard in group:
                for i in by_shard[shard]:
                    _, qid, server, extra = items[i]
                    keys += self.queue_keys(shard, qid, server)
                    if budget_keys:
                        t = self._tags[shard]
                        keys += (f"{t}b", f"{t}x", f"{t}i")
                    args.append(qid)
                    args += extra
                    idx.append(i)
            calls.append((script, keys, args))
            index.append(idx)
        return calls, index

    def claim_many(
        self, items: list[tuple[int, str, str]], max_conn: int, interval_ms: int
    ) -> list[bytes | None]:
        """CLAIM each ``(shard, qid, server)`` in one round trip; the leased heads (or None)."""
        return self.exchange([], items, max_conn, interval_ms, 0)[1]

    def finish_many(self, items: list[tuple[int, str, str, list[Any]]]) -> list[bool]:
        """FINISH each ``(shard, qid, server, args after qid)`` in one round trip; False where
        this worker no longer held the lease."""
        return [state > 0 for state, _ in self.exchange(items, [], 0, 0, 0)[0]]

    def exchange(
        self,
        finishes: list[tuple[int, str, str, list[Any]]],
        claims: list[tuple[int, str, str]],
        max_conn: int,
        interval_ms: int,
        due_per_shard: int,
        hungry_ms: int = 0,
        held: int = 0,
    ) -> tuple[
        list[tuple[int, bytes | None]],
        list[bytes | None],
        tuple[list[tuple[int, str]], int] | None,
    ]:
        """One round trip (per node) of a worker's frontier traffic, in this order: FINISH each
        of ``finishes`` (``(shard, qid, server, FINISH args after qid)``), CLAIM each of
        ``claims`` (``(shard, qid, server)``), then read the due queues if ``due_per_shard``
        (recording this worker as hungry for ``hungry_ms`` where nothing is due). ``held``:
        how many URIs this worker holds besides those finished here (a FINISH leaves its queue
        to a hungry worker holding two or more fewer instead of leasing the next URI).

        Returns per finish ``(state, member leased next or None)`` (state 0: the lease was
        lost, 1: finished, 2: finished, the queue left to a hungry worker), per claim the
        leased member or None, and :meth:`candidates`' answer (or None).
        """
        fcalls, findex = self._queue_calls("FINISH", finishes, held, *self.pace_args)
        citems = [
            (shard, qid, server, [max_conn if server else 0, interval_ms if server else 0])
            for shard, qid, server in claims
        ]
        ccalls, cindex = self._queue_calls("CLAIM", citems)
        dcalls = self._due_calls(due_per_shard, hungry_ms, held) if due_per_shard else []
        calls = fcalls + ccalls + dcalls
        rows = self.call("exchange", lambda: redis_conn.run_calls(self.client, calls))
        done: list[tuple[int, bytes | None]] = [(0, None)] * len(finishes)
        for idx, results in zip(findex, rows[: len(fcalls)], strict=True):
            for i, r in zip(idx, results, strict=True):
                done[i] = (int(r[0]), bytes(r[1]) if len(r) > 1 else None)
        got: list[bytes | None] = [None] * len(claims)
        crows = rows[len(fcalls) : len(fcalls) + len(ccalls)]
        for idx, results in zip(cindex, crows, strict=True):
            for i, r in zip(idx, results, strict=True):
                got[i] = bytes(r[1]) if int(r[0]) == 1 else None
        due = self._parse_due(dcalls, rows[len(fcalls) + len(ccalls) :]) if dcalls else None
        return done, got, due

    def renew(self, held: dict[int, list[str]]) -> int:
        """Extend this worker's leases on ``{shard: [qid...]}``; returns how many it still holds."""
        script = self._scripts["RENEW"]
        calls: list[tuple[list[str], list[Any]]] = [
            ([f"{self._tags[s]}l", f"{self._tags[s]}c"], [self.worker, self.lease_ms, *qids])
            for s, qids in held.items()
            if qids
        ]
        results = self.call(
            "renew_leases", lambda: redis_conn.run_script(self.client, script, calls)
        )
        return sum(int(r) for r in results)

    def reap(self, max_conn: int, per_shard: int = 16) -> int:
        """Hand back the queues of expired leases (any worker's); returns how many."""
        client = self.client

        def expired() -> list[tuple[int, str]]:
            pipe = client.pipeline(transaction=False)
            for t in self._tags:
                pipe.zrange(f"{t}l", 0, per_shard - 1, withscores=True)
            rows = pipe.execute()
            secs, micros = client.time()
            now_ms = secs * 1000 + micros // 1000
            return [
                (shard, qid.decode("utf-8", "surrogateescape"))
                for shard, row in enumerate(rows)
                for qid, score in row
                if score <= now_ms
            ]

        script = self._scripts["REAP"]
        calls: list[tuple[list[str], list[Any]]] = []
        for shard, qid in self.call("reap_scan", expired):
            server = qid.rpartition("\t")[2]
            calls.append((self.queue_keys(shard, qid, server), [qid, max_conn]))
        results = self.call("reap", lambda: redis_conn.run_script(self.client, script, calls))
        return sum(int(r) for r in results)

    def _inline_keys(self, server: str) -> list[str]:
        t = self._tags[self.shard_of(server)]
        return [f"{t}v:{server}", f"{t}o:{server}", f"{t}p:{server}", f"{t}r"]

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
        them back most, longest gap first; [] on a Cluster (a scan would visit every node)."""
        if not self.one_node:
            return []
        client = self.client

        def scan() -> list[tuple[str, float]]:
            keys = [k for t in self._tags for k in client.scan_iter(match=f"{t}v:*", count=1000)]
            if not keys:
                return []
            pipe = client.pipeline(transaction=False)
            for key in keys:
                pipe.hget(key, "g")
            rows = [
                (key.decode("utf-8", "replace").split("v:", 1)[1], float(gap) / 1000.0)
                for key, gap in zip(keys, pipe.execute(), strict=True)
                if gap is not None and float(gap) > 0
            ]
            rows.sort(key=lambda r: (-r[1], r[0]))
            return rows[:limit]

        result: list[tuple[str, float]] = self.call("paced_servers", scan)
        return result

    def shard_states(self) -> list[dict[str, int]]:
        """Counters and queue counts of every shard (SHARD_STATE's fields by name)."""
        script = self._scripts["SHARD_STATE"]
        groups = self._groups(range(self.shards))
        calls: list[tuple[Any, list[str], list[Any]]] = [
            (script, [k for s in g for k in self._state_keys(s)], []) for g in groups
        ]
        rows = self.call("shard_states", lambda: redis_conn.run_calls(self.client, calls))
        return [
            dict(zip(_STATE_FIELDS, (int(v) for v in row), strict=True))
            for group_rows in rows
            for row in group_rows
        ]

    def _state_keys(self, shard: int) -> tuple[str, str, str, str, str]:
        t = self._tags[shard]
        return f"{t}r", f"{t}l", f"{t}s", f"{t}x", f"{t}i"

    def ineligible_by_precedence(self) -> dict[int, int]:
        """How many ineligible queues (precedence at or past the floor) per precedence."""
        keys = [f"{t}i" for t in self._tags]

        def read() -> dict[int, int]:
            pipe = self.client.pipeline(transaction=False)
            for key in keys:
                pipe.zrange(key, 0, -1, withscores=True)
            counts: dict[int, int] = {}
            for rows in pipe.execute():
                for _, score in rows:
                    counts[int(score)] = counts.get(int(score), 0) + 1
            return dict(sorted(counts.items()))

        result: dict[int, int] = self.call("ineligible_by_precedence", read)
        return result
