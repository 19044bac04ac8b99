"""``make bench-frontier-scale``: the LevelDB frontier driven to 10^7-10^8 URIs without fetching.

A child process builds the frontier the way the crawl does (``crawl_builder.build_frontier``:
``order.frontier``'s store, queue-assignment policy and uniq filter from their component specs,
defaults of ``conf/default-order.yaml``, politeness off so that ``next()`` never waits) and runs
a synthetic crawl over ``--queues`` hosts:

* every "page" schedules ``--links`` new URIs (one ``schedule_many`` call, as the link
  scheduler does) plus ``--dup-ratio`` x as many URIs seen long ago (random earlier ones:
  cold uniq-filter look-ups);
* while more than ``--queued`` URIs are queued, ``next()`` + ``finished()`` (status 200, no
  links) take them out, so the queue count stays at ``--queued`` while the seen set grows
  to ``--discovered``.

At checkpoints (1, 2, 5 x 10^k seen URIs) it prints a row: seen, queued, queues, cumulative
and interval rates of schedule (URIs offered per second of schedule time) and next+finished,
RSS (anonymous + file-backed; LevelDB: what its block caches and memtables hold, part of the
anonymous), bytes on disk of the store and the uniq filter per URI. At each
``--kill-at`` size and at the end the parent sends SIGKILL while the child is still working,
then starts a new child on the same state and times open (recovery) until the first ``next()``
returns; that child goes on with the workload (a few URIs from before the kill come again as
already seen). ``--trace-memory N`` also prints, at each checkpoint, the Python heap
(tracemalloc, N frames per allocation: slow) and the allocation sites that changed most.
Tables go to stdout and ``bench/out/frontier-scale.md`` (+ ``.json``).

``--probe-pages N`` (with ``--probe-embeds M``) also measures, at each checkpoint, the
frontier's own work per fetch in CPU time (``time.thread_time`` of the calling thread; the
process's CPU, background threads included, beside it): N crawled pages, each ``next()``, then
its outlinks scheduled (``--probe-seen`` URIs seen before at random, ``--probe-same-host`` new
URIs on the page's own host, ``--probe-new-host`` URIs on hosts never seen before, one
``schedule_many`` call per part so each is timed alone), then ``finished()``; then M embeds
(``next()`` + ``finished()``, no outlinks). The probe's URIs stay in the crawl's state: its
pages and embeds leave the queue, its new URIs and new hosts join it (N x (same-host +
new-host) more queued URIs and N x new-host more queues at each checkpoint), as a crawl's
would. It draws its randomness from its own generator, so the synthetic workload after it
is the same URIs as without it.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(__file__).resolve().parent / "out"
GOALS = (
    "RSS flat and <= 1 GB (<= 2 GB at 10^7 queues); <= 100 B of RSS per queue; <= 40 B on disk "
    "per seen URL, <= 150 per queued URL; resume < 60 s"
)


def uri_of(j: int, queues: int) -> str:
    h = (j * 2654435761) % queues
    return f"https://www.h{h:07d}.example/section{j % 17}/article-{j}.html"


def mem_mb() -> tuple[float, float]:
    """(anonymous, file-backed) resident MB of this process."""
    values = {"RssAnon": 0.0, "RssFile": 0.0}
    with open("/proc/self/status") as status:
        for line in status:
            name = line.split(":", 1)[0]
            if name in values:
                values[name] = int(line.split()[1]) / 1024
    return values["RssAnon"], values["RssFile"]


def du(path: Path) -> int:
    total = 0
    for p in path.rglob("*"):
        try:
            if p.is_file():
                total += p.stat().st_size
        except OSError:
            pass
    return total


def build_frontier(state: Path) -> Any:
    """The frontier as ``CrawlBuilder.build_frontier`` makes it, politeness off."""
    from crawler.frontier import WorkQueueFrontier
    from crawler.frontier.assignment import QueueAssignmentPolicy
    from crawler.frontier.store.queue_store import QueueStore
    from crawler.order import components
    from crawler.order.schema import FrontierConfig, PolitenessConfig
    from crawler.uniq import UriUniqFilter

    politeness: dict[str, Any] = {"delay_factor": 0, "min_delay_ms": 0, "max_delay_ms": 0}
    if "host_max_connections" in PolitenessConfig.model_fields:
        politeness["host_max_connections"] = 0
    fcfg = FrontierConfig(politeness=PolitenessConfig.model_validate(politeness))
    store = components.build_component(fcfg.store, QueueStore, "frontier.store")
    policy = components.build_component(
        fcfg.queue_assignment, QueueAssignmentPolicy, "frontier.queue_assignment"
    )
    uniq = components.build_component(fcfg.uniq_filter, UriUniqFilter, "frontier.uniq_filter")
    f = WorkQueueFrontier(store, policy, uniq, fcfg)
    f.open(state)
    return f


def checkpoints(limit: int) -> list[int]:
    out, k = [], 10**5
    while k <= limit:
        out += [c for c in (k, 2 * k, 5 * k) if c <= limit]
        k *= 10
    if out[-1] != limit:
        out.append(limit)
    return out


def emit(obj: dict[str, Any]) -> None:
    sys.stdout.write("BENCH " + json.dumps(obj) + "\n")
    sys.stdout.flush()


def emit_resumed(f: Any, t_open: float, opened_s: float, seen: int) -> Any:
    """Time a reopened frontier's first ``next()`` (from ``t_open``), emit the resume event and
    return the URI it handed out (None if none)."""
    curi = f.next(5.0)
    first_s = time.perf_counter() - t_open
    anon, filed = mem_mb()
    emit(
        {
            "event": "resumed",
            "open_s": opened_s,
            "first_next_s": first_s,
            "got": curi is not None,
            "queued": f.snapshot().queued,
            "queues": f.sched.total_queues(),
            "anon_mb": anon,
            "file_mb": filed,
            "seen": seen,
        }
    )
    return curi


def child(args: argparse.Namespace) -> None:
    """The workload (see the module docstring); one JSON line per event on stdout."""
    from crawler.curi import CrawlURI

    state = Path(args.state)
    progress = state / "bench-progress.json"
    if args.trace_memory:
        tracemalloc.start(args.trace_memory)
    traced: list[Any] = []
    t_open = time.perf_counter()
    f = build_frontier(state)
    opened_s = time.perf_counter() - t_open
    start = json.loads(progress.read_text()) if progress.exists() else {}
    j, taken = int(start.get("j", 0)), int(start.get("out", 0))
    before_s = float(start.get("elapsed_s", 0.0))
    if j:  # a resume: time until the first next() returns
        curi = emit_resumed(f, t_open, opened_s, j)
        if curi is not None:
            curi.status = 200
            f.finished(curi)
            taken += 1
    rng = random.Random(j)
    marks = [c for c in checkpoints(args.discovered) if c > j]
    kills = sorted(k for k in args.kill_at if k > j)
    links, queues, target_q = args.links, args.queues, args.queued
    dups = int(args.links * args.dup_ratio)
    sched_s = out_s = 0.0
    offered = 0
    last = {"sched_s": 0.0, "out_s": 0.0, "offered": 0, "out": 0, "t": time.perf_counter()}
    t_all = time.perf_counter()
    queued = f.snapshot().queued
    batches = 0
    while True:
        batch = [CrawlURI(uri_of(i, queues)) for i in range(j, j + links)]
        if j > links and dups:
            batch += [CrawlURI(uri_of(rng.randrange(j), queues)) for _ in range(dups)]
        t = time.perf_counter()
        queued += sum(f.schedule_many(batch))
        sched_s += time.perf_counter() - t
        offered += len(batch)
        j += links
        batches += 1
        if queued > target_q:
            t = time.perf_counter()
            while queued > target_q:
                curi = f.next(1.0)
                if curi is None:
                    break
                curi.status = 200
                f.finished(curi)
                queued -= 1
                taken += 1
            out_s += time.perf_counter() - t
        if batches % 200 == 0:
            progress.write_text(
                json.dumps(
                    {"j": j, "out": taken, "elapsed_s": before_s + time.perf_counter() - t_all}
                )
            )
        if marks and j >= marks[0]:
            marks.pop(0)
            progress.write_text(
                json.dumps(
                    {"j": j, "out": taken, "elapsed_s": before_s + time.perf_counter() - t_all}
                )
            )
            snap = f.snapshot()
            queued = snap.queued
            anon, filed = mem_mb()
            store_b, uniq_b = du(state / "frontier"), du(state / "uniq")
            native_b = sum(
                getattr(part, "memory_bytes", lambda: 0)() for part in (f._store.inner, f._uniq)
            )
            now = time.perf_counter()
            d_sched = sched_s - last["sched_s"]
            d_out = out_s - last["out_s"]
            emit(
                {
                    "event": "checkpoint",
                    "seen": j,
                    "queued": queued,
                    "queues": f.sched.total_queues(),
                    "offered": offered,
                    "taken": taken,
                    "elapsed_s": before_s + now - t_all,
                    "sched_rate": (offered - last["offered"]) / d_sched if d_sched else 0.0,
                    "out_rate": (taken - last["out"]) / d_out if d_out else 0.0,
                    "anon_mb": anon,
                    "file_mb": filed,
                    "leveldb_mb": native_b / (1 << 20),
                    "store_bytes": store_b,
                    "uniq_bytes": uniq_b,
                    "load": os.getloadavg()[0],
                }
            )
            last = {"sched_s": sched_s, "out_s": out_s, "offered": offered, "out": taken, "t": now}
            if args.probe_pages or args.probe_embeds:
                ev = probe(f, args, j, j)
                emit(ev)
                taken += ev["pages"] + ev["embeds"]
                queued = f.snapshot().queued
                last["out"] = taken
            if args.trace_memory:
                trace_memory(traced, j)
        if kills and j >= kills[0]:
            kills.pop(0)
            emit({"event": "kill_me", "seen": j})
            kills_time = time.perf_counter()
            # keep working until the parent's SIGKILL lands (a crash in mid-work)
            while time.perf_counter() - kills_time < 600:
                more = [CrawlURI(uri_of(i, queues)) for i in range(j, j + links)]
                queued += sum(f.schedule_many(more))
                j += links
                while queued > target_q and (curi := f.next(1.0)) is not None:
                    curi.status = 200
                    f.finished(curi)
                    taken += 1
                    queued -= 1
        if not marks and not kills:
            break
    f.close()


def probe(f: Any, args: argparse.Namespace, seen: int, mark: int) -> dict[str, Any]:
    """The frontier's work for ``args.probe_pages`` pages and ``args.probe_embeds`` embeds.

    Returns CPU-us per page and per outlink by part (see the module docstring). The caller's
    thread CPU (``time.thread_time``) is summed around each call; ``cpu_us_page_process``
    is the process's CPU (LevelDB's compaction and any write-behind thread included) over
    the whole page loop divided by the pages.
    """
    from urllib.parse import urlsplit

    from crawler.curi import CrawlURI

    queued_before = f.snapshot().queued
    rng = random.Random(-mark)  # its own generator: the workload's stays as without a probe
    parts = {"next_fin": 0.0, "seen": 0.0, "same_host": 0.0, "new_host": 0.0}
    queued = {"seen": 0, "same_host": 0, "new_host": 0}
    pages = embeds = 0
    tick = time.thread_time
    p0 = time.process_time()
    for n in range(args.probe_pages):
        t = tick()
        curi = f.next(1.0)
        parts["next_fin"] += tick() - t
        if curi is None:
            break
        host = urlsplit(curi.uri).netloc
        batches = {
            "seen": [
                CrawlURI(uri_of(rng.randrange(seen), args.queues)) for _ in range(args.probe_seen)
            ],
            "same_host": [
                CrawlURI(f"https://{host}/p{mark}/{n}/{k}.html")
                for k in range(args.probe_same_host)
            ],
            "new_host": [
                CrawlURI(f"https://www.p{mark}-{n}-{k}.example/")
                for k in range(args.probe_new_host)
            ],
        }
        for part, batch in batches.items():
            if batch:
                t = tick()
                queued[part] += sum(f.schedule_many(batch))
                parts[part] += tick() - t
        curi.status = 200
        t = tick()
        f.finished(curi)
        parts["next_fin"] += tick() - t
        pages += 1
    page_process_s = time.process_time() - p0
    embed_s = 0.0
    p0 = time.process_time()
    for _ in range(args.probe_embeds):
        t = tick()
        curi = f.next(1.0)
        if curi is None:
            break
        curi.status = 200
        f.finished(curi)
        embed_s += tick() - t
        embeds += 1
    embed_process_s = time.process_time() - p0
    per = max(1, pages)
    out: dict[str, Any] = {
        "event": "probe",
        "seen": seen,
        "queued": queued_before,
        "pages": pages,
        "embeds": embeds,
        "queued_by_part": queued,
        "load": os.getloadavg()[0],
    }
    counts = {
        "seen": args.probe_seen,
        "same_host": args.probe_same_host,
        "new_host": args.probe_new_host,
    }
    for part, s in parts.items():
        out[f"us_page_{part}"] = s * 1e6 / per
        if part in counts:
            out[f"us_link_{part}"] = s * 1e6 / max(1, per * counts[part])
    out["us_page"] = sum(parts.values()) * 1e6 / per
    out["us_page_process"] = page_process_s * 1e6 / per
    out["us_embed"] = embed_s * 1e6 / max(1, embeds)
    out["us_embed_process"] = embed_process_s * 1e6 / max(1, embeds)
    return out


def trace_memory(traced: list[Any], seen: int) -> None:
    """Emit the Python heap (tracemalloc) and its largest changes since the last checkpoint."""
    gc.collect()
    snap = tracemalloc.take_snapshot().filter_traces(
        [tracemalloc.Filter(False, tracemalloc.__file__)]
    )
    current, _ = tracemalloc.get_traced_memory()
    top = snap.compare_to(traced[0], "lineno") if traced else snap.statistics("lineno")
    rows = []
    for stat in top[:12]:
        frame = stat.traceback[0]
        size_diff = getattr(stat, "size_diff", stat.size)
        count_diff = getattr(stat, "count_diff", stat.count)
        rows.append(
            f"{Path(frame.filename).name}:{frame.lineno} {size_diff / 1e6:+.1f} MB "
            f"({count_diff:+,} blocks, now {stat.size / 1e6:.1f} MB)"
        )
    traced[:] = [snap]
    emit({"event": "memtrace", "seen": seen, "python_mb": current / 1e6, "top": rows})


def row(c: dict[str, Any]) -> str:
    seen, queued = c["seen"], max(1, c["queued"])
    rss = c["anon_mb"] + c["file_mb"]
    return (
        f"| {seen:>12,} | {c['queued']:>11,} | {c['queues']:>9,} | {c['elapsed_s']:>7.0f} "
        f"| {c['sched_rate']:>9,.0f} | {c['out_rate']:>8,.0f} | {rss:>6.0f} | {c['anon_mb']:>6.0f} "
        f"| {c['file_mb']:>6.0f} | {c.get('leveldb_mb', 0):>7.0f} | {c['uniq_bytes'] / seen:>6.1f} "
        f"| {c['store_bytes'] / queued:>7.1f} | {c['store_bytes'] / seen:>7.1f} "
        f"| {c['load']:>4.1f} |"
    )


HEADER = [
    "| seen URIs    | queued      | queues    | wall s  | schedule/s | next+fin/s | RSS MB "
    "| anon   | file   | LevelDB | uniq B/seen | store B/queued | store B/seen | load |",
    "|--------------|-------------|-----------|---------|-----------|----------|--------"
    "|--------|--------|---------|--------|---------|---------|------|",
]


def parent(args: argparse.Namespace) -> None:
    state = Path(args.state) if args.state else Path(tempfile.mkdtemp(prefix="bench-fscale-"))
    if state.exists() and any(state.iterdir()):
        shutil.rmtree(state)
    state.mkdir(parents=True, exist_ok=True)
    OUT.mkdir(parents=True, exist_ok=True)
    lines = [
        f"Frontier at scale: --discovered {args.discovered:,} --queued {args.queued:,} "
        f"--queues {args.queues:,}, {args.links} new links per schedule_many + "
        f"{args.dup_ratio:g}x as many already-seen; state in {state}",
        "",
        *HEADER,
    ]
    print("\n".join(lines), flush=True)
    results: dict[str, Any] = {"args": vars(args), "checkpoints": [], "resumes": [], "probes": []}
    cmd = [sys.executable, __file__, "--child", "--state", str(state), *child_args(args)]
    while True:
        killed_at = None
        t_spawn = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=ROOT)
        assert proc.stdout is not None
        for raw in proc.stdout:
            if not raw.startswith("BENCH "):
                continue  # the frontier's own log lines
            ev = json.loads(raw[6:])
            if ev["event"] == "checkpoint":
                results["checkpoints"].append(ev)
                lines.append(row(ev))
                print(lines[-1], flush=True)
            elif ev["event"] == "probe":
                results["probes"].append(ev)
                print(f"  probe: {probe_row(ev)}", flush=True)
            elif ev["event"] == "memtrace":
                print(
                    f"  Python heap {ev['python_mb']:.1f} MB at {ev['seen']:,} seen; since the "
                    "last checkpoint:",
                    flush=True,
                )
                for line in ev["top"]:
                    print(f"    {line}", flush=True)
            elif ev["event"] == "resumed":
                ev["spawn_to_first_next_s"] = time.perf_counter() - t_spawn
                results["resumes"].append(ev)
                print(f"  resumed: {json.dumps(ev)}", flush=True)
            elif ev["event"] == "kill_me":
                time.sleep(args.kill_delay)
                os.kill(proc.pid, signal.SIGKILL)
                killed_at = ev["seen"]
                print(f"  SIGKILL at {killed_at:,} seen", flush=True)
                break
        proc.wait()
        if killed_at is None:
            break
        if killed_at >= args.discovered:  # the last recovery: open, first next(), exit
            t_spawn = time.perf_counter()
            out = subprocess.run(
                [*cmd, "--only-resume"], capture_output=True, text=True, cwd=ROOT, check=True
            )
            ev = next(json.loads(x[6:]) for x in out.stdout.splitlines() if x[:6] == "BENCH ")
            ev["spawn_to_first_next_s"] = time.perf_counter() - t_spawn
            results["resumes"].append(ev)
            print(f"  resumed: {json.dumps(ev)}", flush=True)
            break
    lines += [
        "",
        "| kill -9 at seen | queued    | queues    | open s | open + first next() s "
        "| process start to first next() s | RSS after open MB |",
        "|-----------------|-----------|-----------|--------|------------------------"
        "|---------------------------------|-------------------|",
    ]
    for r in results["resumes"]:
        lines.append(
            f"| {r['seen']:>15,} | {r['queued']:>9,} | {r['queues']:>9,} | {r['open_s']:>6.1f} "
            f"| {r['first_next_s']:>22.1f} | {r['spawn_to_first_next_s']:>31.1f} "
            f"| {r['anon_mb'] + r['file_mb']:>17.0f} |"
        )
    if results["probes"]:
        lines += ["", *probe_header(args), *(probe_row(ev) for ev in results["probes"])]
    lines.append(per_queue(results["checkpoints"]))
    lines.append(f"\nGoals: {GOALS}.")
    print("\n".join(lines[-len(results["resumes"]) - len(results["probes"]) - 10 :]), flush=True)
    (OUT / f"{args.out}.md").write_text("\n".join(lines) + "\n")
    (OUT / f"{args.out}.json").write_text(json.dumps(results, indent=1))
    print(f"written: {OUT / (args.out + '.md')}; state kept in {state}" if args.keep else "")
    if not args.keep:
        shutil.rmtree(state, ignore_errors=True)


def probe_header(args: argparse.Namespace) -> list[str]:
    return [
        f"The frontier's work per fetch (CPU-us; {args.probe_pages:,} pages of "
        f"{args.probe_seen} seen + {args.probe_same_host} same-host new + "
        f"{args.probe_new_host} new-host outlinks, then {args.probe_embeds:,} embeds):",
        "",
        "| seen URIs    | queued at probe | page: all | page, process | next+fin "
        "| seen /link | same-host /link | new-host /link | embed | embed, process | load |",
        "|--------------|-----------------|-----------|---------------|----------"
        "|------------|-----------------|----------------|-------|----------------|------|",
    ]


def probe_row(ev: dict[str, Any]) -> str:
    return (
        f"| {ev['seen']:>12,} | {ev.get('queued', 0):>15,} | {ev['us_page']:>9,.0f} "
        f"| {ev['us_page_process']:>13,.0f} | {ev['us_page_next_fin']:>8,.0f} "
        f"| {ev.get('us_link_seen', 0):>10.1f} | {ev.get('us_link_same_host', 0):>15.1f} "
        f"| {ev.get('us_link_new_host', 0):>14.1f} | {ev['us_embed']:>5,.0f} "
        f"| {ev['us_embed_process']:>14,.0f} | {ev['load']:>4.1f} |"
    )


def per_queue(points: list[dict[str, Any]]) -> str:
    """RSS per queue: the slope of RSS over the queue count between the first checkpoint with
    half the last one's queues (the bounded caches full by then) and the last."""
    if len(points) < 2:
        return ""
    last = points[-1]
    first = next(p for p in points if p["queues"] * 2 >= last["queues"])
    if first is last:
        first = points[-2]
    d_queues = last["queues"] - first["queues"]
    if d_queues <= 0:
        return ""
    d_rss = (last["anon_mb"] + last["file_mb"]) - (first["anon_mb"] + first["file_mb"])
    d_anon = last["anon_mb"] - first["anon_mb"]
    return (
        f"\nRSS per queue from {first['queues']:,} to {last['queues']:,} queues: "
        f"{d_rss * 2**20 / d_queues:.0f} B (anonymous {d_anon * 2**20 / d_queues:.0f} B)."
    )


def child_args(args: argparse.Namespace) -> list[str]:
    return [
        "--discovered",
        str(args.discovered),
        "--queued",
        str(args.queued),
        "--queues",
        str(args.queues),
        "--links",
        str(args.links),
        "--dup-ratio",
        str(args.dup_ratio),
        "--kill-at",
        ",".join(str(k) for k in args.kill_at),
        "--trace-memory",
        str(args.trace_memory),
        "--probe-pages",
        str(args.probe_pages),
        "--probe-embeds",
        str(args.probe_embeds),
        "--probe-seen",
        str(args.probe_seen),
        "--probe-same-host",
        str(args.probe_same_host),
        "--probe-new-host",
        str(args.probe_new_host),
    ]


def only_resume(args: argparse.Namespace) -> None:
    state = Path(args.state)
    progress = json.loads((state / "bench-progress.json").read_text())
    t = time.perf_counter()
    f = build_frontier(state)
    emit_resumed(f, t, time.perf_counter() - t, int(progress["j"]))
    f.close()


def probe_only(args: argparse.Namespace) -> None:
    """Open the state of an earlier run (``--keep``) and probe it once: what a profiler
    attaches to (``py-spy record -- python bench/frontier_scale.py --probe-only ...``)."""
    state = Path(args.state)
    progress = json.loads((state / "bench-progress.json").read_text())
    seen = int(progress["j"])
    f = build_frontier(state)
    ev = probe(f, args, seen, seen + int(time.time()))  # URIs of its own, new at each run
    f.close()
    print(probe_header(args)[-2], probe_header(args)[-1], probe_row(ev), sep="\n", flush=True)


def sizes(text: str) -> list[int]:
    return [int(float(x)) for x in text.split(",") if x]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--discovered", type=lambda s: int(float(s)), default=10**7)
    p.add_argument("--queued", type=lambda s: int(float(s)), default=10**6)
    p.add_argument("--queues", type=lambda s: int(float(s)), default=10**6)
    p.add_argument("--links", type=int, default=50, help="new URIs per schedule_many call")
    p.add_argument("--dup-ratio", type=float, default=1.0, help="already-seen URIs per new one")
    p.add_argument(
        "--kill-at",
        type=sizes,
        default=[],
        help="seen counts at which to kill -9 and time the resume (the end is always one)",
    )
    p.add_argument("--kill-delay", type=float, default=2.0, help="s of work before the kill")
    p.add_argument(
        "--trace-memory",
        type=int,
        default=0,
        help="frames per allocation to trace (tracemalloc; slow): print the Python heap and its "
        "largest changes at each checkpoint",
    )
    p.add_argument(
        "--probe-pages",
        type=int,
        default=0,
        help="at each checkpoint, time the frontier's CPU for this many crawled pages: next(), "
        "schedule_many of their outlinks by part, finished()",
    )
    p.add_argument("--probe-embeds", type=int, default=0, help="then this many next()+finished()")
    p.add_argument("--probe-seen", type=int, default=70, help="outlinks per page seen before")
    p.add_argument(
        "--probe-same-host", type=int, default=25, help="new outlinks on the page's host"
    )
    p.add_argument("--probe-new-host", type=int, default=5, help="outlinks on hosts never seen")
    p.add_argument("--state", default="", help="state directory (default: a temporary one)")
    p.add_argument("--keep", action="store_true", help="keep the state directory")
    p.add_argument("--out", default="frontier-scale", help="stem of the files in bench/out/")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--only-resume", action="store_true", help=argparse.SUPPRESS)
    p.add_argument(
        "--probe-only",
        action="store_true",
        help="probe the state of an earlier --keep run once (--state, --queues as then)",
    )
    args = p.parse_args()
    if args.only_resume:
        only_resume(args)
    elif args.probe_only:
        probe_only(args)
    elif args.child:
        child(args)
    else:
        if args.discovered not in args.kill_at:
            args.kill_at.append(args.discovered)
        parent(args)


if __name__ == "__main__":
    main()
