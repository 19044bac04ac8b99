"""Run ``python -m crawler ...`` under tracemalloc and write what grows, every N seconds.

``python bench/web/memtrace.py OUT_DIR INTERVAL_S [FRAMES] -- run ORDER ...`` starts tracemalloc
(``FRAMES`` 0: no tracing, only the sizes below),
runs the crawler's command line in this process and, from a daemon thread, every ``INTERVAL_S``
seconds takes a snapshot and appends to ``OUT_DIR/memtrace.txt`` the 40 source lines whose
allocations grew most since the first snapshot (taken after one interval, past start-up), with
the traced total and the entry counts of the per-host maps (robots and DNS caches, the stats'
host map, the idle connections and TLS sessions of the fetchers) and the memory LevelDB says its
block caches and memtables hold (uniq filter, frontier store), read off the crawl's
controller, and where the process's anonymous memory is (:func:`heap_split`: glibc's bytes in
use and free, Python's small-object allocator). With ``MEMTRACE_CENSUS=1`` in the environment
(``run_web.py --env MEMTRACE_CENSUS=1``) each interval also counts the gc-tracked objects by type
(growth since the first interval) and lists every container of :data:`CENSUS_MIN_LEN` entries
or more with its owner (``Class.attribute``); that walk holds the interpreter for a second or
more. Bench-only: the crawler knows nothing of it
(``run_web.py --tracemalloc S`` uses it). Tracing slows the crawl two- to three-fold: the
figures say what grows, not how fast.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
import time
import tracemalloc
import types
from collections import Counter, OrderedDict, defaultdict, deque
from pathlib import Path
from typing import Any

from crawler.memory.glibc_malloc import GlibcMalloc

CONTROLLERS: list[Any] = []
CENSUS_MIN_LEN = 2000  # containers at least this long are listed with their owner


def sizes_of_interest() -> list[str]:
    """Entry counts of the crawl's per-host and per-URL maps, read off its controller."""
    found: list[str] = []
    for ctl in CONTROLLERS:
        servers, totals = ctl.servers, ctl.stats._t
        found += [
            f"robots={len(servers._robots)}",
            f"dns={len(servers._hosts)}",
            f"claims={len(servers._claims)}",
            f"stats.hosts={len(totals.hosts)}",
            f"stats.seeds={len(totals.seeds)}",
            f"stats.sources={len(totals.sources)}",
        ]
        frontier = ctl.frontier
        dbs = {
            "uniq": getattr(getattr(frontier, "_uniq", None), "_db", None),
            "frontier": getattr(
                getattr(getattr(frontier, "_store", None), "inner", None), "_db", None
            ),
        }
        for name, db in dbs.items():
            try:
                usage = db.get_property(b"leveldb.approximate-memory-usage") if db else None
            except (RuntimeError, AttributeError):  # closed, or another kind of store
                usage = None
            if usage is not None:
                found.append(f"leveldb.{name}.memory_mb={int(usage) / 2**20:.1f}")
        for chain in ctl.chains.chains if hasattr(ctl.chains, "chains") else []:
            for proc in chain:
                client = getattr(proc, "_client", None)
                idle = getattr(client, "_idle_count", None)
                sessions = getattr(client, "tls_sessions", None)
                if idle is not None:
                    found.append(f"{proc.name}.idle_connections={idle}")
                if sessions is not None:
                    found.append(f"{proc.name}.tls_sessions={len(sessions)}")
    return found


def heap_split() -> str:
    """Anonymous MiB (smaps_rollup), glibc's in-use / free / mmapped bytes (``mallinfo2``, all
    arenas) and the bytes of Python's small-object allocator's blocks in use (its 1 MiB arenas
    are mmapped, outside glibc's figures): what grows, Python's objects or the C heap."""
    anon = 0
    with open("/proc/self/smaps_rollup") as fh:
        for line in fh:
            if line.startswith("Anonymous:"):
                anon = int(line.split()[1]) // 1024
    glibc = GlibcMalloc.load()
    usage = glibc.usage() if glibc is not None else None
    if usage is None:
        return f"anon={anon}"
    mib = 2**20
    return (
        f"anon={anon} malloc.in_use={usage.in_use / mib:.1f} malloc.free={usage.free / mib:.1f}"
        f" malloc.mmapped={usage.mmapped / mib:.1f} pymalloc.blocks={sys.getallocatedblocks()}"
    )


_CONTAINERS = (dict, list, set, frozenset, deque, OrderedDict, defaultdict, Counter)


def _name_in(holder: object, container: object) -> str | None:
    """``Class.attr`` if ``container`` is an attribute or slot of ``holder``, else None."""
    attrs = getattr(holder, "__dict__", None)
    if isinstance(attrs, dict):
        for name, value in attrs.items():
            if value is container:
                return f"{type(holder).__qualname__}.{name}"
    for name in getattr(type(holder), "__slots__", ()):
        if getattr(holder, name, None) is container:
            return f"{type(holder).__qualname__}.{name}"
    return None


def _owner_of(container: object, everything: list[Any]) -> str:
    """``Class.attr`` of the object that holds ``container`` (an instance attribute, a slot or
    a module global), else the types of what refers to it."""
    kinds: list[str] = []
    for ref in gc.get_referrers(container):
        if ref is everything or isinstance(ref, types.FrameType):
            continue
        named = _name_in(ref, container)
        if named:
            return named
        if isinstance(ref, dict):
            for holder in gc.get_referrers(ref):
                if getattr(holder, "__dict__", None) is ref:
                    found = _name_in(holder, container)
                    if found:
                        return found
            names = [name for name, value in ref.items() if value is container]
            if names and "__name__" in ref:
                return f"{ref['__name__']}.{names[0]}"
        kinds.append(type(ref).__qualname__)
    return "/".join(sorted(set(kinds))) or "?"


def census(first: dict[str, int] | None) -> tuple[dict[str, int], list[str]]:
    """gc-tracked objects by type (growth since ``first``) and the containers of
    :data:`CENSUS_MIN_LEN` entries or more with their owners, untracked ones (a dict of strings,
    a set of ints) found among the tracked objects' referents. Holds the interpreter for a
    second or more: a measuring aid, not for the crawl's figures of speed."""
    everything = gc.get_objects()
    counts = Counter(type(o).__qualname__ for o in everything)
    big: dict[int, tuple[int, str, object]] = {}
    for obj in everything:
        for item in (obj, *gc.get_referents(obj)):
            if not isinstance(item, _CONTAINERS) or id(item) in big:
                continue
            n = len(item)
            if n >= CENSUS_MIN_LEN:
                big[id(item)] = (n, type(item).__qualname__, item)
    ranked = sorted(big.values(), key=lambda t: -t[0])
    lines = [f"census: {len(everything)} gc-tracked objects"]
    base = first or {}
    grown = sorted(counts.items(), key=lambda kv: -(kv[1] - base.get(kv[0], 0)))[:25]
    lines += [f"  {n - base.get(t, 0):+9d} (now {n:9d}) {t}" for t, n in grown]
    for n, kind, obj in ranked[:20]:
        lines.append(f"  big {kind} len={n} owner={_owner_of(obj, everything)}")
    del everything, big, ranked
    return dict(counts), lines


def watch(out: Path, interval_s: float) -> None:
    first: tracemalloc.Snapshot | None = None
    first_counts: dict[str, int] | None = None
    do_census = os.environ.get("MEMTRACE_CENSUS") == "1"
    started = time.monotonic()
    while True:
        time.sleep(interval_s)
        traced, peak = tracemalloc.get_traced_memory()
        lines = [
            f"=== t={time.monotonic() - started:.0f}s traced={traced / 2**20:.1f} MiB "
            f"peak={peak / 2**20:.1f} MiB"
        ]
        lines.append("sizes: " + " ".join(sizes_of_interest()))
        lines.append("heap MiB: " + heap_split())
        if do_census:
            counts, found = census(first_counts)
            first_counts = first_counts or counts
            lines += found
        if not tracemalloc.is_tracing():
            with out.open("a") as fh:
                fh.write("\n".join(lines) + "\n")
            continue
        snap = tracemalloc.take_snapshot().filter_traces(
            [tracemalloc.Filter(False, tracemalloc.__file__)]
        )
        if first is None:
            first = snap
        else:
            for stat in snap.compare_to(first, "lineno")[:40]:
                lines.append(
                    f"{stat.size_diff / 2**20:+8.2f} MiB {stat.count_diff:+9d} blocks "
                    f"(now {stat.size / 2**20:7.2f} MiB) {stat.traceback[0]}"
                )
        with out.open("a") as fh:
            fh.write("\n".join(lines) + "\n")
        del snap


def main() -> None:
    cut = sys.argv.index("--")
    out_dir, interval = Path(sys.argv[1]), float(sys.argv[2])
    frames = int(sys.argv[3]) if cut > 3 else 1
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / "memtrace.txt"
    out.write_text("")
    if frames:  # 0: only the sizes, at full speed
        tracemalloc.start(frames)
    threading.Thread(target=watch, args=(out, interval), daemon=True, name="memtrace").start()
    sys.argv = ["crawler", *sys.argv[cut + 1 :]]
    from crawler.control.controller import CrawlController

    made = CrawlController.__init__

    def remember(self: Any, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        CONTROLLERS.append(self)

    CrawlController.__init__ = remember  # type: ignore[method-assign]
    from crawler.cli import main as crawler_main

    sys.exit(crawler_main())


if __name__ == "__main__":
    main()
