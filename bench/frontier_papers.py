"""A single-site experiment of published Heritrix studies: one big site, 50 threads, 4 policies.

A one-host site (``bench/frontier_site.py``, a separate process) answers every request after
``latency_s`` and records the most requests it had in progress at once. The real crawler
(``CrawlController`` over an order from ``load_order``, default chains) crawls it for a fixed
time, in a child process per run, with each policy — Hostname, Hash ELF and BKDR over 50 buckets,
Hostname with ``parallel_queues: 50`` — (a) with politeness off and (b) with a 300 ms delay per
queue, each without and with the server cap (``frontier.politeness.host_max_connections``).

Ideal rate: each fetch holds a thread and a server slot ``latency_s``; a queue then waits
``delay``: ideal = min(threads / L, queues / (L + delay), cap / L) — the usual
min(threads, queues) / (L + delay) when threads = queues and no cap binds. ``queues`` counts the
queues the policy actually filled (ELF over an even bucket count fills half for URIs ending alike).
The rate is measured from the site's request completions after a 2 s warm-up.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
THREADS = 50
LATENCY_S = 0.05
DELAY_MS = 300
CAP = 8
WARMUP_S = 2.0

POLICIES: dict[str, dict[str, Any]] = {
    "hostname": {"class": "crawler.frontier.assignment.HostnameQueueAssignmentPolicy"},
    "hash elf/50": {
        "class": "crawler.frontier.assignment.HashQueueAssignmentPolicy",
        "params": {"function": "elf", "buckets": 50},
    },
    "hash bkdr/50": {
        "class": "crawler.frontier.assignment.HashQueueAssignmentPolicy",
        "params": {"function": "bkdr", "buckets": 50},
    },
    "hostname pq=50": {
        "class": "crawler.frontier.assignment.HostnameQueueAssignmentPolicy",
        "params": {"parallel_queues": 50},
    },
}


@dataclass
class Run:
    policy: str
    delay_ms: int
    cap: int
    duration_s: float
    fetched: int = 0
    rate: float = 0.0
    queues: int = 0
    ideal: float = 0.0
    max_active: int = 0
    max_open: int = 0
    cpu_ms_per_uri: float = 0.0
    timeline: list[int] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.policy}, delay {self.delay_ms} ms, cap {self.cap or 'off'}"


def start_site(pages: int) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "bench" / "frontier_site.py"),
            "--pages",
            str(pages),
            "--latency-s",
            str(LATENCY_S),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().split()
    if len(line) != 2 or line[0] != "PORT":
        proc.kill()
        raise RuntimeError(f"test site did not start: {line}")
    return proc, int(line[1])


def site_call(port: int, what: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/__{what}", timeout=30) as resp:
        data: dict[str, Any] = json.loads(resp.read())
        return data


def order_yaml(port: int, delay_ms: int, cap: int, dur_s: float) -> str:
    order = {
        "name": "bench-papers",
        "operator": {"contact_url": "https://example.org/bench"},
        "seeds": {"urls": [f"http://127.0.0.1:{port}/"]},
        "toe_threads": THREADS,
        "limits": {"max_time_s": dur_s},
        "logging": {"console": False, "progress_interval_s": 5},
        "frontier": {
            "politeness": {
                "delay_factor": 0,
                "min_delay_ms": delay_ms,
                "max_delay_ms": delay_ms,
                "host_max_connections": cap,
            },
        },
    }
    return json.dumps(order)  # YAML is a superset of JSON


def child(order_path: str, policy_json: str, run_dir: str, out_path: str) -> None:
    """Run one crawl (in a fresh process) and write the frontier's queue count."""
    from crawler.control.controller import CrawlController
    from crawler.order.loader import load_order

    # --set replaces the whole component; merging an order file would keep the default
    # policy's params, which another class does not accept.
    # The site numbers its pages: one URL template, which the default trap budget would cut.
    order = load_order(
        order_path,
        [f"frontier.queue_assignment={policy_json}", "scope.8.params.max_series_length=0"],
    )
    ctl = CrawlController(order, Path(run_dir), install_signals=False)
    ctl.run()
    Path(out_path).write_text(json.dumps({"status": ctl.exit_status}))


def queues_used(port: int, policy: str, paths: list[str]) -> int:
    """Distinct queue keys of the URIs fetched, as the policy assigns them."""
    from crawler.curi import CrawlURI
    from crawler.frontier.assignment import QueueAssignmentPolicy
    from crawler.order.components import build_component
    from crawler.order.schema import ComponentSpec

    spec = ComponentSpec.model_validate(POLICIES[policy])
    assign = build_component(spec, QueueAssignmentPolicy, "queue_assignment")
    return len({assign.key(CrawlURI(f"http://127.0.0.1:{port}{p}")) for p in paths})


def ideal_rate(queues: int, delay_ms: int, cap: int) -> float:
    per_slot = 1.0 / LATENCY_S
    ideal = min(THREADS * per_slot, queues / (LATENCY_S + delay_ms / 1000.0))
    return min(ideal, cap * per_slot) if cap else ideal


def run_one(port: int, tmp: Path, policy: str, delay_ms: int, cap: int, dur_s: float) -> Run:
    run = Run(policy, delay_ms, cap, dur_s)
    work = tmp / f"{policy.replace(' ', '_').replace('/', '-')}-{delay_ms}-{cap}"
    work.mkdir(parents=True)
    order = work / "order.yaml"
    order.write_text(order_yaml(port, delay_ms, cap, dur_s))
    site_call(port, "reset")
    out = work / "result.json"
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [
            sys.executable,
            __file__,
            "child",
            str(order),
            json.dumps(POLICIES[policy]),
            str(work / "run"),
            str(out),
        ],
        check=True,
        cwd=ROOT,
        timeout=dur_s + 120,
    )
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (cpu_after.ru_utime + cpu_after.ru_stime) - (cpu_before.ru_utime + cpu_before.ru_stime)
    stats = site_call(port, "stats")
    done = sorted(stats["done_s"])
    run.max_active, run.max_open = stats["max_active"], stats["max_open"]
    run.fetched = len(done)
    run.queues = queues_used(port, policy, stats["paths"])
    run.cpu_ms_per_uri = 1000 * cpu_s / max(1, run.fetched)
    if done:
        start = done[0]
        steady = [t for t in done if t >= start + WARMUP_S]
        window = (done[-1] - start - WARMUP_S) if steady else 0.0
        run.rate = len(steady) / window if window > 0 else 0.0
        seconds = int(done[-1] - start) + 1
        run.timeline = [0] * seconds
        for t in done:
            run.timeline[int(t - start)] += 1
    run.ideal = ideal_rate(min(run.queues, THREADS) or 1, delay_ms, cap)
    return run


def table(runs: list[Run]) -> str:
    head = (
        f"| {'policy':<15} | delay ms | cap | queues | URIs/s | ideal | % ideal "
        f"| x hostname | max conc. | fetched | crawler CPU ms/URI |"
    )
    lines = [head, "|" + "|".join("-" * (len(c)) for c in head.split("|")[1:-1]) + "|"]
    base = {(r.delay_ms, r.cap): r.rate for r in runs if r.policy == "hostname"}
    for r in runs:
        speedup = r.rate / base[(r.delay_ms, r.cap)] if base.get((r.delay_ms, r.cap)) else 0.0
        pct = 100 * r.rate / r.ideal if r.ideal else 0.0
        lines.append(
            f"| {r.policy:<15} | {r.delay_ms:>8} | {r.cap or 'off':>3} | {r.queues:>6} "
            f"| {r.rate:>6.1f} | {r.ideal:>5.0f} | {pct:>6.0f}% | {speedup:>9.1f}x "
            f"| {r.max_active:>3}{' <= ' + str(r.cap) if r.cap else '':<5} | {r.fetched:>7} "
            f"| {r.cpu_ms_per_uri:>18.2f} |"
        )
    return "\n".join(lines)


def plot(runs: list[Run], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(13, 8), sharex=True)
    for ax, (delay_ms, cap) in zip(
        axes.flat, [(0, 0), (0, CAP), (DELAY_MS, 0), (DELAY_MS, CAP)], strict=True
    ):
        for r in runs:
            if (r.delay_ms, r.cap) == (delay_ms, cap):
                full = r.timeline[:-1]  # the last second is cut short by the time limit
                ax.plot(range(len(full)), full, label=f"{r.policy} ({r.rate:.0f}/s)")
        ax.set_title(f"delay {delay_ms} ms, server cap {cap or 'off'}")
        ax.set_ylabel("URIs/s")
        ax.set_yscale("symlog", linthresh=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    for ax in axes[1]:
        ax.set_xlabel("seconds since first request")
    fig.suptitle(f"One site, {THREADS} threads, {LATENCY_S * 1000:.0f} ms latency")
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    plt.close(fig)


def run_all(out_dir: Path, dur_s: float, pages: int) -> tuple[str, list[Run]]:
    site, port = start_site(pages)
    runs: list[Run] = []
    try:
        with tempfile.TemporaryDirectory(prefix="bench-papers-") as tmp:
            for delay_ms in (0, DELAY_MS):
                for cap in (0, CAP):
                    for policy in POLICIES:
                        t = time.perf_counter()
                        run = run_one(port, Path(tmp), policy, delay_ms, cap, dur_s)
                        runs.append(run)
                        print(
                            f"  {run.label}: {run.rate:.1f} URIs/s, {run.queues} queues, "
                            f"max {run.max_active} concurrent, {run.cpu_ms_per_uri:.2f} CPU-ms/URI "
                            f"({time.perf_counter() - t:.0f} s)",
                            flush=True,
                        )
    finally:
        site.terminate()
        site.wait(10)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    plot(runs, out_dir / "frontier_papers.png")
    (out_dir / "frontier_papers.json").write_text(json.dumps([asdict(r) for r in runs], indent=1))
    note = (
        f"\nqueues = distinct queue keys of the URIs fetched. Load average at the end: {load} "
        "(2 cores; the crawler, the site and anything else share them)."
    )
    return table(runs) + note, runs


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "child":
        child(*sys.argv[2:6])
    else:
        out = ROOT / "bench" / "out"
        out.mkdir(parents=True, exist_ok=True)
        dur = float(sys.argv[1]) if len(sys.argv) > 1 else 15.0
        print(run_all(out, dur, 20_000)[0])
