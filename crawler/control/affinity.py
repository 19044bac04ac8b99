"""CPU affinity of crawl processes: the order's ``cpu_affinity``, resolved and applied.

CPython runs the Python code of one process on one core at a time (the GIL). A crawl's ToeThreads
release the interpreter around every system call, compression, digest and LevelDB write; when
they may run on any core, each release wakes a waiting thread on another core, which takes the
interpreter, and the releasing thread sleeps until it gets it back: two thread switches, a
cross-core wake-up and cold caches per release. Pinned to one core, the releasing thread goes
on running while the woken one waits for the core, and usually takes the interpreter back
itself. On the crawl benchmark's generated site this cut thread switches seven-fold and CPU per
page by a sixth, at the same or better pages/s (bench/RESULTS.md).

``cpu_affinity`` in the order:

* ``auto`` (default): on Linux with two or more usable CPUs, each crawl process is pinned to one
  CPU — a lone process to the least busy one at start; the workers of ``crawler run --workers N``
  to different CPUs, least busy first. One CPU has no choice to make.
* ``none``: processes stay free to run anywhere (the operating system's choice).
* a list of CPU numbers, e.g. ``[2, 3]``: a lone process runs on those CPUs; worker *i* of
  ``--workers N`` runs on the *i*-th of them (round robin).

Only the command line applies it (``crawler run``, ``resume``, ``worker``, ``demo``); an embedded
:class:`~crawler.control.controller.CrawlController` leaves its host process alone. Not thread-safe:
call it from the main thread before the crawl starts its threads (threads started earlier are pinned
too, through ``/proc/self/task``).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Sequence

from crawler.order.errors import OrderError, OrderIssue

AUTO = "auto"
NONE = "none"
_SAMPLE_S = 0.05


class CpuAffinityError(OrderError):
    """The order names CPUs this process may not use: an invalid order, reported like the
    others (its YAML path ``cpu_affinity``, the value, the fix)."""

    def __init__(
        self, wanted: Sequence[int], missing: Sequence[int], usable: Sequence[int]
    ) -> None:
        super().__init__(
            [
                OrderIssue(
                    "cpu_affinity",
                    f"CPU {', '.join(map(str, missing))} is not usable here",
                    list(wanted),
                    f"usable: {', '.join(map(str, usable))}; list usable CPUs, or use auto or none",
                )
            ]
        )


def usable_cpus() -> list[int]:
    """The CPUs this process may run on, ascending (empty where the OS cannot tell)."""
    getter = getattr(os, "sched_getaffinity", None)
    if getter is None:
        return []
    return sorted(getter(0))


def idle_ticks() -> dict[int, int]:
    """Idle + iowait clock ticks per CPU since boot, from ``/proc/stat`` (empty if unreadable)."""
    ticks: dict[int, int] = {}
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            for line in fh:
                if not line.startswith("cpu") or line[3:4] == " ":
                    continue
                fields = line.split()
                ticks[int(fields[0][3:])] = int(fields[4]) + int(fields[5])
    except (OSError, ValueError, IndexError):
        return {}
    return ticks


def rank_by_idleness(
    cpus: Sequence[int],
    sample_s: float = _SAMPLE_S,
    read_ticks: Callable[[], dict[int, int]] = idle_ticks,
    sleep: Callable[[float], None] = time.sleep,
) -> list[int]:
    """``cpus`` ordered most idle first over a ``sample_s`` window.

    Among ties (typically: all idle) the order starts at a CPU picked by the process id, so
    processes started together by hand spread out.
    """
    before = read_ticks()
    sleep(sample_s)
    after = read_ticks()
    ordered = sorted(cpus)
    if ordered:
        turn = os.getpid() % len(ordered)
        ordered = ordered[turn:] + ordered[:turn]
    if not before or not after:
        return ordered
    idle = {cpu: after.get(cpu, 0) - before.get(cpu, 0) for cpu in cpus}
    best = max(idle.values(), default=0)
    # Within a tick of the best counts as a tie: one sample window is only a few ticks long.
    return sorted(ordered, key=lambda cpu: 0 if best - idle[cpu] <= 1 else best - idle[cpu])


def plan(
    setting: str | Sequence[int],
    processes: int = 1,
    *,
    usable: Sequence[int] | None = None,
    rank: Callable[[Sequence[int]], list[int]] = rank_by_idleness,
) -> list[list[int]] | None:
    """The CPUs of each of ``processes`` crawl processes on this machine, or None: leave them be.

    Raises :class:`CpuAffinityError` when an explicit list names a CPU that is not usable.
    """
    cpus = list(usable_cpus() if usable is None else usable)
    if setting == NONE or not cpus or not hasattr(os, "sched_setaffinity"):
        return None
    if setting == AUTO:
        if len(cpus) < 2:
            return None
        ranked = rank(cpus)
        return [[ranked[i % len(ranked)]] for i in range(processes)]
    wanted = [int(cpu) for cpu in setting]
    missing = sorted(set(wanted) - set(cpus))
    if missing:
        raise CpuAffinityError(wanted, missing, cpus)
    if processes == 1:
        return [sorted(set(wanted))]
    return [[wanted[i % len(wanted)]] for i in range(processes)]


def pin_process(cpus: Sequence[int]) -> None:
    """Restrict every thread of this process (and so the threads it starts later) to ``cpus``."""
    wanted = set(cpus)
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc/self/task"):
            with contextlib.suppress(OSError, ValueError):
                os.sched_setaffinity(int(name), wanted)
    os.sched_setaffinity(0, wanted)


def apply(setting: str | Sequence[int]) -> list[int] | None:
    """Resolve ``setting`` for a lone process and pin this process; the CPUs, or None if free."""
    chosen = plan(setting, 1)
    if chosen is None:
        return None
    pin_process(chosen[0])
    return chosen[0]
