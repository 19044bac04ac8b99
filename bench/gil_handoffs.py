"""What a short call that gives up the interpreter lock costs when many threads share it.

A page's work in the crawl is interpreted Python broken by calls that release the GIL: LevelDB
gets and writes (plyvel releases it for each), socket and TLS reads and writes, lock waits.
Alone such a call costs a few µs; with other threads waiting for the GIL, each release hands
it to one of them, and the caller waits its turn to take it back: two thread switches.

Each of ``--threads`` threads takes "pages" from a shared counter; a page is ``--spins`` turns
of a plain Python loop (2 ms unless given) cut into ``--gets + 1`` pieces by ``--gets`` plyvel gets
of a key present in a small LevelDB (answered from its memtable), then a ``time.sleep`` of
``--io-ms`` (the fetch's wait: the thread gives up the GIL and is not runnable). Prints the
process CPU-µs per page (``time.process_time``) and thread switches per page (``getrusage``)
for each combination of threads, gets and switch interval given. Asserts nothing::

    .venv/bin/python bench/gil_handoffs.py [--threads 1,30,300] [--gets 0,20,80]
        [--switch-ms 5,20] [--pages 3000]
"""

from __future__ import annotations

import argparse
import itertools
import resource
import sys
import tempfile
import threading
import time

import plyvel
from busy_work import calibrate, spin  # bench/busy_work.py, beside this file


def run(
    db: plyvel.DB, threads: int, pages: int, spins: int, gets: int, io_s: float
) -> tuple[float, float]:
    """CPU-µs and thread switches per page."""
    counter = itertools.count()
    piece = spins // (gets + 1)
    get = db.get

    def toe() -> None:
        while next(counter) < pages:
            for _ in range(gets):
                spin(piece)
                get(b"k")
            spin(piece)
            time.sleep(io_s)

    workers = [threading.Thread(target=toe) for _ in range(threads)]
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    cpu0 = time.process_time()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    cpu = time.process_time() - cpu0
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    switches = (ru1.ru_nvcsw - ru0.ru_nvcsw) + (ru1.ru_nivcsw - ru0.ru_nivcsw)
    return cpu * 1e6 / pages, switches / pages


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,30,300")
    ap.add_argument("--gets", default="0,20,80")
    ap.add_argument("--switch-ms", default="5,20")
    ap.add_argument("--pages", type=int, default=3000)
    ap.add_argument(
        "--spins", type=int, default=0, help="loop turns per page (default: 2 ms, calibrated)"
    )
    ap.add_argument("--io-ms", type=float, default=0.5)
    args = ap.parse_args()
    spins = args.spins or calibrate(2000)
    with tempfile.TemporaryDirectory(prefix="gil-handoffs-") as tmp:
        db = plyvel.DB(tmp, create_if_missing=True)
        db.put(b"k", b"v")
        print("| switch interval | threads | gets a page | CPU-µs a page | switches a page |")
        print("|--:|--:|--:|--:|--:|")
        for ms in (float(x) for x in args.switch_ms.split(",")):
            sys.setswitchinterval(ms / 1000)
            for threads in (int(x) for x in args.threads.split(",")):
                for gets in (int(x) for x in args.gets.split(",")):
                    cpu, sw = run(db, threads, args.pages, spins, gets, args.io_ms / 1000)
                    print(f"| {ms:g} ms | {threads} | {gets} | {cpu:,.0f} | {sw:.1f} |")
        db.close()


if __name__ == "__main__":
    main()
