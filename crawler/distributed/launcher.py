"""The launcher of ``crawler run ORDER --workers N``: start a distributed crawl here, supervise
its worker processes, write the crawl-wide reports.

:func:`run_workers` gives the order the frontier its workers share (``frontier.class``, unless
it names one; :func:`~crawler.distributed.overrides.shared_frontier_sets`), registers the crawl in
Redis (a fresh key namespace and a lock,
:class:`~crawler.frontier.redis.redis_registry.CrawlRegistry`), creates the run directory with
``distributed.json`` and ``workers/<id>/`` (each worker's own logs, crawl.log, WARCs with the
worker id in their prefix, reports, status.json), starts N worker processes (``python -m crawler
worker ORDER --redis URL --worker-id ID --crawl-id N --run-dir DIR [--set K=V]...``, output in
``workers/<id>.out``) and waits for them, keeping the crawl's lock meanwhile. A first
SIGINT/SIGTERM asks every worker to stop cleanly (through Redis, so workers on other machines
stop too); a second kills this machine's. At the end: the crawl's end in the registry, totals
on ``out``, ``RUN_DIR/reports/`` over every worker (:mod:`crawler.reports.merged`).
The job's digest index of earlier crawls is loaded into the crawl's shared Redis index before
the workers start and the crawl's entries are copied back into it at the end
(:class:`~crawler.continuity.job_digest_index.JobDigestIndex`).

Thread-safety: one call runs one crawl; signal handlers are installed only when called from the
main thread (else the caller stops the workers itself).
"""

from __future__ import annotations

import contextlib
import json
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

from crawler.continuity.job_digest_index import JobDigestIndex, job_index_location
from crawler.continuity.redis_digest_index import RedisDigestIndex
from crawler.continuity.run_digest_index import load_imported_into
from crawler.control import affinity
from crawler.control.controller import new_run_dir
from crawler.distributed.commands import change_report
from crawler.distributed.overrides import redis_url_of, shared_frontier_sets
from crawler.distributed.run_info import write_distributed_info
from crawler.exit_code import ExitCode
from crawler.frontier.redis.redis_conn import RedisUnavailableError
from crawler.frontier.redis.redis_registry import CrawlEntry, CrawlRegistry, CrawlRegistryError
from crawler.logs.growing_file import complete_lines
from crawler.order.errors import OrderError
from crawler.order.loader import load_order
from crawler.order.preflight import load_checked_order
from crawler.order.schema import CrawlOrder
from crawler.reports import write_reports
from crawler.reports.merged import merged_reports
from crawler.schedule.previous_run import resolve_previous


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
    if workers < 1:
        print(f"--workers {workers}: give 1 or more worker processes", file=err)
        return ExitCode.USAGE
    try:
        sets = [*sets, *_shared_frontier(order_path, sets)]
        order = load_checked_order(order_path, sets).order  # every check `crawler run` makes
        cpus = affinity.plan(order.cpu_affinity, workers)
        url = redis_url_of(order)
    except OrderError as error:
        print(str(error), file=err)
        return ExitCode.USAGE
    if url is None:
        print(
            "--workers needs a shared frontier: set frontier.store.class to "
            "crawler.frontier.RedisQueueStore (params: {url: redis://HOST:6379/0})",
            file=err,
        )
        return ExitCode.USAGE
    try:
        registry = CrawlRegistry(url)
        entry = registry.start(order.name)
    except (RedisUnavailableError, CrawlRegistryError) as exc:
        print(f"cannot start the crawl: {exc}", file=err)
        return ExitCode.FAILED
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
    write_distributed_info(run_dir, info)
    print(run_dir, file=out, flush=True)
    print(
        f"crawl {order.name!r} id {entry.crawl_id} on {len(ids)} workers; others may join with "
        f"`crawler worker {order_path} --redis {url}`",
        file=out,
        flush=True,
    )
    job_digests = _load_digest_index(order, entry.namespace, run_dir, url, out, err)
    procs = []
    for i, wid in enumerate(ids):
        # Each worker on CPUs of its own (the plan's), else where the OS puts it.
        pin = [f"cpu_affinity={json.dumps(cpus[i])}"] if cpus else []
        if order.metrics.port:  # one metrics port per worker: PORT, PORT+1, ...
            pin.append(f"metrics.port={order.metrics.port + i}")
        procs.append(_spawn(order_path, [*sets, *pin], url, entry, wid, run_dir))
    code = _supervise(procs, registry, order.name, entry)
    if job_digests is not None:
        _save_digest_index(job_digests, entry.namespace, run_dir, url, out, err)
    registry.end(order.name, entry)
    registry.close()
    _print_totals(run_dir, ids, out)
    try:
        write_reports(run_dir / "reports", merged_reports(run_dir, name=order.name))
        print(f"crawl-wide reports: {run_dir / 'reports'}", file=out)
    except OSError as exc:
        print(f"cannot write the crawl-wide reports: {exc}", file=err)
    change_report(run_dir, (), out, err)
    if order.archive.wacz:  # workers leave it to this process: one package of every worker
        from crawler.archive.wacz import package_at_end

        try:
            wacz = package_at_end(run_dir, order.name, order.archive.wacz_file)
            print(f"WACZ: {wacz.path}", file=out)
        except Exception as exc:  # noqa: BLE001 - the crawl is done; say why there is no WACZ
            print(f"cannot write the WACZ package: {exc}", file=err)
    return code


def _shared_frontier(order_path: Path, sets: Sequence[str]) -> list[str]:
    """The ``--set`` giving the order the frontier its workers share (``frontier.class``), when
    its store is shared and the class it names is not; none otherwise (an invalid order or a
    store of one process is reported by the checks that follow)."""
    try:
        order = load_order(order_path, sets)
        return shared_frontier_sets(order) if redis_url_of(order) is not None else []
    except OrderError:
        return []


def _load_digest_index(
    order: CrawlOrder, namespace: str, run_dir: Path, url: str, out: TextIO, err: TextIO
) -> JobDigestIndex | None:
    """Load the job's digest index (``digest_index.job_index``) into the crawl's Redis index
    before the workers start; None when the order keeps none or it cannot be had."""
    located = job_index_location(order.digest_index.job_index, run_dir)
    if located is None or not order.history.enabled:
        return None
    job = JobDigestIndex(*located)
    try:
        shared = RedisDigestIndex.connect(url, namespace)
    except RedisUnavailableError as exc:
        print(f"digest index: {exc}", file=err)
        return None
    try:
        loaded = job.load_into(shared, run_dir, url)
        print(f"digest index: {loaded} payload(s) of earlier crawls from {job.path}", file=out)
    except OSError as exc:  # busy (another run of the job has it) or damaged
        print(f"digest index: earlier crawls' payloads not loaded: {exc}", file=err)
    imported, _ = resolve_previous(order, run_dir)
    source = imported.history.import_from
    try:
        if source:
            path = Path(order.base_dir) / Path(source).expanduser()
            loaded = load_imported_into(shared, path)
            print(f"digest index: {loaded} payload(s) of the imported crawl {path}", file=out)
    except OSError as exc:
        print(f"digest index: the imported crawl's payloads not loaded: {exc}", file=err)
    finally:
        shared.close()
    return job


def _save_digest_index(
    job: JobDigestIndex, namespace: str, run_dir: Path, url: str, out: TextIO, err: TextIO
) -> None:
    """Copy the crawl's Redis digest index into the job's, then drop the Redis keys."""
    try:
        shared = RedisDigestIndex.connect(url, namespace)
    except RedisUnavailableError as exc:
        print(f"digest index not saved (the next crawl of the job will): {exc}", file=err)
        return
    try:
        added = job.save_from(shared, run_dir)
        print(f"digest index: {added} new payload(s) saved in {job.path}", file=out)
    except (OSError, RedisUnavailableError) as exc:
        print(f"digest index not saved (the next crawl of the job will): {exc}", file=err)
    finally:
        shared.close()


def _spawn(
    order_path: Path, sets: Sequence[str], url: str, entry: CrawlEntry, wid: str, run_dir: Path
) -> subprocess.Popen[bytes]:
    wdir = run_dir / "workers" / wid
    wdir.mkdir(parents=True, exist_ok=True)
    args = [
        sys.executable,
        "-m",
        "crawler",
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
    return ExitCode.OK if all(c == ExitCode.OK for c in codes) else ExitCode.FAILED


def _print_totals(run_dir: Path, ids: list[str], out: TextIO) -> None:
    total = ok = 0
    for wid in ids:
        for line in complete_lines(run_dir / "workers" / wid / "logs" / "crawl.log"):
            parts = line.split(None, 2)
            if len(parts) >= 2:
                total += 1
                ok += parts[1].lstrip("-").isdigit() and int(parts[1]) > 0
    print(f"URIs logged by {len(ids)} workers: {total} ({ok} downloaded)", file=out)
    print(f"worker logs and WARCs: {run_dir / 'workers'}", file=out)
