"""The crawl of the synthetic web with politeness on: throughput, CPU, memory, disk, politeness.

Run by ``make bench-web`` (``BENCH_WEB_ARGS`` passes options). Generates the web (``gen_web``),
makes the certificates, starts nginx (TLS, port 8443) and dnsmasq (127.0.0.1:5353), writes a job
(``bench/web/order.yaml`` and a seeds.txt of every host's ``/``) and runs ``crawler run`` for
``--minutes`` (``limits.max_time_s``). Every ``--sample-s`` seconds it records the crawler's
RSS and CPU, nginx's and dnsmasq's CPU, the bytes under the run's ``state/`` and the fetches
logged so far. Afterwards, from crawl.log and progress-statistics.log:

* pages/s (fetches of http(s) URIs per second, the curve and the sustained rate: the median of
  the per-interval rates after the first minute), CPU-ms per fetch (crawler; nginx and dnsmasq
  apart);
* peak and final RSS;
* state bytes on disk per discovered URL (the seen set, ``state/uniq``) and per queued URL
  (``state/frontier``), and all of ``state/`` per discovered URL;
* the politeness error: for consecutive fetches from one host, the gap between the end of one
  and the start of the next (crawl.log's fetch-start+duration) minus the configured delay
  (``delay_factor`` x duration within [min, max]); a fetch whose URI was discovered (its via's
  crawl.log time) after the earliest allowed start counts from its discovery instead, as the
  crawler could not have fetched it earlier. p50/p99 of the lateness in ms and as a share of the
  configured delay, and the count of gaps shorter than configured (violations); the same
  apart for the gaps in rotation, for a host's return after its queue ran empty and for its
  return after the lateness guard rotated it out (``bench/web/politeness.py``);
* the statuses against the ground truth (``truth.json``): 404/500/301 and robots-disallowed
  URIs found per host crawled to the end.

``--workers N`` runs the same crawl as N worker processes sharing a frontier in Redis
(``crawler run ORDER --workers N`` with ``frontier.store`` a RedisQueueStore): the harness
starts its own redis-server on a free loopback port (no persistence) and stops it at the end.
CPU and RSS are then those of the launcher and all its workers together (redis-server's CPU
apart, like nginx's), the politeness is measured over the crawl.logs of all workers (a host's
fetches may come from any worker), and the frontier's and the seen set's bytes are Redis's
``used_memory`` (per queued and per discovered URL).

Writes ``bench/out/web/results-<label>.json``, a plot ``bench/out/web/web-<label>.png`` (pages/s
and RSS over time) and prints markdown tables.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import cpu_by_kind  # noqa: E402
import gen_web  # noqa: E402
import politeness  # noqa: E402
import services  # noqa: E402
import yaml  # noqa: E402
import yardstick  # noqa: E402

OUT = ROOT / "bench" / "out" / "web"


def dir_bytes(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                continue
    return total


def proc_rss_cpu(pid: int) -> tuple[float, float]:
    """(RSS MiB, user+sys CPU s) of ``pid``; (0, 0) once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0, 0.0
    rss_kb = next(
        (int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0
    )
    ticks = os.sysconf("SC_CLK_TCK")
    return rss_kb / 1024, (int(stat[11]) + int(stat[12])) / ticks


def proc_faults_sys(pid: int) -> tuple[int, float]:
    """(minor page faults, system CPU s) of ``pid`` so far; (0, 0) once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0, 0.0
    return int(stat[7]), int(stat[12]) / os.sysconf("SC_CLK_TCK")


def proc_switches(pid: int) -> tuple[int, int]:
    """(voluntary, involuntary) context switches of every live thread of ``pid`` so far, from
    /proc/PID/task/*/status; (0, 0) once it is gone. A voluntary switch is a thread blocking:
    a system call that waits, a lock, or the interpreter lock handed to another thread. Threads
    that ended are not counted (the toe threads live as long as the crawl)."""
    voluntary = involuntary = 0
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return 0, 0
    for task in tasks:
        try:
            text = (task / "status").read_text()
        except OSError:
            continue  # the thread ended between the listing and the read
        for line in text.splitlines()[-2:]:
            key, _, value = line.partition(":")
            if key == "voluntary_ctxt_switches":
                voluntary += int(value)
            elif key == "nonvoluntary_ctxt_switches":
                involuntary += int(value)
    return voluntary, involuntary


def proc_memory(pid: int) -> tuple[float, float]:
    """(RSS MiB, anonymous MiB) of ``pid`` from /proc/PID/smaps_rollup; (0, 0) once it is gone.

    Anonymous memory is the heap (Python objects, malloc arenas, LevelDB's caches and memtables);
    the rest of RSS is file-backed pages (shared libraries, mapped LevelDB tables) the kernel
    may drop."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0.0, 0.0
    values = {}
    for line in text.splitlines()[1:]:
        key, _, rest = line.partition(":")
        if key in ("Rss", "Anonymous"):
            values[key] = int(rest.split()[0]) / 1024
    return values.get("Rss", 0.0), values.get("Anonymous", 0.0)


def tree_sum(pid: int, read: Callable[[int], tuple[float, float]]) -> tuple[float, float]:
    """``read`` (a pair of figures of one process, such as :func:`proc_memory`) of ``pid`` and
    its live children, summed."""
    first, second = read(pid)
    for child in child_pids(pid):
        child_first, child_second = read(child)
        first += child_first
        second += child_second
    return first, second


def memory_trend(samples: list[dict[str, Any]], key: str, until_s: float) -> dict[str, Any] | None:
    """The trend of ``samples[i][key]`` (MiB) over the last half of the crawl (samples up to
    ``until_s``, the crawl's time limit: its shutdown apart): the least-squares
    slope in MiB per minute, the first, last, lowest and highest values, and the spread
    ``(max - min) / mean`` and the slope's projection over that half as shares of its mean (flat
    means both small). None with fewer than 4 samples."""
    points = [(s["t_s"], s[key]) for s in samples if s.get(key) and s["t_s"] <= until_s]
    if len(points) < 4:
        return None
    half = points[-1][0] / 2
    tail = [p for p in points if p[0] >= half]
    if len(tail) < 2:
        return None
    mean_t = statistics.fmean(t for t, _ in tail)
    mean_v = statistics.fmean(v for _, v in tail)
    var_t = sum((t - mean_t) ** 2 for t, _ in tail)
    slope_s = sum((t - mean_t) * (v - mean_v) for t, v in tail) / var_t if var_t else 0.0
    values = [v for _, v in tail]
    span_s = tail[-1][0] - tail[0][0]
    return {
        "from_s": round(tail[0][0], 1),
        "to_s": round(tail[-1][0], 1),
        "first_mb": round(values[0], 1),
        "last_mb": round(values[-1], 1),
        "min_mb": round(min(values), 1),
        "max_mb": round(max(values), 1),
        "slope_mb_per_min": round(slope_s * 60, 2),
        "spread_share": round((max(values) - min(values)) / mean_v, 4),
        "slope_share_over_half": round(slope_s * span_s / mean_v, 4),
    }


def child_pids(pid: int) -> list[int]:
    """The live children of ``pid`` (the worker processes of ``crawler run --workers``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid:
            found.append(int(entry.name))
    return found


def crawl_logs(run_dir: Path) -> list[Path]:
    """crawl.log of a run: its own, or those of its workers (``--workers``)."""
    own = run_dir / "logs" / "crawl.log"
    return [own] if own.exists() else sorted(run_dir.glob("workers/*/logs/crawl.log"))


def progress_of(run_dir: Path) -> dict[str, int]:
    """discovered, queued, downloaded of the run's last progress line (with workers, whose
    lines give the shared frontier's discovered and queued: the largest of those and the sum
    of what each downloaded)."""
    own = run_dir / "logs" / "progress-statistics.log"
    if own.exists():
        return politeness.last_progress(own)
    rows = [
        politeness.last_progress(p)
        for p in sorted(run_dir.glob("workers/*/logs/progress-statistics.log"))
    ]
    rows = [r for r in rows if r]
    if not rows:
        return {}
    return {
        "discovered": max(r["discovered"] for r in rows),
        "queued": max(r["queued"] for r in rows),
        "downloaded": sum(r["downloaded"] for r in rows),
    }


def count_lines(path: Path, state: dict[str, int]) -> int:
    """Lines of ``path`` so far (incremental: ``state`` keeps the offset and count)."""
    try:
        with path.open("rb") as fh:
            fh.seek(state.get("offset", 0))
            data = fh.read()
    except OSError:
        return state.get("lines", 0)
    cut = data.rfind(b"\n") + 1
    state["offset"] = state.get("offset", 0) + cut
    state["lines"] = state.get("lines", 0) + data[:cut].count(b"\n")
    return state["lines"]


def probe_chains(source: Path) -> dict[str, Any]:
    """The default order's chains with a :mod:`cpu_probe` at the head of each chain and one at
    the end of the post chain (``stage: end``)."""
    default = yaml.safe_load((source / "conf" / "default-order.yaml").read_text())
    chains: dict[str, Any] = {}
    for name, procs in default["chains"].items():
        probe = {"name": f"cpu_probe_{name}", "class": "cpu_probe.CpuProbe"}
        chains[name] = [probe | {"params": {"stage": name}}, *procs]
    end = {"name": "cpu_probe_end", "class": "cpu_probe.CpuProbe", "params": {"stage": "end"}}
    chains["post"].append(end)
    return chains


def crawler_argv(
    args: argparse.Namespace, job: Path, run_dir: Path, source: Path, redis_url: str = ""
) -> list[str]:
    argv = [
        str(ROOT / ".venv" / "bin" / "python"), "-m", "crawler", "run", str(job / "order.yaml"),
        "--set", f"toe_threads={args.threads}",
        "--set", f"limits.max_time_s={int(args.minutes * 60)}",
        "--set", f'chains.fetch.fetch_dns.params.nameservers=["127.0.0.1:{args.dns_port}"]',
        "--set", "scope.8.params.max_uris_per_template=0",
        "--set", f"frontier.politeness.min_delay_ms={args.min_delay_ms}",
        "--set", f"frontier.politeness.max_delay_ms={args.max_delay_ms}",
        "--set", f"frontier.politeness.delay_factor={args.delay_factor}",
        "--set", f"chains.fetch.fetch_http.params.keepalive_expiry_s={args.keepalive_s}",
        "--set", f"chains.fetch.fetch_http.params.max_connections={args.max_connections}",
        "--run-dir", str(run_dir),
    ]  # fmt: skip
    if args.workers:
        store = {"class": "crawler.frontier.RedisQueueStore", "params": {"url": redis_url}}
        argv += ["--workers", str(args.workers), "--set", f"frontier.store={json.dumps(store)}"]
    for item in args.set or []:
        argv += ["--set", item]
    return argv


def run(args: argparse.Namespace) -> dict[str, Any]:
    OUT.mkdir(parents=True, exist_ok=True)
    web = OUT / f"web-{args.hosts}x{args.pages}"
    truth = gen_web.generate(web, args.hosts, args.pages, args.port)
    certs = services.make_certificates(OUT / "tls")
    nginx = services.Nginx(OUT / "nginx", web, args.port, certs, workers=args.nginx_workers)
    dnsmasq = services.Dnsmasq(OUT / "dnsmasq", args.dns_port)
    job = OUT / f"job-{args.label}"
    run_dir = job / "run"
    shutil.rmtree(job, ignore_errors=True)
    job.mkdir(parents=True)
    shutil.copy(HERE / "order.yaml", job / "order.yaml")
    source = Path(args.source).resolve()
    if args.cpu_probe:
        with (job / "order.yaml").open("a") as fh:
            fh.write("\n# run_web.py --cpu-probe: the toe threads' CPU by kind and stage\n")
            fh.write(yaml.safe_dump({"chains": probe_chains(source)}, sort_keys=False))
    hosts = args.seed_hosts or args.hosts
    (job / "seeds.txt").write_text(
        "".join(f"https://{gen_web.host_label(i)}.web.test:{args.port}/\n" for i in range(hosts))
    )
    redis = (
        services.Redis(OUT / f"redis-{args.label}", unix=args.redis_unix) if args.workers else None
    )
    python = str(ROOT / ".venv" / "bin" / "python")  # the crawl's interpreter
    machine_before = yardstick.measure(python)  # the machine idle: nothing started yet
    nginx.start()
    dnsmasq.start()
    samples: list[dict[str, float]] = []
    env = dict(os.environ, PYTHONPATH=f"{source}{os.pathsep}{HERE}")
    env.update(item.split("=", 1) for item in args.env or [])
    redis_memory = peak_redis_memory = 0
    try:
        if redis is not None:
            redis.start()
        argv = crawler_argv(args, job, run_dir, source, redis.url if redis is not None else "")
        if args.tracemalloc:
            # The same command line under tracemalloc: what grows, in job/memtrace/memtrace.txt.
            argv[1:3] = [
                str(HERE / "memtrace.py"),
                str(job / "memtrace"),
                str(args.tracemalloc),
                str(args.tracemalloc_frames),
                "--",
            ]
        started = time.monotonic()
        ng0, dm0, rd0 = nginx.cpu_s(), dnsmasq.cpu_s(), redis.cpu_s() if redis else 0.0
        with (job / "crawler.out").open("wb") as out:
            proc = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True, env=env, cwd=job,
            )  # fmt: skip
        if args.profile:
            spy = ROOT / ".bench-venv" / "bin" / "py-spy"
            profiler = subprocess.Popen(
                [str(spy), "record", "--pid", str(proc.pid), "--rate", "50", "--format", "raw",
                 "--gil", "--nonblocking", "--duration", str(int(args.minutes * 60)),
                 "--output", str(OUT / f"profile-{args.label}.txt"),
                 *(["--subprocesses"] if args.workers else [])],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
        lines_state: dict[Path, dict[str, int]] = {}
        peak_rss = 0.0
        usage = None
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            rss, cpu = tree_sum(proc.pid, proc_rss_cpu)
            faults, sys_cpu = tree_sum(proc.pid, proc_faults_sys)
            smaps_rss, anon = tree_sum(proc.pid, proc_memory)
            switches, forced = tree_sum(proc.pid, proc_switches)
            peak_rss = max(peak_rss, rss)
            sample = {
                "t_s": round(time.monotonic() - started, 2),
                "rss_mb": round(rss, 1),
                "smaps_rss_mb": round(smaps_rss, 1),
                "anon_mb": round(anon, 1),
                "cpu_s": round(cpu, 2),
                "sys_cpu_s": round(sys_cpu, 2),
                "minflt": int(faults),
                "vcsw": int(switches),
                "nvcsw": int(forced),
                "nginx_cpu_s": round(nginx.cpu_s() - ng0, 2),
                "dnsmasq_cpu_s": round(dnsmasq.cpu_s() - dm0, 2),
                "crawl_log_lines": sum(
                    count_lines(log, lines_state.setdefault(log, {})) for log in crawl_logs(run_dir)
                ),
                "state_bytes": dir_bytes(run_dir / "state")
                + sum(dir_bytes(d) for d in run_dir.glob("workers/*/state")),
                "load_1m": os.getloadavg()[0],
            }
            if redis is not None:
                redis_memory = redis.used_memory() or redis_memory
                peak_redis_memory = max(peak_redis_memory, redis_memory)
                sample["redis_used_memory"] = redis_memory
                sample["redis_cpu_s"] = round(redis.cpu_s() - rd0, 2)
            samples.append(sample)
            if time.monotonic() - started > args.minutes * 60 + 300:
                os.killpg(proc.pid, signal.SIGKILL)
            time.sleep(args.sample_s)
        wall = time.monotonic() - started
        if args.profile:
            profiler.wait(60)
        nginx_cpu, dnsmasq_cpu = nginx.cpu_s() - ng0, dnsmasq.cpu_s() - dm0
        redis_cpu = redis.cpu_s() - rd0 if redis is not None else 0.0
        if redis is not None:
            redis_memory = redis.used_memory() or redis_memory
    finally:
        nginx.stop()
        dnsmasq.stop()
        if redis is not None:
            redis.stop()
    assert usage is not None
    machine_after = yardstick.measure(python)  # every process of the run stopped
    connections = services.connection_counts(nginx.access_log)
    logs = crawl_logs(run_dir)
    if not logs:
        tail = (job / "crawler.out").read_text(errors="replace")[-3000:]
        raise SystemExit(f"the crawler wrote no crawl.log; its output ends:\n{tail}")
    state = run_dir / "state"
    rotations = politeness.rotations_of([p.with_name("crawler.jsonl") for p in logs])
    report = politeness.analyse(
        logs, args.delay_factor, args.min_delay_ms, args.max_delay_ms, rotations
    )
    progress = progress_of(run_dir)
    fetches = report["fetches"]
    # The launcher's usage includes its workers': it waits for each of them.
    cpu_s = usage.ru_utime + usage.ru_stime
    rates = [
        (b["crawl_log_lines"] - a["crawl_log_lines"]) / max(1e-6, b["t_s"] - a["t_s"])
        for a, b in itertools.pairwise(samples)
        if a["t_s"] >= 60
    ]
    result: dict[str, Any] = {
        "label": args.label,
        "source": str(source),
        "config": {k: v for k, v in vars(args).items() if k != "set"} | {"set": args.set},
        "truth": truth,
        "wall_s": round(wall, 1),
        "exit_code": os.waitstatus_to_exitcode(status),
        "fetches": fetches,
        "pages_per_s_mean": round(fetches / wall, 1),
        "pages_per_s_sustained": round(statistics.median(rates), 1) if rates else None,
        "cpu_s": round(cpu_s, 1),
        "cpu_ms_per_fetch": round(1000 * cpu_s / max(1, fetches), 3),
        "nginx_cpu_ms_per_fetch": round(1000 * nginx_cpu / max(1, fetches), 3),
        "yardstick": {"before": machine_before, "after": machine_after},
        "dnsmasq_cpu_s": round(dnsmasq_cpu, 2),
        "workers": args.workers,
        "redis_cpu_ms_per_fetch": round(1000 * redis_cpu / max(1, fetches), 3),
        "redis_used_memory": redis_memory,
        "redis_peak_used_memory": peak_redis_memory,
        "peak_rss_mb": round(max(peak_rss, usage.ru_maxrss / 1024), 1),
        "final_rss_mb": next((s["rss_mb"] for s in reversed(samples) if s["rss_mb"]), None),
        "memory_last_half": {
            "rss": memory_trend(samples, "smaps_rss_mb", args.minutes * 60),
            "anon": memory_trend(samples, "anon_mb", args.minutes * 60),
        },
        "discovered": progress.get("discovered"),
        "queued": progress.get("queued"),
        "downloaded": progress.get("downloaded"),
        "state_bytes": {
            "uniq": dir_bytes(state / "uniq"),
            "frontier": dir_bytes(state / "frontier"),
            "history": dir_bytes(state / "history"),
            "all": dir_bytes(state),
        },
        "warc_bytes": dir_bytes(run_dir / "warcs"),
        "nginx_connections": connections,
        "politeness": report["politeness"],
        "politeness_in_rotation": report["in_rotation"],
        "politeness_returned": report["returned"],
        "politeness_rotated": report["rotated"],
        "statuses": report["statuses"],
        "mimes": report["mimes"],
        "html_pages_per_s_mean": round(report["mimes"].get("text/html", 0) / wall, 1),
        "hosts_fetched": report["hosts"],
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "load_avg_at_end": os.getloadavg(),
        },
        "samples": samples,
    }
    disc, queued = result["discovered"] or 0, result["queued"] or 0
    sb = result["state_bytes"]
    if args.workers:
        # The seen set and the frontier are in Redis; state/ holds each worker's history.
        sb["all"] = sum(dir_bytes(d) for d in run_dir.glob("workers/*/state"))
        result["bytes_per_seen_url"] = None
        result["bytes_per_queued_url"] = None
        result["redis_bytes_per_discovered_url"] = round(redis_memory / max(1, disc), 1)
    else:
        result["bytes_per_seen_url"] = round(sb["uniq"] / max(1, disc), 1)
        result["bytes_per_queued_url"] = (
            round(sb["frontier"] / max(1, queued), 1) if queued else None
        )
    result["state_bytes_per_discovered_url"] = round(sb["all"] / max(1, disc), 1)
    probes = [
        run_dir / "logs" / "cpu-by-kind.json",
        *run_dir.glob("workers/*/logs/cpu-by-kind.json"),
    ]
    result["cpu_by_kind"] = cpu_by_kind.summarize(cpu_by_kind.load(probes))
    if not args.keep:
        shutil.rmtree(run_dir / "warcs", ignore_errors=True)
        for warcs in run_dir.glob("workers/*/warcs"):
            shutil.rmtree(warcs, ignore_errors=True)
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10.0, help="crawl time (limits.max_time_s)")
    ap.add_argument("--hosts", type=int, default=10_000, help="hosts of the web")
    ap.add_argument("--seed-hosts", type=int, default=0, help="hosts seeded (default: all)")
    ap.add_argument("--pages", type=int, default=100, help="pages per host")
    ap.add_argument("--threads", type=int, default=300, help="toe threads (per worker)")
    ap.add_argument(
        "--workers",
        type=int,
        default=0,
        help="N worker processes sharing a frontier in a redis-server started here (0: one "
        "process, the LevelDB frontier)",
    )
    ap.add_argument(
        "--redis-unix",
        action="store_true",
        help="with --workers: the workers reach the redis-server by a Unix socket, not TCP",
    )
    ap.add_argument("--min-delay-ms", type=int, default=1000)
    ap.add_argument("--max-delay-ms", type=int, default=3000)
    ap.add_argument("--delay-factor", type=float, default=100.0)
    ap.add_argument("--keepalive-s", type=float, default=30.0, help="FetchHTTP keepalive_expiry_s")
    ap.add_argument(
        "--max-connections",
        type=int,
        default=0,
        help="FetchHTTP max_connections (0, the default: one per toe thread, and the idle "
        "pool follows the hosts in rotation; N: N, and a fixed idle pool of 4N)",
    )
    ap.add_argument("--port", type=int, default=8443, help="nginx's TLS port")
    ap.add_argument("--dns-port", type=int, default=5353, help="dnsmasq's port")
    ap.add_argument("--nginx-workers", type=int, default=2)
    ap.add_argument("--sample-s", type=float, default=5.0)
    ap.add_argument("--label", default="this")
    ap.add_argument("--source", default=str(ROOT), help="crawler checkout to run (PYTHONPATH)")
    ap.add_argument("--profile", action="store_true", help="py-spy record (raw) the crawl")
    ap.add_argument("--keep", action="store_true", help="keep the WARCs")
    ap.add_argument(
        "--no-cpu-probe",
        dest="cpu_probe",
        action="store_false",
        help="no CPU probes in the chains (bench/web/cpu_probe.py: CPU per fetch by kind)",
    )
    ap.add_argument("--set", action="append", help="more --set K=V for the crawler")
    ap.add_argument(
        "--tracemalloc-frames",
        type=int,
        default=1,
        help="frames per traced allocation (0: no tracing, only the sizes, at full speed)",
    )
    ap.add_argument("--env", action="append", help="NAME=VALUE in the crawler's environment")
    ap.add_argument(
        "--tracemalloc",
        type=float,
        default=0.0,
        help="every S seconds, write the source lines whose allocations grew most "
        "(bench/out/web/job-LABEL/memtrace/memtrace.txt; slows the crawl)",
    )
    ap.add_argument(
        "--out",
        default="",
        help="output directory (default bench/out/web); two runs at once "
        "need two directories and two --port/--dns-port pairs",
    )
    args = ap.parse_args()
    if args.redis_unix and not args.workers:
        ap.error("--redis-unix needs --workers N (one process uses no Redis)")
    if args.out:
        global OUT
        OUT = Path(args.out).resolve()
    result = run(args)
    path = OUT / f"results-{args.label}.json"
    path.write_text(json.dumps(result, indent=1))
    import report_web

    print(report_web.markdown([result]))
    print("\nThe machine's speed at the time of the run (bench/web/yardstick.py)\n")
    print(report_web.machine_markdown([result]))
    if result["cpu_by_kind"]:
        print("\nCPU by kind of fetch, per minute (toe threads' own CPU; bench/web/cpu_probe.py)\n")
        print(cpu_by_kind.markdown(result["cpu_by_kind"]))
    print("\nThe crawler's page faults and system CPU, per minute (/proc/PID/stat)\n")
    print(report_web.faults_markdown(result))
    report_web.plot([result], OUT / f"web-{args.label}.png")
    print(f"\nwrote {path} and {OUT / f'web-{args.label}.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
