"""Many worker processes, on one machine or many, running one crawl over a frontier in Redis.

* :func:`run_workers` (``crawler run ORDER --workers N``): registers the crawl in Redis (a fresh
  key namespace and a lock, :class:`~crawler.frontier.redis_registry.CrawlRegistry`), creates
  the run directory with ``distributed.json`` and ``workers/<id>/`` (each worker's own logs,
  crawl.log, WARCs with the worker id in their prefix, reports, status.json), starts N worker
  processes and waits for them. A first SIGINT/SIGTERM asks every worker to stop cleanly
  (through Redis, so workers on other machines stop too); a second kills this machine's.
* :func:`worker_main` (``crawler worker ORDER --redis URL``): joins the running crawl of the
  order's name, from this or another machine, and crawls until the shared frontier is empty.
  It follows the crawl-wide control state (pause, unpause, terminate) and publishes a heartbeat.
* :func:`cmd_status` / :func:`cmd_control`: ``crawler status|pause|unpause|terminate RUN_DIR``
  for a distributed run directory (one with ``distributed.json``): they act through Redis.
* :func:`cmd_report` (``crawler report RUN_DIR [--include DIR...]``) and the end of
  :func:`run_workers`: ``RUN_DIR/reports/`` covering every worker
  (:mod:`crawler.reports.merged`), each worker's own reports staying in its directory.

The order names the shared frontier with ``frontier.store: {class:
crawler.frontier.RedisQueueStore, params: {url: ...}}``; each worker gets the crawl's namespace
and its worker id as ``--set`` overrides, and a uniq filter that is not already Redis-backed is
replaced by :class:`~crawler.uniq.redis_uniq.RedisUriUniqFilter` (per-worker sets would fetch
every URI once per worker). ``python -m crawler.distributed worker ...`` is the worker's entry
point until the ``crawler`` CLI exposes it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from crawler import affinity
from crawler.controller import CrawlController, new_run_dir
from crawler.frontier.frontier import FrontierStateError
from crawler.frontier.redis_conn import RedisUnavailableError
from crawler.frontier.redis_registry import CrawlEntry, CrawlRegistry, CrawlRegistryError
from crawler.order import components
from crawler.order.errors import OrderError
from crawler.order.loader import load_order
from crawler.order.schema import CrawlOrder
from crawler.reports import write_reports
from crawler.reports.merged import merged_reports, worker_dirs

DISTRIBUTED_FILE = "distributed.json"
REDIS_STORES = ("RedisQueueStore",)
REDIS_UNIQ = "crawler.uniq.redis_uniq.RedisUriUniqFilter"
CONTROL_POLL_S = 0.5
_CONTROL_WAIT = {"pause": "PAUSED", "unpause": "RUNNING", "terminate": "STOP"}


def redis_url_of(order: CrawlOrder) -> str | None:
    """The Redis URL of the order's shared frontier store, or None if the store is not Redis."""
    spec = order.frontier.store
    if spec.class_.rsplit(".", 1)[-1] not in REDIS_STORES:
        return None
    return str(spec.params.get("url") or "redis://127.0.0.1:6379/0")


def worker_overrides(order: CrawlOrder, url: str, namespace: str, worker_id: str) -> list[str]:
    """``--set`` overrides that attach a worker to the crawl in ``namespace``."""
    q = json.dumps
    sets = [
        f"frontier.store.params.url={q(url)}",
        f"frontier.store.params.namespace={q(namespace)}",
        f"frontier.store.params.worker_id={q(worker_id)}",
    ]
    uniq = order.frontier.uniq_filter
    if uniq.class_.rsplit(".", 1)[-1] == "RedisUriUniqFilter":
        if not uniq.params.get("url"):
            sets.append(f"frontier.uniq_filter.params.url={q(url)}")
        sets.append(f"frontier.uniq_filter.params.namespace={q(namespace)}")
    else:
        spec = {"class": REDIS_UNIQ, "params": {"url": url, "namespace": namespace}}
        sets.append(f"frontier.uniq_filter={q(spec)}")
    for proc in order.chains.write:
        prefix = proc.params.get("prefix")
        if prefix is None:
            try:
                model = components.params_model_for(
                    components.resolve_class(proc.class_, None, "chains.write"), None
                )
            except OrderError:
                continue
            field = model.model_fields.get("prefix")
            prefix = field.default if field is not None else None
        if isinstance(prefix, str):
            sets.append(f"chains.write.{proc.name}.params.prefix={q(f'{prefix}-{worker_id}')}")
    return sets


# ---------------------------------------------------------------------------- launcher
def run_workers(
    order_path: Path,
    sets: Sequence[str],
    workers: int,
    out: TextIO,
    err: TextIO,
    *,
    run_dir: Path | None = None,
) -> int:
    """Start a distributed crawl with ``workers`` processes here; returns the exit code."""
    try:
        order = load_order(order_path, sets)
    except OrderError as error:
        print(str(error), file=err)
        return 2
    try:
        cpus = affinity.plan(order.cpu_affinity, workers)
    except affinity.CpuAffinityError as exc:
        print(f"invalid crawl order: {exc}", file=err)
        return 2
    url = redis_url_of(order)
    if url is None or workers < 1:
        print(
            "--workers needs a shared frontier: set frontier.store.class to "
            "crawler.frontier.RedisQueueStore (params: {url: redis://HOST:6379/0})",
            file=err,
        )
        return 2
    try:
        registry = CrawlRegistry(url)
        entry = registry.start(order.name)
    except (RedisUnavailableError, CrawlRegistryError) as exc:
        print(f"cannot start the crawl: {exc}", file=err)
        return 1
    if run_dir is None:
        run_dir = new_run_dir(order_path.resolve().parent)
    run_dir.mkdir(parents=True, exist_ok=True)
    ids = [f"w{i:02d}" for i in range(1, workers + 1)]
    info = {
        "name": order.name,
        "redis_url": url,
        "namespace": entry.namespace,
        "crawl_id": entry.crawl_id,
        "workers": ids,
        "host": socket.gethostname(),
    }
    (run_dir / DISTRIBUTED_FILE).write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    print(run_dir, file=out, flush=True)
    print(
        f"crawl {order.name!r} id {entry.crawl_id} on {len(ids)} workers; others may join with "
        f"`crawler worker {order_path} --redis {url}`",
        file=out,
        flush=True,
    )
    procs = []
    for i, wid in enumerate(ids):
        # Each worker on CPUs of its own (the plan's), else where the OS puts it.
        pin = [f"cpu_affinity={json.dumps(cpus[i])}"] if cpus else []
        procs.append(_spawn(order_path, [*sets, *pin], url, entry, wid, run_dir))
    code = _supervise(procs, registry, order.name, entry)
    registry.end(order.name, entry)
    registry.close()
    _print_totals(run_dir, ids, out)
    try:
        write_reports(run_dir / "reports", merged_reports(run_dir, name=order.name))
        print(f"crawl-wide reports: {run_dir / 'reports'}", file=out)
    except OSError as exc:
        print(f"cannot write the crawl-wide reports: {exc}", file=err)
    return code


def _spawn(
    order_path: Path, sets: Sequence[str], url: str, entry: CrawlEntry, wid: str, run_dir: Path
) -> subprocess.Popen[bytes]:
    wdir = run_dir / "workers" / wid
    wdir.mkdir(parents=True, exist_ok=True)
    args = [
        sys.executable,
        "-m",
        "crawler.distributed",
        "worker",
        str(order_path),
        "--redis",
        url,
        "--worker-id",
        wid,
        "--crawl-id",
        str(entry.crawl_id),
        "--run-dir",
        str(wdir),
    ]
    for item in sets:
        args += ["--set", item]
    with (run_dir / "workers" / f"{wid}.out").open("ab") as log:
        return subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)


def _supervise(
    procs: list[subprocess.Popen[bytes]], registry: CrawlRegistry, name: str, entry: CrawlEntry
) -> int:
    signals = [0]

    def on_signal(signum: int, frame: FrameType | None) -> None:
        signals[0] += 1
        if signals[0] == 1:
            with contextlib.suppress(Exception):
                registry.set_control(entry.namespace, "STOP")
            for proc in procs:
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
        else:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()

    previous: dict[signal.Signals, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, on_signal)
    try:
        while any(proc.poll() is None for proc in procs):
            # A Redis outage: the workers wait it out too; the lock is renewed after it.
            with contextlib.suppress(Exception):
                registry.keep_lock(name)
            time.sleep(1.0)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    codes = [proc.returncode for proc in procs]
    return 0 if all(c == 0 for c in codes) else 1


def _print_totals(run_dir: Path, ids: list[str], out: TextIO) -> None:
    total = ok = 0
    for wid in ids:
        log = run_dir / "workers" / wid / "logs" / "crawl.log"
        if not log.exists():
            continue
        with log.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                parts = line.split(None, 2)
                if len(parts) >= 2:
                    total += 1
                    ok += parts[1].lstrip("-").isdigit() and int(parts[1]) > 0
    print(f"URIs logged by {len(ids)} workers: {total} ({ok} downloaded)", file=out)
    print(f"worker logs and WARCs: {run_dir / 'workers'}", file=out)


# ---------------------------------------------------------------------------- worker
def worker_main(
    order_path: Path,
    redis_url: str,
    sets: Sequence[str],
    out: TextIO,
    err: TextIO,
    *,
    worker_id: str | None = None,
    run_dir: Path | None = None,
    crawl_id: int | None = None,
) -> int:
    """Join the running crawl of ``order_path``'s name through ``redis_url``; crawl until done."""
    try:
        order = load_order(order_path, sets)
        registry = CrawlRegistry(redis_url)
        entry = registry.join(order.name)
    except OrderError as error:
        print(str(error), file=err)
        return 2
    except (RedisUnavailableError, CrawlRegistryError) as exc:
        print(f"cannot join the crawl: {exc}", file=err)
        return 1
    if crawl_id is not None and entry.crawl_id != crawl_id:
        print(f"crawl {crawl_id} of {order.name!r} is over (now {entry.crawl_id})", file=err)
        return 1
    wid = worker_id or f"{socket.gethostname()}-{os.getpid()}"
    extra = worker_overrides(order, redis_url, entry.namespace, wid)
    if registry.control(entry.namespace) == "PAUSED":
        extra.append("pause_at_start=true")  # joining a paused crawl: stay paused
    try:
        order = load_order(order_path, [*sets, *extra])
    except OrderError as error:
        print(str(error), file=err)
        return 2
    try:
        affinity.apply(order.cpu_affinity)
    except affinity.CpuAffinityError as exc:
        print(f"invalid crawl order: {exc}", file=err)
        return 2
    if run_dir is None:
        run_dir = new_run_dir(order_path.resolve().parent / "workers" / wid)
    run_dir.mkdir(parents=True, exist_ok=True)
    print(run_dir, file=out, flush=True)
    try:
        controller = CrawlController(order, run_dir)
        keeper = _ControlFollower(registry, entry.namespace, wid, controller)
        keeper.start()
        try:
            code = controller.run()
        finally:
            keeper.stop()
    except FrontierStateError as exc:
        print(f"cannot open the crawl's state: {exc}", file=err)
        return 1
    except OrderError as error:
        print(str(error), file=err)
        return 2
    print(f"{controller.exit_status}", file=out)
    return code


class _ControlFollower(threading.Thread):
    """Applies the crawl-wide control state to one worker's controller; sends heartbeats."""

    def __init__(
        self, registry: CrawlRegistry, ns: str, wid: str, controller: CrawlController
    ) -> None:
        super().__init__(name="crawl-control", daemon=True)
        self.registry, self.ns, self.wid, self.controller = registry, ns, wid, controller
        self._stop_event = threading.Event()

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=5)
        self._beat()

    def run(self) -> None:
        while True:
            try:
                wish = self.registry.control(self.ns)
            except Exception:  # noqa: BLE001 - Redis away: keep the current state
                wish = ""
            c = self.controller
            if wish == "STOP" and not c.stopping.is_set():
                c.request_stop("Finished - Ended by operator")
            elif wish == "PAUSED" and c.state == "RUNNING":
                c.pause()
            elif wish == "RUNNING" and c.state in ("PAUSING", "PAUSED"):
                c.unpause()
            self._beat()
            if self._stop_event.wait(CONTROL_POLL_S):
                return

    def _beat(self) -> None:
        c = self.controller
        counts = c.stats.counts()
        doc = {
            "pid": os.getpid(),
            "state": c.state,
            "run_dir": str(c.run_dir),
            "downloaded": counts.succeeded,
            "bytes": counts.bytes,
            "busy_threads": c.pool.busy_threads() if c.pool is not None else 0,
        }
        with contextlib.suppress(Exception):  # Redis away: the next beat will do
            self.registry.heartbeat(self.ns, self.wid, doc)


# ---------------------------------------------------------------------------- operator
def distributed_info(run_dir: Path) -> dict[str, Any] | None:
    """The ``distributed.json`` of a distributed run directory, or None."""
    path = run_dir / DISTRIBUTED_FILE
    if not path.is_file():
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def cmd_status(run_dir: Path, as_json: bool, out: TextIO, err: TextIO) -> int:
    """Crawl-wide status of a distributed run: control state, shared counts, every worker."""
    info = distributed_info(run_dir)
    if info is None:
        print(f"{run_dir} is not a distributed crawl (no {DISTRIBUTED_FILE})", file=err)
        return 2
    try:
        registry = CrawlRegistry(info["redis_url"])
        doc = _status_doc(registry, info)
    except RedisUnavailableError as exc:
        print(f"cannot read the crawl's status: {exc}", file=err)
        return 1
    if as_json:
        print(json.dumps(doc, indent=1), file=out)
        return 0
    f = doc["frontier"]
    print(
        f"crawl {info['name']!r} id {info['crawl_id']}: {doc['state']} (operator: "
        f"{doc['control']}); {doc['alive_workers']} of {len(doc['workers'])} workers alive",
        file=out,
    )
    print(
        f"discovered {f['discovered']}  queued {f['queued']}  in process {f['in_process']}  "
        f"succeeded {f['succeeded']}  failed {f['failed']}  disregarded {f['disregarded']}",
        file=out,
    )
    for wid, w in doc["workers"].items():
        print(
            f"  {wid:<12} {w.get('state', '?'):<9} {w.get('host', '?')}:{w.get('pid', '?')}  "
            f"downloaded {w.get('downloaded', 0)}  {'alive' if w['alive'] else 'gone'}",
            file=out,
        )
    return 0


def _status_doc(registry: CrawlRegistry, info: dict[str, Any]) -> dict[str, Any]:
    from crawler.frontier.redis_store import RedisQueueStore, RedisQueueStoreParams
    from crawler.uniq.redis_uniq import RedisUriUniqFilter, RedisUriUniqFilterParams

    ns = info["namespace"]
    shards = int(registry.client.hget(f"{ns}meta", "shards") or 16)
    store = RedisQueueStore(
        RedisQueueStoreParams(url=info["redis_url"], namespace=ns, shards=shards)
    )
    store.open(Path("."))
    uniq = RedisUriUniqFilter(RedisUriUniqFilterParams(url=info["redis_url"], namespace=ns))
    try:
        states = store.shard_states()
        try:
            uniq.open(Path("."))
            discovered = uniq.count()
        except Exception:  # noqa: BLE001 - a crawl with another uniq filter layout
            discovered = -1
    finally:
        store.close()
        uniq.close()
    keys = ("queued", "in_process", "succeeded", "failed", "disregarded", "reaped")
    frontier = {k: sum(s[k] for s in states) for k in keys} | {"discovered": discovered}
    workers = registry.workers(ns)
    entry = registry.find(info["name"])
    current = entry is not None and entry.crawl_id == info["crawl_id"]
    return {
        "name": info["name"],
        "crawl_id": info["crawl_id"],
        "state": entry.state if current and entry is not None else "FINISHED",
        "control": registry.control(ns),
        "frontier": frontier,
        "workers": workers,
        "alive_workers": sum(1 for w in workers.values() if w["alive"]),
    }


def cmd_control(kind: str, run_dir: Path, wait_s: float, out: TextIO, err: TextIO) -> int:
    """``pause``/``unpause``/``terminate`` every worker of a distributed run through Redis."""
    info = distributed_info(run_dir)
    if info is None or kind not in _CONTROL_WAIT:
        print(f"{run_dir} is not a distributed crawl (no {DISTRIBUTED_FILE})", file=err)
        return 2
    try:
        registry = CrawlRegistry(info["redis_url"])
        registry.set_control(info["namespace"], _CONTROL_WAIT[kind])
        want = {"pause": ("PAUSED",), "unpause": ("RUNNING",), "terminate": ("FINISHED",)}[kind]
        deadline = time.monotonic() + wait_s
        while True:
            seen = registry.workers(info["namespace"])
            alive = {wid: w for wid, w in seen.items() if w["alive"]}
            # A worker started here that has not reported yet is still on its way.
            late = [wid for wid in info.get("workers", []) if wid not in seen]
            if not late and all(w.get("state") in want for w in alive.values()):
                print(f"{kind}: done ({len(alive)} workers)", file=out)
                return 0
            if time.monotonic() >= deadline:
                states = ", ".join(
                    [f"{k}={w.get('state')}" for k, w in alive.items()]
                    + [f"{k}=not reporting" for k in late]
                )
                print(f"{kind}: asked; not all workers there yet ({states})", file=out)
                return 1
            time.sleep(0.2)
    except RedisUnavailableError as exc:
        print(f"cannot reach the crawl: {exc}", file=err)
        return 1


def cmd_report(run_dir: Path, include: Sequence[Path], out: TextIO, err: TextIO) -> int:
    """``crawler report RUN_DIR [--include DIR...]`` for a distributed run: write the crawl-wide
    ``RUN_DIR/reports/`` from every worker's directory here (and ``include``: directories of
    workers that ran on other machines, copied here); print the crawl report."""
    info = distributed_info(run_dir)
    if info is None:
        print(f"{run_dir} is not a distributed crawl (no {DISTRIBUTED_FILE})", file=err)
        return 2
    missing = [str(d) for d in include if not d.is_dir()]
    if missing:
        print(f"not a directory: {', '.join(missing)}", file=err)
        return 2
    if not worker_dirs(run_dir, include):
        print(f"{run_dir}: no worker run directories (workers/*/logs)", file=err)
        return 1
    texts = merged_reports(run_dir, include, name=str(info.get("name") or run_dir.name))
    write_reports(run_dir / "reports", texts)
    out.write(texts["crawl-report.txt"])
    return 0


# ---------------------------------------------------------------------------- entry point
def main(argv: Sequence[str] | None = None) -> int:
    """``python -m crawler.distributed run|worker ...`` (what the CLI's commands call)."""
    parser = argparse.ArgumentParser(prog="crawler-distributed")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="start a crawl with N worker processes on this machine")
    run.add_argument("order", type=Path)
    run.add_argument("--workers", type=int, required=True)
    run.add_argument("--run-dir", type=Path)
    run.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    work = sub.add_parser("worker", help="join a running crawl from this machine")
    work.add_argument("order", type=Path)
    work.add_argument("--redis", required=True, help="the crawl's Redis URL")
    work.add_argument("--worker-id")
    work.add_argument("--crawl-id", type=int)
    work.add_argument("--run-dir", type=Path)
    work.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    out, err = sys.stdout, sys.stderr
    if args.command == "run":
        return run_workers(args.order, args.sets, args.workers, out, err, run_dir=args.run_dir)
    return worker_main(
        args.order,
        args.redis,
        args.sets,
        out,
        err,
        worker_id=args.worker_id,
        run_dir=args.run_dir,
        crawl_id=args.crawl_id,
    )


if __name__ == "__main__":
    sys.exit(main())
