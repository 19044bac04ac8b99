"""RedisLeases: a worker's leases on the shared frontier's queues — read, claim, finish, renew.

The traffic of :class:`~crawler.frontier.redis.redis_exchange.RedisExchange` and
:class:`~crawler.frontier.redis.redis_lease_keeper.LeaseKeeper` over a connected
:class:`~crawler.frontier.redis.redis_store.RedisQueueStore` (which holds the connection, the
keys and the scripts):

* :meth:`RedisLeases.candidates` (DUE): the due queues of every shard, in the policy's order
  (lower precedence first, then earlier due), and the inactive queues first in line across
  every shard (:func:`~crawler.frontier.policy.eligible_order.eligible_score` order): the
  worker decides which to activate and its CLAIMs activate them;
* :meth:`RedisLeases.exchange`: FINISHes (the worker's
  :class:`~crawler.frontier.policy.finish_policy.FinishPolicy` outcome as arguments), CLAIMs
  (server cap and lease, or the guard's rotation) and a DUE read, one round trip per node;
* :meth:`RedisLeases.renew` and :meth:`RedisLeases.reap`: keep this worker's leases, hand back
  expired ones.

Layout and scripts: :mod:`crawler.frontier.redis.redis_scripts`. Thread-safety: thread-safe
(no state of its own; redis-py pools connections).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from crawler.frontier.policy.eligible_order import eligible_score, score_precedence
from crawler.frontier.redis import redis_conn

if TYPE_CHECKING:
    from crawler.frontier.redis.redis_store import RedisQueueStore

Call = tuple[Any, list[str], list[Any]]


class DueQueue(NamedTuple):
    """A queue DUE found due (or inactive, waiting its turn): where, its precedence, due ms (for
    an inactive one, ms since it waits), politeness delay ms (0: its wait was no politeness
    wait), and whether it is inactive (its CLAIM activates it)."""

    shard: int
    qid: str
    precedence: int
    due_ms: int
    delay_ms: int
    inactive: bool = False


class DueRead(NamedTuple):
    """DUE's answer: the due queues, ms until the next is due (-1: none waits), the active
    queues crawl-wide (ready, snoozed or leased), Redis's time and the shared cap."""

    queues: list[DueQueue]
    wait_ms: int
    inactive: list[DueQueue]
    """The first inactive queues across every shard, first in line first."""
    active: int
    now_ms: int
    cap: int
    """The lateness guards' cap on active queues shared by the workers (-1: none)."""


class Lease(NamedTuple):
    """A URI leased to this worker: its stored member, its queue's due ms and politeness delay
    ms (for the lateness guard) and Redis's time at the lease."""

    member: bytes
    due_ms: int
    delay_ms: int
    now_ms: int


CLAIM_DUE, CLAIM_OR_ROTATE, CLAIM_INACTIVE = 0, 1, 2
"""How a CLAIM takes its queue: a due one; a due one unless the lateness guard rotates it out
(it was due after a politeness wait); an inactive one, activated first."""

NO_BUDGETS = (-1, 0, 255, -1)
"""FINISH's budget arguments that charge nothing: no total budget, no session budget, the
highest floor, no success-counts precedence."""


def finish_args(
    member: bytes,
    kind: str,
    *,
    new_member: bytes = b"",
    delay_ms: int = 0,
    backoff_ms: int = 0,
    hold_ms: int = 0,
    max_conn: int = 0,
    interval_ms: int = 0,
    pace: tuple[int, int, int] = (-1, -1, -1),
    cost: int = 0,
    budgets: tuple[int, int, int, int] = NO_BUDGETS,
    polite_ms: int = 0,
) -> list[Any]:
    """FINISH's arguments after the queue id (``redis_scripts.FINISH``): ``kind`` is ``r`` (a
    retry: ``new_member`` replaces ``member`` at the same score) or the final disposition;
    ``budgets`` are total budget, session budget, precedence floor and success-counts base; the
    reclaim flag starts 0 (the exchange sets it)."""
    score = int.from_bytes(new_member[:8], "big") >> 48 if new_member else 0
    return [
        member,
        kind,
        new_member,
        score,
        delay_ms,
        backoff_ms,
        hold_ms,
        max_conn,
        0,
        interval_ms,
        *pace,
        cost,
        *budgets,
        polite_ms,
    ]


def _lease(row: list[Any]) -> Lease | None:
    if int(row[0]) != 1 or len(row) < 5:
        return None
    return Lease(bytes(row[1]), int(row[2]), int(row[3]), int(row[4]))


class RedisLeases:
    """The lease traffic of one worker over ``store`` (see the module docstring)."""

    def __init__(self, store: RedisQueueStore) -> None:
        self._store = store

    def candidates(
        self, per_shard: int, hungry_ms: int = 0, held: int = 0, inactive: int = 0, cap: int = -2
    ) -> DueRead:
        """Due queues of every shard (up to ``per_shard`` each, in the policy's order), in one
        round trip; with ``inactive``, the first that many inactive queues across the shards
        (first in line first: what a CLAIM with ``how`` 2 activates), and the shared cap on
        active queues, the sum of the workers' lateness-guard capacities (``cap`` sends this
        worker's, -1: none yet, -2: keep the last one sent; one not sent again within the lease
        time no longer counts). With ``hungry_ms``, shards with nothing due nor inactive record
        this worker as hungry for that long, holding ``held``."""
        st = self._store
        calls = self._due_calls(per_shard, hungry_ms, held, inactive, cap)
        rows = st.call("candidates", lambda: redis_conn.run_calls(st.client, calls))
        return self._parse_due(rows)

    def _due_calls(
        self, per_shard: int, hungry_ms: int, held: int, inactive: int, cap: int
    ) -> list[Call]:
        st = self._store
        script = st.script("DUE")
        mode = st.precedence_args[2]
        out: list[Call] = []
        for group in st.groups(range(st.shards)):
            keys = [k for s in group for k in st.due_keys(s)] + st.bound_keys()
            args = [per_shard, st.worker, hungry_ms, held, mode, inactive, cap, st.lease_ms]
            out.append((script, keys, args))
        return out

    def _parse_due(self, rows: list[Any]) -> DueRead:
        st = self._store
        due: list[DueQueue] = []
        heads: list[tuple[int, str, int]] = []
        wait_ms = -1
        active = 0
        now_ms = 0
        cap = -1
        for group, row in zip(st.groups(range(st.shards)), rows, strict=True):
            now_ms = int(row[0])
            active += int(row[1])
            cap = int(row[2])
            named = row[3]
            for j in range(0, len(named), 3):
                qid = named[j + 1].decode("utf-8", "surrogateescape")
                heads.append((int(named[j + 2]), qid, group[int(named[j]) - 1]))
            for shard, per in zip(group, row[4:], strict=True):
                next_ms = int(per[0])
                if next_ms >= 0 and (wait_ms < 0 or next_ms - now_ms < wait_ms):
                    wait_ms = max(0, next_ms - now_ms)
                for j in range(1, len(per), 4):
                    qid = per[j].decode("utf-8", "surrogateescape")
                    due.append(
                        DueQueue(shard, qid, int(per[j + 1]), int(per[j + 2]), int(per[j + 3]))
                    )
        # One line across every shard (and node): lowest score first, the queue id breaking ties.
        heads.sort()
        inactive = []
        for score, qid, shard in heads:
            precedence = score_precedence(score)
            since_ms = score - eligible_score(precedence, 0)
            inactive.append(DueQueue(shard, qid, precedence, since_ms, 0, True))
        return DueRead(due, wait_ms, inactive, active, now_ms, cap)

    def _queue_calls(
        self, name: str, items: list[tuple[int, str, str, list[Any]]], *extra_head: Any
    ) -> tuple[list[Call], list[list[int]]]:
        """Calls of the per-queue script ``name`` for ``(shard, qid, server, args)`` items:
        one per group of shards, with the item indexes of each. Each call's arguments start
        with the worker, the lease time and ``extra_head``. Keys per queue: the 8 of
        :meth:`RedisQueueStore.queue_keys`, then the shard's spent hash and, for FINISH, its
        retired and ineligible sets, then (both) its inactive set, paced and held servers."""
        st = self._store
        script = st.script(name)
        by_shard: dict[int, list[int]] = {}
        for i, item in enumerate(items):
            by_shard.setdefault(item[0], []).append(i)
        calls: list[Call] = []
        index: list[list[int]] = []
        for group in st.groups(by_shard):
            keys: list[str] = []
            args: list[Any] = [st.worker, st.lease_ms, *extra_head]
            idx: list[int] = []
            for shard in group:
                t = st.tag(shard)
                extra_keys = (
                    (f"{t}b", f"{t}x", f"{t}i", f"{t}n", f"{t}g", f"{t}k")
                    if name == "FINISH"
                    else (f"{t}b", f"{t}n", f"{t}g", f"{t}k")
                )
                for i in by_shard[shard]:
                    _, qid, server, extra = items[i]
                    keys += st.queue_keys(shard, qid, server)
                    keys += extra_keys
                    args.append(qid)
                    args += extra
                    idx.append(i)
            calls.append((script, keys + st.bound_keys(), args))
            index.append(idx)
        return calls, index

    def claim_many(
        self, items: list[tuple[int, str, str]], max_conn: int, interval_ms: int
    ) -> list[Lease | None]:
        """CLAIM each ``(shard, qid, server)`` in one round trip; the leases (or None)."""
        claims = [(shard, qid, server, CLAIM_DUE) for shard, qid, server in items]
        return self.exchange([], claims, max_conn, interval_ms, 0)[1]

    def finish_many(self, items: list[tuple[int, str, str, list[Any]]]) -> list[bool]:
        """FINISH each ``(shard, qid, server, args after qid)`` in one round trip; False where
        this worker no longer held the lease."""
        return [state > 0 for state, _ in self.exchange(items, [], 0, 0, 0)[0]]

    def exchange(
        self,
        finishes: list[tuple[int, str, str, list[Any]]],
        claims: list[tuple[int, str, str, int]],
        max_conn: int,
        interval_ms: int,
        due_per_shard: int,
        hungry_ms: int = 0,
        held: int = 0,
        inactive: int = 0,
        cap: int = -2,
    ) -> tuple[list[tuple[int, Lease | None]], list[Lease | None], DueRead | None]:
        """One round trip (per node) of a worker's frontier traffic, in this order: FINISH each
        of ``finishes`` (``(shard, qid, server, FINISH args after qid)``), CLAIM each of
        ``claims`` (``(shard, qid, server, how)``: :data:`CLAIM_DUE`, :data:`CLAIM_OR_ROTATE` (the
        lateness guard sends a queue due after a politeness wait back to the inactive set
        instead) or :data:`CLAIM_INACTIVE` (activate it first)), then read the due queues if
        ``due_per_shard`` (:meth:`candidates` with ``hungry_ms``, ``inactive`` and ``cap``).
        ``held``: how many URIs this worker holds besides those finished here (a FINISH leaves
        its queue to a hungry worker holding two or more fewer instead of leasing the next
        URI).

        Returns per finish ``(state, next lease or None)`` (state 0: the lease was lost, 1:
        finished, 2: finished, the queue left to a hungry worker, 3: finished and retired), per
        claim the lease or None, and :meth:`candidates`' answer (or None).
        """
        st = self._store
        fcalls, findex = self._queue_calls("FINISH", finishes, held, *st.pace_args)
        citems = [
            (
                shard,
                qid,
                server,
                [max_conn if server else 0, interval_ms if server else 0, how],
            )
            for shard, qid, server, how in claims
        ]
        ccalls, cindex = self._queue_calls("CLAIM", citems)
        dcalls = (
            self._due_calls(due_per_shard, hungry_ms, held, inactive, cap) if due_per_shard else []
        )
        calls = fcalls + ccalls + dcalls
        rows = st.call("exchange", lambda: redis_conn.run_calls(st.client, calls))
        done: list[tuple[int, Lease | None]] = [(0, None)] * len(finishes)
        for idx, results in zip(findex, rows[: len(fcalls)], strict=True):
            for i, r in zip(idx, results, strict=True):
                done[i] = (int(r[0]), _lease(r))
        got: list[Lease | None] = [None] * len(claims)
        crows = rows[len(fcalls) : len(fcalls) + len(ccalls)]
        for idx, results in zip(cindex, crows, strict=True):
            for i, r in zip(idx, results, strict=True):
                got[i] = _lease(r)
        due = self._parse_due(rows[len(fcalls) + len(ccalls) :]) if dcalls else None
        return done, got, due

    def renew(self, held: dict[int, list[str]]) -> int:
        """Extend this worker's leases on ``{shard: [qid...]}``; returns how many it still holds."""
        st = self._store
        script = st.script("RENEW")
        calls: list[tuple[list[str], list[Any]]] = [
            ([f"{st.tag(s)}l", f"{st.tag(s)}c"], [st.worker, st.lease_ms, *qids])
            for s, qids in held.items()
            if qids
        ]
        results = st.call("renew_leases", lambda: redis_conn.run_script(st.client, script, calls))
        return sum(int(r) for r in results)

    def reap(self, max_conn: int, per_shard: int = 16) -> int:
        """Hand back the queues of expired leases (any worker's); returns how many."""
        st = self._store
        client = st.client

        def expired() -> list[tuple[int, str]]:
            pipe = client.pipeline(transaction=False)
            for shard in range(st.shards):
                pipe.zrange(f"{st.tag(shard)}l", 0, per_shard - 1, withscores=True)
            rows = pipe.execute()
            secs, micros = client.time()
            now_ms = secs * 1000 + micros // 1000
            return [
                (shard, qid.decode("utf-8", "surrogateescape"))
                for shard, row in enumerate(rows)
                for qid, score in row
                if score <= now_ms
            ]

        script = st.script("REAP")
        calls: list[tuple[list[str], list[Any]]] = []
        for shard, qid in st.call("reap_scan", expired):
            server = qid.rpartition("\t")[2]
            t = st.tag(shard)
            keys = [*st.queue_keys(shard, qid, server), f"{t}g", f"{t}k", *st.bound_keys()]
            calls.append((keys, [qid, max_conn]))
        results = st.call("reap", lambda: redis_conn.run_script(st.client, script, calls))
        return sum(int(r) for r in results)
