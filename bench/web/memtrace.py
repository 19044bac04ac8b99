"""Run ``python -m crawler ...`` under tracemalloc and write what grows, every N seconds.

``python bench/web/memtrace.py OUT_DIR INTERVAL_S [FRAMES] -- run ORDER ...`` starts tracemalloc,
runs the crawler's command line in this process and, from a daemon thread, every ``INTERVAL_S``
seconds takes a snapshot and appends to ``OUT_DIR/memtrace.txt`` the 40 source lines whose
allocations grew most since the first snapshot (taken after one interval, past start-up), with
the traced total and the counts of a few per-host structures found through the garbage
collector (dicts of the server cache, the stats' host map, the connection pool). Bench-only: the
crawler knows nothing of it (``run_web.py --tracemalloc S`` uses it). Tracing slows the crawl
two- to three-fold, so the figures are about what grows, not about speed.
"""

from __future__ import annotations

import gc
import sys
import threading
import time
import tracemalloc
from pathlib import Path


def sizes_of_interest() -> list[str]:
    """Entry counts of the crawler's per-host and per-URL maps, found by their owners' types."""
    wanted = {
        "ServerCache": ("_robots", "_hosts", "_claims"),
        "CrawlStats": ("_domains",),
        "StatsTotals": ("hosts", "seeds", "seed_redirects", "sources", "by_mime"),
    }
    found: list[str] = []
    for obj in gc.get_objects():
        name = type(obj).__name__
        attrs = wanted.get(name)
        if attrs is None:
            continue
        for attr in attrs:
            value = getattr(obj, attr, None)
            if value is not None and hasattr(value, "__len__"):
                found.append(f"{name}.{attr}={len(value)}")
    return found


def watch(out: Path, interval_s: float) -> None:
    first: tracemalloc.Snapshot | None = None
    started = time.monotonic()
    while True:
        time.sleep(interval_s)
        snap = tracemalloc.take_snapshot().filter_traces(
            [tracemalloc.Filter(False, tracemalloc.__file__)]
        )
        traced, peak = tracemalloc.get_traced_memory()
        lines = [
            f"=== t={time.monotonic() - started:.0f}s traced={traced / 2**20:.1f} MiB "
            f"peak={peak / 2**20:.1f} MiB"
        ]
        lines.append("sizes: " + " ".join(sizes_of_interest()))
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
    tracemalloc.start(frames)
    threading.Thread(target=watch, args=(out, interval), daemon=True, name="memtrace").start()
    sys.argv = ["crawler", *sys.argv[cut + 1 :]]
    from crawler.cli import main as crawler_main

    sys.exit(crawler_main())


if __name__ == "__main__":
    main()
