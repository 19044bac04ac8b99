"""The machine's speed at the time of a run: two fixed workloads, timed in a fresh interpreter.

The same crawler code costs 2.1 CPU-ms per fetch on one day and 4.5 on another on this kind of
VM (bench/RESULTS.md, "The machine's speed moves the figures"): the host's other tenants share
its caches and memory bandwidth. A run's CPU per fetch is comparable with another day's only
beside a measure of the machine taken at the same time. Two are taken, each the best of
``ROUNDS`` in a child process (the interpreter the crawl runs, nothing else of the benchmark
running):

* ``loop_ms``: :data:`LOOP_TURNS` turns of a plain interpreter loop (bytecode dispatch in the
  caches: the interpreter's speed);
* ``walk_ms``: :data:`WALK_NODES` small objects made, then visited in a shuffled order and freed
  (allocation and cache misses over ~60 MB, more than the caches hold: a crawl's heap).

``run_web.py`` takes them before the crawl and after it, and keeps a third: the crawler's CPU
per fetch over nginx's (nginx serves each fetch with the same C code on the same machine, so
the ratio moves with the crawler's work rather than the machine). Pure functions.
"""

from __future__ import annotations

import json
import subprocess
import sys

LOOP_TURNS = 3_000_000
WALK_NODES = 400_000
ROUNDS = 3

_CHILD = f"""
import json, random, time

def loop(n):
    x = 0
    for i in range(n):
        x ^= i
    return x

def walk(n):
    nodes = [[i, None, str(i)] for i in range(n)]
    order = list(range(n))
    random.Random(7).shuffle(order)
    total = 0
    for i in order:
        node = nodes[i]
        total += node[0] + len(node[2])
    del nodes
    return total

best = {{"loop_ms": float("inf"), "walk_ms": float("inf")}}
for _ in range({ROUNDS}):
    for key, fn, n in (("loop_ms", loop, {LOOP_TURNS}), ("walk_ms", walk, {WALK_NODES})):
        t = time.process_time()
        fn(n)
        best[key] = min(best[key], (time.process_time() - t) * 1000)
print(json.dumps({{k: round(v, 1) for k, v in best.items()}}))
"""


def measure(python: str = sys.executable) -> dict[str, float]:
    """``{"loop_ms": ..., "walk_ms": ...}``: the CPU-ms of each workload (best of ``ROUNDS``)
    in a fresh ``python``."""
    out = subprocess.run(
        [python, "-c", _CHILD], capture_output=True, text=True, check=True, timeout=300
    )
    figures: dict[str, float] = json.loads(out.stdout)
    return figures


def per_nginx(result: dict[str, object]) -> float | None:
    """The crawler's CPU per fetch in units of nginx's (None without an nginx figure)."""
    crawler, nginx = result.get("cpu_ms_per_fetch"), result.get("nginx_cpu_ms_per_fetch")
    if not isinstance(crawler, int | float) or not isinstance(nginx, int | float) or nginx <= 0:
        return None
    return round(crawler / nginx, 1)
