"""Both cores (``make bench-workers``): one process against ``--workers 2`` on the same web.

The same crawl of the generated site (bench/crawl/gensite.py, 4 hosts served by one nginx worker,
politeness off, WARC on, a fixed number of pages) is run back to back, alternating the order of
the modes each round:

- ``single``: ``crawler run ORDER`` (the default LevelDB frontier, no Redis);
- ``redis1``: ``crawler run ORDER --workers 1`` (the Redis frontier, one worker: Redis's cost
  without a second process);
- ``redis2``: ``crawler run ORDER --workers 2`` (both cores).

Each run reports fetches/s (nginx's log: every request it answered, over the span between its
first and last), CPU-ms per fetch of every crawler process (launcher, each worker; sampled from
/proc/PID/stat every 0.2 s, the launcher's rusage of its children for the exact total), of
redis-server (``INFO cpu``) and of nginx's worker, Redis commands per fetch and which commands
dominate (``INFO commandstats``: calls per fetch, usec per call). Command counts per fetch are
deterministic; wall-clock rates are not on a shared machine: the load average is noted before
each run.

``--profile SECONDS`` adds one more run of each mode with py-spy recording one worker (``single``:
the crawl's process), from ``--profile-delay`` seconds after its start (raw collapsed stacks in
OUT_DIR/profile-MODE-{wall,gil}.txt: where the threads wait, and where the CPU goes; and a
summary of each: top leaf frames, the crawler frames that call redis-py).

Run: ``python bench/workers_scale.py [--pages 12000] [--rounds 2] [--modes single,redis1,redis2]``.
The site's ports and Redis's are free loopback ports picked at start, so two runs may go at
once (give each its own ``--out``).
Needs nginx and redis-server; py-spy from .bench-venv for ``--profile``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench" / "crawl"))
sys.path.insert(0, str(ROOT / "tests"))

from support.redis_servers import RedisServer  # noqa: E402

PORT_BASE = 18401
"""The first of the site's HOSTS ports; :func:`main` picks a free run of them on loopback."""
HOSTS = 4
PARALLEL_QUEUES = 16
TICK = os.sysconf("SC_CLK_TCK")
MODES = {"single": 0, "redis1": 1, "redis2": 2}


def free_port_run(count: int, start: int = 20000, end: int = 60000) -> int:
    """The first of ``count`` consecutive TCP ports free on 127.0.0.1 now (the generated site
    links its hosts by port number, so they must be consecutive), tried from a random place so
    two runs at once pick different ones."""
    for _ in range(200):
        base = random.randrange(start, end - count)
        socks: list[socket.socket] = []
        try:
            for port in range(base, base + count):
                sock = socket.socket()
                socks.append(sock)
                sock.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for sock in socks:
                sock.close()
    raise RuntimeError(f"no {count} consecutive free ports found in {start}-{end}")


# ------------------------------------------------------------------------ CPU from /proc
def proc_stat(pid: int) -> tuple[int, int] | None:
    """(ppid, utime + stime in ticks) of ``pid``, or None once it is gone."""
    got = proc_times(pid)
    return None if got is None else (got[0], got[1] + got[2])


def proc_times(pid: int) -> tuple[int, int, int] | None:
    """(ppid, utime, stime in ticks) of ``pid``, or None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), int(fields[11]), int(fields[12])


def role_of(pid: int) -> str:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "other"
    if b"worker" in argv and b"--worker-id" in argv:
        return "worker " + argv[argv.index(b"--worker-id") + 1].decode()
    if b"run" in argv and b"crawler" in argv:
        return "launcher"
    return "other"


class ProcessSampler(threading.Thread):
    """Polls /proc every 0.2 s for the descendants of ``root`` and keeps each one's last CPU
    ticks and role (the last < 0.2 s of a process that exits are missed; the rusage total is
    exact)."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.ticks: dict[int, int] = {}
        self.sys_ticks: dict[int, int] = {}
        self.roles: dict[int, str] = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.2):
            self.sample()

    def sample(self) -> None:
        parents: dict[int, int] = {}
        ticks: dict[int, int] = {}
        sys_ticks: dict[int, int] = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                got = proc_times(int(entry.name))
                if got is not None:
                    pid = int(entry.name)
                    parents[pid], ticks[pid], sys_ticks[pid] = got[0], got[1] + got[2], got[2]
        family = {self.root}
        grew = True
        while grew:
            grew = False
            for pid, ppid in parents.items():
                if ppid in family and pid not in family:
                    family.add(pid)
                    grew = True
        for pid in family:
            if pid in ticks:
                self.ticks[pid] = ticks[pid]
                self.sys_ticks[pid] = sys_ticks[pid]
                if pid not in self.roles:
                    self.roles[pid] = role_of(pid)

    def by_role(self, system: bool = False) -> dict[str, float]:
        """CPU seconds by role (``launcher``, ``worker w1``..., ``other``); with ``system``
        the kernel's share only."""
        out: Counter[str] = Counter()
        for pid, t in (self.sys_ticks if system else self.ticks).items():
            out[self.roles.get(pid, "other")] += t / TICK
        return dict(out)

    def stop(self) -> None:
        self.done.set()
        self.join(5)


def nginx_cpu_s(nginx: Any) -> float:
    """CPU seconds of nginx's worker processes (children of its master)."""
    master = nginx.proc.pid if nginx.proc is not None else None
    total = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            got = proc_stat(int(entry.name))
            if got is not None and got[0] == master:
                total += got[1]
    return total / TICK


# ------------------------------------------------------------------------ one crawl
STORE_PARAMS: dict[str, Any] = {}
"""More params of the RedisQueueStore (``--store-params``)."""
EXTRA_SETS: list[str] = []
"""``--set K=V`` items added to every crawl (``--crawl-set``)."""


def crawl_args(workers: int, server: RedisServer | None, run_dir: Path, threads: int) -> list[str]:
    seeds = [f"http://127.0.0.1:{PORT_BASE + h}/" for h in range(HOSTS)]
    args = [sys.executable, "-m", "crawler", "run", str(ROOT / "bench" / "crawl" / "order.yaml")]
    args += ["--run-dir", str(run_dir)]
    sets = [
        f"seeds.urls={json.dumps(seeds)}",
        "frontier.politeness.host_max_connections=0",
        f"frontier.queue_assignment.params.parallel_queues={PARALLEL_QUEUES}",
        f"toe_threads={threads}",
        "scope.8.params.max_series_length=0",  # numbered pages share one URL template per host
        f"name=workers-{workers}",
    ]
    if server is not None:
        params = {"url": server.url, **STORE_PARAMS}
        store = {"class": "crawler.frontier.RedisQueueStore", "params": params}
        sets.append(f"frontier.store={json.dumps(store)}")
        args += ["--workers", str(workers)]
    for item in sets + EXTRA_SETS:
        args += ["--set", item]
    return args


def run_crawl(
    mode: str,
    nginx: Any,
    tmp: Path,
    n: int,
    threads: int,
    profile_s: float = 0.0,
    on_server: Any = None,
    profile_delay_s: float = 15.0,
) -> dict[str, Any]:
    workers = MODES[mode]
    server = RedisServer(tmp / f"redis{n}").start() if workers else None
    if server is not None and on_server is not None:
        on_server(server)
    client = redis.Redis(port=server.port) if server is not None else None
    try:
        if client is not None:
            client.config_resetstat()
        load_before = os.getloadavg()
        nginx0 = nginx_cpu_s(nginx)
        offset = nginx.log_offset()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.Popen(
            crawl_args(workers, server, tmp / f"run{n}", threads), stdout=subprocess.DEVNULL
        )
        sampler = ProcessSampler(proc.pid)
        sampler.start()
        spy = start_profile(sampler, tmp, profile_s, mode, profile_delay_s) if profile_s else None
        rc = proc.wait()
        sampler.stop()
        if spy is not None:
            spy.wait(timeout=60)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if rc != 0:
            raise SystemExit(f"bench/workers_scale.py: the {mode} crawl exited {rc} ({tmp}/run{n})")
        total_s = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        nginx_s = nginx_cpu_s(nginx) - nginx0
        entries = nginx.read_log(offset)
        fetches = len(entries)
        span = max(e.time_s for e in entries) - min(e.time_s for e in entries)
        per = 1000 / max(1, fetches)
        row: dict[str, Any] = {
            "mode": mode,
            "fetches": fetches,
            "ok": sum(1 for e in entries if e.status == 200),
            "seconds": round(span, 2),
            "fetches_per_s": round(fetches / span, 1) if span else 0.0,
            "load_before": [round(x, 2) for x in load_before],
            "load_after": [round(x, 2) for x in os.getloadavg()],
            "cpu_ms_per_fetch": {
                "crawler_total": round(total_s * per, 3),
                **{k: round(v * per, 3) for k, v in sorted(sampler.by_role().items())},
                "nginx": round(nginx_s * per, 3),
            },
            "system_cpu_ms_per_fetch": {
                k: round(v * per, 3) for k, v in sorted(sampler.by_role(system=True).items())
            },
        }
        if client is not None:
            cpu = client.info("cpu")
            redis_s = cpu["used_cpu_sys"] + cpu["used_cpu_user"]
            row["cpu_ms_per_fetch"]["redis"] = round(redis_s * per, 3)
            row["cpu_ms_per_fetch"]["all_in"] = round((total_s + nginx_s + redis_s) * per, 3)
            stats = client.info("commandstats")
            calls = {k.removeprefix("cmdstat_"): v for k, v in stats.items()}
            row["redis_calls_per_fetch"] = round(
                sum(v["calls"] for v in calls.values()) / max(1, fetches), 2
            )
            row["redis_commands"] = {
                k: {
                    "per_fetch": round(v["calls"] / max(1, fetches), 3),
                    "usec_per_call": round(v["usec_per_call"], 2),
                    "usec_per_fetch": round(v["usec"] / max(1, fetches), 2),
                }
                for k, v in sorted(calls.items(), key=lambda kv: -kv[1]["usec"])
            }
        else:
            row["cpu_ms_per_fetch"]["all_in"] = round((total_s + nginx_s) * per, 3)
        return row
    finally:
        if client is not None:
            client.close()
        if server is not None:
            server.stop()


def py_spy() -> str | None:
    for candidate in (ROOT / ".bench-venv" / "bin" / "py-spy", shutil.which("py-spy")):
        if candidate and Path(candidate).exists():
            return str(candidate)
    return None


class Profile:
    """Two py-spy recordings of one worker at once (raw collapsed stacks): ``wall`` samples
    every thread not idle in the kernel's view (a thread blocked on a Redis reply counts: where
    the threads wait), ``gil`` only the thread holding the GIL (where the CPU goes)."""

    def __init__(self, procs: list[subprocess.Popen[bytes]]) -> None:
        self.procs = procs

    def wait(self, timeout: float) -> None:
        for proc in self.procs:
            proc.wait(timeout=timeout)


def start_profile(
    sampler: ProcessSampler, tmp: Path, seconds: float, mode: str, delay_s: float
) -> Profile | None:
    """py-spy on the first worker that appears (``single``: the crawl's process), once past its
    start-up (``delay_s``); raw stacks in ``tmp/profile-MODE-VIEW.txt``."""
    spy = py_spy()
    if spy is None:
        print("py-spy not found (.bench-venv): no profile", file=sys.stderr)
        return None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        sampler.sample()
        workers = [p for p, r in sampler.roles.items() if r.startswith("worker")]
        if not MODES[mode]:
            workers = [sampler.root]
        if workers:
            time.sleep(delay_s)  # past start-up (order, preflight) on a loaded machine
            procs = []
            for view in ("wall", "gil"):
                out = tmp / f"profile-{mode}-{view}.txt"
                args = [spy, "record", "--pid", str(min(workers)), "--duration", str(int(seconds))]
                args += ["--rate", "100", "--format", "raw", "--output", str(out), "--nonblocking"]
                args += ["--gil"] if view == "gil" else []
                procs.append(
                    subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                )
            return Profile(procs)
        time.sleep(0.1)
    return None


# ------------------------------------------------------------------------ commands sent
SCRIPT_MODULES = (
    "crawler.frontier.redis.redis_scripts",
    "crawler.frontier.redis.redis_registry",
    "crawler.frontier.policy.server_admission",
    "crawler.uniq.redis_uniq",
    "crawler.continuity.redis_digest_index",
    "crawler.tally.redis_tally_store",
)


def script_names() -> dict[bytes, str]:
    """SHA1 -> NAME of every Lua script the crawler sends (module-level string constants)."""
    import hashlib
    import importlib

    names: dict[bytes, str] = {}
    for module_name in SCRIPT_MODULES:
        module = importlib.import_module(module_name)
        short = module_name.rsplit(".", 1)[1]
        for name, value in vars(module).items():
            if isinstance(value, str) and "redis.call" in value:
                sha = hashlib.sha1(value.encode()).hexdigest().encode()
                names[sha] = f"{short}.{name.strip('_')}"
    return names


def count_commands(nginx: Any, tmp: Path, n: int, mode: str, threads: int) -> dict[str, Any]:
    """One more crawl with MONITOR on: the commands the crawler processes send (scripts' inner
    calls excluded, EVALSHA by script name) per fetch. MONITOR costs Redis CPU: this run's
    rates are not compared."""
    sys.path.insert(0, str(ROOT / "bench"))
    import scale

    counter_box: list[Any] = []

    def hook(server: RedisServer) -> None:
        counter = scale.CommandCounter(server.port)
        counter.names = script_names()
        counter.start()
        counter_box.append(counter)

    row = run_crawl(mode, nginx, tmp, n, threads, on_server=hook)
    counter_box[0].stop()
    counts: dict[str, int] = counter_box[0].counts
    per = 1 / max(1, row["fetches"])
    return {
        "mode": mode,
        "fetches": row["fetches"],
        "sent_per_fetch": round(
            sum(v for k, v in counts.items() if k not in (scale.DIGEST_FLUSH, scale.DIGEST_RIDE))
            * per,
            2,
        ),
        "by_command": {k: round(v * per, 3) for k, v in Counter(counts).most_common()},
    }


# ------------------------------------------------------------------------ profile summary
def summarize_profile(path: Path) -> dict[str, Any]:
    """Share of the worker's samples by leaf function, and of those inside redis-py by the
    crawler frames that called it (the nearest three), from py-spy's raw output."""
    total = 0
    in_redis = 0
    leaf: Counter[str] = Counter()
    callers: Counter[str] = Counter()
    for line in path.read_text().splitlines():
        stack, _, count_s = line.rpartition(" ")
        if not count_s.isdigit():
            continue
        count = int(count_s)
        frames = stack.split(";")
        total += count
        leaf[frames[-1]] += count
        first_redis = next((i for i, f in enumerate(frames) if " (redis/" in f), None)
        if first_redis is not None:
            in_redis += count
            ours = [f for f in frames[:first_redis] if " (crawler/" in f or " (processors/" in f]
            caller = " <- ".join(f.split(" (")[0] for f in reversed(ours[-3:])) or "?"
            callers[caller] += count
    pct = 100 / max(1, total)
    return {
        "samples": total,
        "in_redis_py_pct": round(in_redis * pct, 1),
        "top_leaves_pct": {k: round(v * pct, 1) for k, v in leaf.most_common(25)},
        "redis_callers_pct": {k: round(v * pct, 1) for k, v in callers.most_common(20)},
    }


# ------------------------------------------------------------------------ report
def table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| round | mode | fetches | fetches/s | load before | crawler CPU-ms/fetch (per process) "
        "| Redis | nginx | all in | Redis calls/fetch |\n|---|---|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for r in rows:
        cpu = r["cpu_ms_per_fetch"]
        procs = ", ".join(
            f"{k} {v}" for k, v in cpu.items() if k.startswith(("worker", "launcher"))
        )
        lines.append(
            f"| {r['round']} | {r['mode']} | {r['fetches']} | {r['fetches_per_s']} | "
            f"{r['load_before'][0]} | {cpu['crawler_total']} ({procs}) | {cpu.get('redis', '-')} | "
            f"{cpu['nginx']} | {cpu['all_in']} | {r.get('redis_calls_per_fetch', '-')} |"
        )
    return "\n".join(lines)


def commands_table(row: dict[str, Any], top: int = 12) -> str:
    lines = [f"{row['mode']} (round {row['round']}): command, calls/fetch, usec/call, usec/fetch"]
    for name, v in list(row["redis_commands"].items())[:top]:
        calls, usec, per = v["per_fetch"], v["usec_per_call"], v["usec_per_fetch"]
        lines.append(f"  {name:24} {calls:8} {usec:8} {per:8}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=12000, help="pages of the generated site")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=25, help="toe threads per process")
    parser.add_argument("--modes", default="single,redis1,redis2")
    parser.add_argument("--profile", type=float, default=0.0, metavar="SECONDS")
    parser.add_argument(
        "--profile-delay",
        type=float,
        default=15.0,
        metavar="SECONDS",
        help="how long after the process starts the profile begins",
    )
    parser.add_argument(
        "--crawl-set",
        action="append",
        default=[],
        metavar="K=V",
        help="an order override for every crawl (frontier.store's params: --store-params)",
    )
    parser.add_argument(
        "--store-params",
        default="{}",
        help="extra RedisQueueStore params as JSON (e.g. '{\"shards\": 1}')",
    )
    parser.add_argument(
        "--no-count", action="store_true", help="skip the MONITOR runs counting commands sent"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "workers_scale.json")
    args = parser.parse_args()
    modes = args.modes.split(",")
    EXTRA_SETS.extend(args.crawl_set)
    STORE_PARAMS.update(json.loads(args.store_params))
    for mode in modes:
        if mode not in MODES:
            parser.error(f"--modes: unknown mode {mode!r} (known: {', '.join(MODES)})")
    for tool in ("nginx", "redis-server"):
        if shutil.which(tool) is None and not Path(f"/usr/sbin/{tool}").exists():
            print(f"bench/workers_scale.py: {tool} not found", file=sys.stderr)
            return 2
    from gensite import generate
    from nginx_server import NginxServer

    global PORT_BASE
    PORT_BASE = free_port_run(HOSTS)
    rows: list[dict[str, Any]] = []
    profile: dict[str, Any] | None = None
    sent: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="workers-scale-") as tmp_s:
        tmp = Path(tmp_s)
        generate(tmp / "site", args.pages, HOSTS, PORT_BASE)
        sites = {PORT_BASE + h: tmp / "site" / f"h{h:02d}" for h in range(HOSTS)}
        nginx = NginxServer(tmp / "nginx", sites, workers=1)
        nginx.start()
        n = 0
        try:
            for rnd in range(args.rounds):
                for mode in modes if rnd % 2 == 0 else list(reversed(modes)):
                    n += 1
                    row = run_crawl(mode, nginx, tmp, n, args.threads)
                    row["round"] = rnd + 1
                    rows.append(row)
                    print(
                        f"round {rnd + 1} {mode}: {row['fetches']} fetches, "
                        f"{row['fetches_per_s']}/s, CPU-ms/fetch {row['cpu_ms_per_fetch']}, "
                        f"load {row['load_before'][0]}",
                        file=sys.stderr,
                    )
            for mode in [] if args.no_count else [m for m in modes if MODES[m]]:
                n += 1
                sent.append(count_commands(nginx, tmp, n, mode, args.threads))
            profile = {} if args.profile else None
            for mode in modes if args.profile else []:
                n += 1
                row = run_crawl(
                    mode, nginx, tmp, n, args.threads, args.profile, None, args.profile_delay
                )
                row["round"] = "profile"
                rows.append(row)
                for view in ("wall", "gil"):
                    raw = tmp / f"profile-{mode}-{view}.txt"
                    if raw.exists():
                        args.out.parent.mkdir(parents=True, exist_ok=True)
                        shutil.copy(raw, args.out.with_name(raw.name))
                        profile[f"{mode} {view}"] = summarize_profile(raw)
        finally:
            nginx.stop()
    print(table(rows))
    for row in rows:
        if "redis_commands" in row and row["round"] == 1:
            print(commands_table(row))
    for count in sent:
        print(f"{count['mode']}: commands sent per fetch {count['sent_per_fetch']}")
        for name, v in list(count["by_command"].items())[:15]:
            print(f"  {name:40} {v}")
    if profile is not None:
        print(json.dumps(profile, indent=1))
    for mode in modes:
        rates = [r["fetches_per_s"] for r in rows if r["mode"] == mode and r["round"] != "profile"]
        print(f"{mode}: fetches/s per round {rates}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    result = {"rows": rows, "sent": sent, "profile": profile}
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"results in {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
