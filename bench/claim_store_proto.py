"""Bench-only prototype: what a claim + finish round trip costs on one machine through Redis
(TCP loopback, unix socket) and through an embedded store shared by processes (SQLite in WAL
mode, LMDB), with 1 and 2 processes contending. Not shipped: it answers whether an embedded store
could replace the Redis round trip of ``--workers N`` on one machine.

The model is the frontier's claim cycle, reduced to its shared-state core:

- ``ready``: queues ordered by the time they are due; ``items``: each queue's URIs in order;
  ``leases``: queue -> (owner, expiry).
- claim(owner): atomically take the first due queue out of ``ready``, lease it to ``owner`` and
  read its head item (the item stays until finish, so a crash loses nothing).
- finish(owner, queue): only the lease's owner may; the head item is deleted, the lease
  dropped and the queue made ready again if it has items left.
- reap(): leases past their expiry go back to ``ready`` (a process that died holding one).

Each store does one claim and one finish as one atomic unit each (a Lua script; a ``BEGIN
IMMEDIATE`` transaction; an LMDB write transaction). Durability is matched: Redis without AOF,
SQLite ``synchronous=NORMAL`` (WAL: no fsync per commit), LMDB ``sync=False`` (committed pages in
the OS cache): all survive a crash of a process, none an OS crash between fsyncs.

Reported per store and process count: claim+finish pairs/s (wall time of the contention), CPU
per pair in the clients and in redis-server. ``--crash`` runs the crash check: two processes, one
killed with SIGKILL in the middle of its loop (most likely inside a write transaction); the
survivor must finish every item (reaping the dead one's leases) and leave every table empty.

Run with the bench virtualenv (lmdb is not a crawler dependency):
``.bench-venv/bin/python bench/claim_store_proto.py [--queues 1000] [--items 20] [--crash N]``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import shutil
import signal
import socket
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Protocol

LEASE_MS = 300


def now_ms() -> int:
    return int(time.time() * 1000)


class ClaimStore(Protocol):
    def claim(self, owner: str) -> tuple[int, str] | None: ...
    def finish(self, owner: str, queue: int) -> bool: ...
    def reap(self) -> int: ...
    def remaining(self) -> tuple[int, int, int]: ...


# ------------------------------------------------------------------------------ Redis
CLAIM_LUA = """
local q = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1)[1]
if not q then return false end
redis.call('ZREM', KEYS[1], q)
redis.call('HSET', KEYS[2], q, ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[1] + ARGV[2], q)
return {q, redis.call('LINDEX', 'i:' .. q, 0)}
"""
FINISH_LUA = """
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('LPOP', 'i:' .. ARGV[1])
if redis.call('LLEN', 'i:' .. ARGV[1]) > 0 then redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1]) end
return 1
"""
REAP_LUA = """
local dead = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[1])
for _, q in ipairs(dead) do
  redis.call('HDEL', KEYS[2], q); redis.call('ZREM', KEYS[3], q)
  redis.call('ZADD', KEYS[1], ARGV[1], q)
end
return #dead
"""
RKEYS = ("ready", "leases", "expiry")


class RedisStore:
    def __init__(self, target: str) -> None:
        import redis

        if target.startswith("/"):
            self.r = redis.Redis(unix_socket_path=target)
        else:
            self.r = redis.Redis(port=int(target))
        self.claim_s = self.r.register_script(CLAIM_LUA)
        self.finish_s = self.r.register_script(FINISH_LUA)
        self.reap_s = self.r.register_script(REAP_LUA)

    def fill(self, queues: int, items: int) -> None:
        pipe = self.r.pipeline(transaction=False)
        for q in range(queues):
            pipe.rpush(f"i:{q}", *[f"http://h{q}.example/p{i}" for i in range(items)])
            pipe.zadd("ready", {str(q): 0})
        pipe.execute()

    def claim(self, owner: str) -> tuple[int, str] | None:
        got = self.claim_s(keys=RKEYS, args=[now_ms(), LEASE_MS, owner])
        return (int(got[0]), got[1].decode()) if got else None

    def finish(self, owner: str, queue: int) -> bool:
        return bool(self.finish_s(keys=RKEYS, args=[queue, owner, now_ms()]))

    def reap(self) -> int:
        return int(self.reap_s(keys=RKEYS, args=[now_ms()]))

    def remaining(self) -> tuple[int, int, int]:
        items = sum(1 for _ in self.r.scan_iter(match="i:*"))
        return int(self.r.zcard("ready")), items, int(self.r.hlen("leases"))


# ------------------------------------------------------------------------------ SQLite WAL
class SqliteStore:
    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path, isolation_level=None, timeout=30)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")

    def fill(self, queues: int, items: int) -> None:
        d = self.db
        d.execute("CREATE TABLE ready(q INTEGER PRIMARY KEY, due INTEGER)")
        d.execute("CREATE INDEX ready_due ON ready(due)")
        d.execute("CREATE TABLE items(q INTEGER, seq INTEGER, url TEXT, PRIMARY KEY(q, seq))")
        d.execute("CREATE TABLE leases(q INTEGER PRIMARY KEY, owner TEXT, expiry INTEGER)")
        d.execute("CREATE INDEX leases_expiry ON leases(expiry)")
        d.execute("BEGIN")
        d.executemany("INSERT INTO ready VALUES(?, 0)", [(q,) for q in range(queues)])
        d.executemany(
            "INSERT INTO items VALUES(?, ?, ?)",
            [(q, i, f"http://h{q}.example/p{i}") for q in range(queues) for i in range(items)],
        )
        d.execute("COMMIT")

    def claim(self, owner: str) -> tuple[int, str] | None:
        d = self.db
        t = now_ms()
        d.execute("BEGIN IMMEDIATE")
        try:
            row = d.execute(
                "SELECT q FROM ready WHERE due <= ? ORDER BY due LIMIT 1", (t,)
            ).fetchone()
            if row is None:
                return None
            q = row[0]
            d.execute("DELETE FROM ready WHERE q = ?", (q,))
            d.execute("INSERT INTO leases VALUES(?, ?, ?)", (q, owner, t + LEASE_MS))
            item = d.execute(
                "SELECT url FROM items WHERE q = ? ORDER BY seq LIMIT 1", (q,)
            ).fetchone()
            return q, item[0]
        finally:
            d.execute("COMMIT")

    def finish(self, owner: str, queue: int) -> bool:
        d = self.db
        d.execute("BEGIN IMMEDIATE")
        try:
            gone = d.execute(
                "DELETE FROM leases WHERE q = ? AND owner = ?", (queue, owner)
            ).rowcount
            if gone != 1:
                return False
            d.execute(
                "DELETE FROM items WHERE q = ? AND seq = "
                "(SELECT seq FROM items WHERE q = ? ORDER BY seq LIMIT 1)",
                (queue, queue),
            )
            if d.execute("SELECT 1 FROM items WHERE q = ? LIMIT 1", (queue,)).fetchone():
                d.execute("INSERT INTO ready VALUES(?, ?)", (queue, now_ms()))
            return True
        finally:
            d.execute("COMMIT")

    def reap(self) -> int:
        d = self.db
        t = now_ms()
        d.execute("BEGIN IMMEDIATE")
        try:
            dead = [r[0] for r in d.execute("SELECT q FROM leases WHERE expiry <= ?", (t,))]
            for q in dead:
                d.execute("DELETE FROM leases WHERE q = ?", (q,))
                d.execute("INSERT INTO ready VALUES(?, ?)", (q, t))
            return len(dead)
        finally:
            d.execute("COMMIT")

    def remaining(self) -> tuple[int, int, int]:
        d = self.db
        return tuple(  # type: ignore[return-value]
            d.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            for t in ("ready", "items", "leases")
        )


# ------------------------------------------------------------------------------ LMDB
Q = struct.Struct(">I")
DUE = struct.Struct(">QI")
ITEM = struct.Struct(">II")
LEASE = struct.Struct(">Q")


class LmdbStore:
    def __init__(self, path: str) -> None:
        import lmdb

        self.env = lmdb.open(
            path, max_dbs=4, map_size=1 << 30, sync=False, metasync=False, subdir=True
        )
        self.ready = self.env.open_db(b"ready")  # due(8) + q(4) -> b""
        self.rdue = self.env.open_db(b"rdue")  # q -> its ready key
        self.items = self.env.open_db(b"items")  # q(4) + seq(4) -> url
        self.leases = self.env.open_db(b"leases")  # q -> expiry(8) + owner

    def fill(self, queues: int, items: int) -> None:
        with self.env.begin(write=True) as txn:
            for q in range(queues):
                key = DUE.pack(0, q)
                txn.put(key, b"", db=self.ready)
                txn.put(Q.pack(q), key, db=self.rdue)
                for i in range(items):
                    txn.put(ITEM.pack(q, i), f"http://h{q}.example/p{i}".encode(), db=self.items)

    def claim(self, owner: str) -> tuple[int, str] | None:
        t = now_ms()
        with self.env.begin(write=True) as txn:
            cur = txn.cursor(self.ready)
            if not cur.first():
                return None
            due, q = DUE.unpack(cur.key())
            if due > t:
                return None
            cur.delete()
            qk = Q.pack(q)
            txn.delete(qk, db=self.rdue)
            txn.put(qk, LEASE.pack(t + LEASE_MS) + owner.encode(), db=self.leases)
            icur = txn.cursor(self.items)
            icur.set_range(qk)
            return q, bytes(icur.value()).decode()

    def finish(self, owner: str, queue: int) -> bool:
        qk = Q.pack(queue)
        with self.env.begin(write=True) as txn:
            lease = txn.get(qk, db=self.leases)
            if lease is None or bytes(lease[8:]) != owner.encode():
                return False
            txn.delete(qk, db=self.leases)
            icur = txn.cursor(self.items)
            icur.set_range(qk)
            icur.delete()  # the head item; the cursor moves to the next
            if icur.key()[:4] == qk:
                key = DUE.pack(now_ms(), queue)
                txn.put(key, b"", db=self.ready)
                txn.put(qk, key, db=self.rdue)
            return True

    def reap(self) -> int:
        t = now_ms()
        n = 0
        with self.env.begin(write=True) as txn:
            cur = txn.cursor(self.leases)
            dead = [bytes(k) for k, v in cur if LEASE.unpack(v[:8])[0] <= t]
            for qk in dead:
                txn.delete(qk, db=self.leases)
                key = DUE.pack(t, Q.unpack(qk)[0])
                txn.put(key, b"", db=self.ready)
                txn.put(qk, key, db=self.rdue)
                n += 1
        return n

    def remaining(self) -> tuple[int, int, int]:
        with self.env.begin() as txn:
            return tuple(  # type: ignore[return-value]
                txn.stat(db)["entries"] for db in (self.ready, self.items, self.leases)
            )


# ------------------------------------------------------------------------------ runs
def open_store(kind: str, target: str) -> Any:
    if kind.startswith("redis"):
        return RedisStore(target)
    return SqliteStore(target) if kind == "sqlite" else LmdbStore(target)


def child(kind: str, target: str, owner: str, start: Any, out: Any) -> None:
    store = open_store(kind, target)
    start.wait()
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    pairs = 0
    while True:
        got = store.claim(owner)
        if got is None:
            _ready, items, leases = store.remaining()
            if items == 0:
                break
            if leases:  # someone holds a queue: it comes back, or its lease expires
                store.reap()
            time.sleep(0.001)
            continue
        if store.finish(owner, got[0]):
            pairs += 1
    elapsed = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    out.put({"owner": owner, "pairs": pairs, "seconds": elapsed, "cpu_s": cpu})


def redis_server(tmp: Path) -> tuple[subprocess.Popen[bytes], int, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sock = str(tmp / "redis.sock")
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--unixsocket", sock,
         "--save", "", "--appendonly", "no", "--dir", str(tmp)],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    for _ in range(100):
        if os.path.exists(sock):
            break
        time.sleep(0.05)
    return proc, port, sock


def redis_cpu_s(target: str) -> float:
    store = RedisStore(target)
    info = store.r.info("cpu")
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


def run(
    kind: str, procs: int, queues: int, items: int, tmp: Path, crash_after_s: float = 0.0
) -> dict[str, Any]:
    crash = crash_after_s > 0
    work = Path(tempfile.mkdtemp(dir=tmp, prefix=f"{kind}-"))
    server = None
    if kind.startswith("redis"):
        server, port, sock = redis_server(work)
        target = sock if kind == "redis-unix" else str(port)
    else:
        target = str(work / ("db.sqlite" if kind == "sqlite" else "lmdb"))
    open_store(kind, target).fill(queues, items)
    cpu0 = redis_cpu_s(target) if server else 0.0
    ctx = mp.get_context("spawn")
    start, out = ctx.Event(), ctx.Queue()
    children = [
        ctx.Process(target=child, args=(kind, target, f"p{i}", start, out)) for i in range(procs)
    ]
    for c in children:
        c.start()
    time.sleep(0.5)  # every child connected
    load = os.getloadavg()[0]
    start.set()
    if crash:
        time.sleep(crash_after_s)
        os.kill(children[0].pid, signal.SIGKILL)  # type: ignore[arg-type]
    results = [out.get(timeout=600) for _ in range(procs - (1 if crash else 0))]
    for c in children:
        c.join(30)
    row: dict[str, Any] = {"store": kind, "processes": procs, "load_before": round(load, 2)}
    pairs = sum(r["pairs"] for r in results)
    wall = max(r["seconds"] for r in results)
    client_cpu = sum(r["cpu_s"] for r in results)
    server_cpu = redis_cpu_s(target) - cpu0 if server else 0.0
    store = open_store(kind, target)
    row["remaining_ready_items_leases"] = store.remaining()
    if crash:
        row["killed_after_s"] = crash_after_s
        row["survivor_pairs"] = pairs
        row["total_items"] = queues * items
        row["consistent"] = row["remaining_ready_items_leases"] == (0, 0, 0)
    else:
        row |= {
            "pairs": pairs,
            "pairs_per_s": round(pairs / wall),
            "client_cpu_us_per_pair": round(1e6 * client_cpu / pairs, 1),
            "server_cpu_us_per_pair": round(1e6 * server_cpu / pairs, 1),
            "all_cpu_us_per_pair": round(1e6 * (client_cpu + server_cpu) / pairs, 1),
        }
    if server is not None:
        server.terminate()
        server.wait(10)
    shutil.rmtree(work, ignore_errors=True)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queues", type=int, default=1000)
    parser.add_argument("--items", type=int, default=20)
    parser.add_argument("--stores", default="redis-tcp,redis-unix,sqlite,lmdb")
    parser.add_argument(
        "--crash", type=int, default=0, metavar="N", help="the crash check only, N kills a store"
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="claim-proto-") as tmp_s:
        tmp = Path(tmp_s)
        for kind in args.stores.split(","):
            if args.crash:
                for i in range(args.crash):
                    row = run(kind, 2, args.queues, args.items, tmp, 0.05 + 0.37 * i % 1.0)
                    print(json.dumps(row), flush=True)
                    rows.append(row)
                continue
            for procs in (1, 2):
                row = run(kind, procs, args.queues, args.items, tmp)
                print(json.dumps(row), flush=True)
                rows.append(row)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
