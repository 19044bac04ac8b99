"""Plain interpreted CPU work for the benchmarks that stand a page's other stages in for it.

:func:`spin` is a loop of ``n`` turns (no calls that release the GIL); :func:`calibrate` says how
many turns take a given CPU time on this machine, measured alone. Two trees compared in
alternating runs should be given the same turn count (calibration moves by a few percent from
one run to the next). Pure functions, thread-safe.
"""

from __future__ import annotations

import time


def spin(n: int) -> int:
    """``n`` turns of a plain Python loop."""
    x = 0
    for i in range(n):
        x ^= i
    return x


def calibrate(work_us: int) -> int:
    """Turns of :func:`spin` that take ``work_us`` of this thread's CPU (0 for 0)."""
    if not work_us:
        return 0
    t = time.thread_time()
    spin(200_000)
    per = (time.thread_time() - t) / 200_000
    return int(work_us / 1e6 / per)
