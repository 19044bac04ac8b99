"""The LevelDB uniq filter's lock under many threads: wait, hold and gets per page's batch.

Each of ``--threads`` threads adds ``--batches`` batches of ``--links`` canonical URIs with
``add_many_announced`` (the call ``FrontierIntake.schedule_many`` makes per page), announcing
through a real :class:`~crawler.frontier.store.recovery.RecoveryLog` over a LevelDB queue
store, as a crawl does. The filter is seeded first with ``--seen`` URIs, more than its
RecentKeys cache holds (2 x ``cache_size``), so a batch's already-seen links that fell out of
the cache cost LevelDB gets, as in a long crawl. A batch holds ``--new`` URIs never seen (a few
shared with other threads' batches: the same new link found on two pages at once), the rest
seen long ago (out of the cache).

Prints the process CPU-µs per batch (all threads, ``time.process_time``), the load average,
and with ``--instrument`` (slower; a timed lock and a counting database in place of the
filter's own) the lock's wait and hold per batch and the LevelDB gets per batch made under the
lock and outside it. Under callgrind, ``--threads 1`` gives instructions per batch::

    .venv/bin/python bench/uniq_lock.py --threads 300 --batches 40 --instrument
    valgrind --tool=callgrind --callgrind-out-file=/tmp/u.out \\
        .venv/bin/python bench/uniq_lock.py --threads 1 --batches 2000 --seen 50000
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from busy_work import calibrate, spin  # bench/busy_work.py, beside this file

from crawler.frontier.store.leveldb_store import LevelDBQueueStore
from crawler.frontier.store.recovery import RecoveryLog
from crawler.frontier.store.write_behind_store import WriteBehindStore
from crawler.uniq.leveldb_uniq import LevelDBUriUniqFilter, LevelDBUriUniqFilterParams


class TimedLock:
    """A lock that sums the time its users waited for it and held it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.owner = 0
        self.wait = 0.0
        self.hold = 0.0
        self.holds = 0
        self._since = 0.0

    def __enter__(self) -> None:
        t = time.perf_counter()
        self._lock.acquire()
        now = time.perf_counter()
        self.wait += now - t
        self._since = now
        self.owner = threading.get_ident()

    def __exit__(self, *exc: object) -> None:
        self.owner = 0
        self.hold += time.perf_counter() - self._since
        self.holds += 1
        self._lock.release()


class CountingDB:
    """The filter's plyvel database, counting gets made with the lock held and without."""

    def __init__(self, db: Any, lock: TimedLock) -> None:
        self._db = db
        self._lock = lock
        self.locked = 0
        self.free = 0

    def get(self, key: bytes) -> Any:
        if self._lock.owner == threading.get_ident():
            self.locked += 1
        else:
            self.free += 1
        return self._db.get(key)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


def seen_uri(i: int) -> str:
    return f"https://h{i % 997}.example/seen/{i}"


def new_uri(i: int) -> str:
    return f"https://h{i % 991}.example/new/{i}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=50)
    ap.add_argument("--batches", type=int, default=40, help="batches per thread")
    ap.add_argument("--links", type=int, default=40, help="links per batch")
    ap.add_argument("--new", type=int, default=8, help="new links per batch")
    ap.add_argument("--seen", type=int, default=600_000, help="URIs seeded before")
    ap.add_argument("--cache", type=int, default=200_000, help="RecentKeys cache_size")
    ap.add_argument(
        "--work-us", type=int, default=0, help="Python CPU per batch besides it (a page's rest)"
    )
    ap.add_argument("--instrument", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="uniq-lock-") as tmp:
        uniq = LevelDBUriUniqFilter(LevelDBUriUniqFilterParams(cache_size=args.cache))
        uniq.open(Path(tmp))
        for start in range(0, args.seen, 5000):
            uniq.add_many(seen_uri(i) for i in range(start, min(start + 5000, args.seen)))
        store = WriteBehindStore(LevelDBQueueStore())
        store.open(Path(tmp) / "store")
        log = RecoveryLog(store, threading.Condition())
        lock = TimedLock()
        counting: CountingDB | None = None
        if args.instrument:
            uniq._lock = lock  # type: ignore[assignment]
            counting = CountingDB(uniq._db, lock)
            uniq._db = counting
        # Seen links long ago: the first half of the seeded URIs (out of the cache).
        old = max(1, min(args.seen // 2, args.seen - 2 * args.cache))
        next_new = iter(range(10**12))
        new_lock = threading.Lock()
        shared: list[str] = []  # recent new links, found again on other pages at once
        reported = [0]
        spins = calibrate(args.work_us)
        start_gate = threading.Barrier(args.threads + 1)

        def work(seed: int) -> None:
            rnd = random.Random(seed)
            batches: list[list[str]] = []
            for _ in range(args.batches):
                with new_lock:
                    fresh = [new_uri(next(next_new)) for _ in range(args.new)]
                batch = fresh + [seen_uri(rnd.randrange(old)) for _ in range(args.links - args.new)]
                batches.append(batch)
            start_gate.wait()
            mine = 0
            for batch in batches:
                spin(spins)
                if shared:
                    batch = batch + shared[-2:]
                added = uniq.add_many_announced(
                    batch, lambda new: log.delete_later(log.announce(new))
                )
                mine += sum(added)
                shared.extend(batch[:2])
                del shared[:-64]
            with new_lock:
                reported[0] += mine

        threads = [threading.Thread(target=work, args=(n,)) for n in range(args.threads)]
        for t in threads:
            t.start()
        count0 = uniq.count()
        start_gate.wait()
        ru0 = resource.getrusage(resource.RUSAGE_SELF)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        for t in threads:
            t.join()
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        ru = resource.getrusage(resource.RUSAGE_SELF)
        switches = ru.ru_nvcsw + ru.ru_nivcsw - ru0.ru_nvcsw - ru0.ru_nivcsw
        n = max(1, args.threads * args.batches)
        assert reported[0] == uniq.count() - count0, (reported[0], uniq.count() - count0)
        line = (
            f"threads={args.threads} batches={n} links/batch={args.links} new/batch={args.new} "
            f"seen={args.seen} cache={args.cache}: CPU-us/batch {cpu / n * 1e6:.0f} "
            f"(work {args.work_us}) wall {wall:.2f}s ctx-switches/batch {switches / n:.1f}"
        )
        if counting is not None:
            line += (
                f" | lock held {lock.holds / n:.2f}x/batch, wait {lock.wait / n * 1e6:.0f} us"
                f", hold {lock.hold / n * 1e6:.0f} us per batch; gets/batch locked "
                f"{counting.locked / n:.2f} free {counting.free / n:.2f}"
            )
        print(line + f" | load {os.getloadavg()[0]:.1f}")
        uniq._db = counting._db if counting is not None else uniq._db
        uniq.close()
        store.close()


if __name__ == "__main__":
    main()
