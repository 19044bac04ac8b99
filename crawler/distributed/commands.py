"""The operator's commands on a distributed run directory (one with ``distributed.json``):
``crawler status|pause|unpause|terminate|report RUN_DIR``.

* :func:`cmd_status`: crawl-wide status read from Redis: the registry's state and control
  state, the shared frontier's counts (every shard's counters, the uniq filter's size) and
  every worker's last heartbeat; ``--json`` prints the document.
* :func:`cmd_control`: sets the crawl-wide control state in Redis (every worker, on any
  machine, follows it) and waits up to ``wait_s`` for every live worker to report the new state.
* :func:`cmd_report`: writes the crawl-wide ``RUN_DIR/reports/`` from every worker's run
  directory here and those given with ``--include`` (:mod:`crawler.reports.merged`).

Exit codes as the CLI's: 0 done, 1 Redis unreachable or not done in time, 2 not a distributed
run directory or bad arguments. Each call opens its own connections; thread-safe.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from crawler.distributed.run_info import DISTRIBUTED_FILE, distributed_info
from crawler.exit_code import ExitCode
from crawler.frontier.redis.redis_conn import RedisUnavailableError
from crawler.frontier.redis.redis_registry import CrawlRegistry
from crawler.reports import write_reports
from crawler.reports.merged import merged_reports, worker_dirs

_CONTROL_WAIT = {"pause": "PAUSED", "unpause": "RUNNING", "terminate": "STOP"}


def cmd_status(run_dir: Path, as_json: bool, out: TextIO, err: TextIO) -> int:
    """Crawl-wide status of a distributed run: control state, shared counts, every worker."""
    info = distributed_info(run_dir)
    if info is None:
        print(f"{run_dir} is not a distributed crawl (no {DISTRIBUTED_FILE})", file=err)
        return ExitCode.USAGE
    try:
        registry = CrawlRegistry(info["redis_url"])
        doc = _status_doc(registry, info)
    except RedisUnavailableError as exc:
        print(f"cannot read the crawl's status: {exc}", file=err)
        return ExitCode.FAILED
    if as_json:
        print(json.dumps(doc, indent=1), file=out)
        return ExitCode.OK
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
    return ExitCode.OK


def _status_doc(registry: CrawlRegistry, info: dict[str, Any]) -> dict[str, Any]:
    from crawler.frontier.redis.redis_store import RedisQueueStore, RedisQueueStoreParams
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
        return ExitCode.USAGE
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
                return ExitCode.OK
            if time.monotonic() >= deadline:
                states = ", ".join(
                    [f"{k}={w.get('state')}" for k, w in alive.items()]
                    + [f"{k}=not reporting" for k in late]
                )
                print(f"{kind}: asked; not all workers there yet ({states})", file=out)
                return ExitCode.FAILED
            time.sleep(0.2)
    except RedisUnavailableError as exc:
        print(f"cannot reach the crawl: {exc}", file=err)
        return ExitCode.FAILED


def cmd_report(run_dir: Path, include: Sequence[Path], out: TextIO, err: TextIO) -> int:
    """``crawler report RUN_DIR [--include DIR...]`` for a distributed run: write the crawl-wide
    ``RUN_DIR/reports/`` from every worker's directory here (and ``include``: directories of
    workers that ran on other machines, copied here); print the crawl report."""
    info = distributed_info(run_dir)
    if info is None:
        print(f"{run_dir} is not a distributed crawl (no {DISTRIBUTED_FILE})", file=err)
        return ExitCode.USAGE
    missing = [str(d) for d in include if not d.is_dir()]
    if missing:
        print(f"not a directory: {', '.join(missing)}", file=err)
        return ExitCode.USAGE
    if not worker_dirs(run_dir, include):
        print(f"{run_dir}: no worker run directories (workers/*/logs)", file=err)
        return ExitCode.FAILED
    texts = merged_reports(run_dir, include, name=str(info.get("name") or run_dir.name))
    write_reports(run_dir / "reports", texts)
    out.write(texts["crawl-report.txt"])
    change_report(run_dir, include, out, err)
    return ExitCode.OK


def change_report(run_dir: Path, include: Sequence[Path], out: TextIO, err: TextIO) -> None:
    """The crawl-wide change report of a distributed run (every worker's history against the
    crawl ``history.import_from`` names, :mod:`crawler.continuity.change_report`), if it
    imported one; a failure is one line on ``err``."""
    from crawler.continuity.change_report import ChangeReportError, write_change_report

    try:
        summary = write_change_report(run_dir, include)
    except (ChangeReportError, OSError) as exc:
        print(f"cannot write the change report: {exc}", file=err)
        return
    if summary is not None:
        counts = ", ".join(f"{n} {kind}" for kind, n in summary.counts.items())
        print(f"changes since {summary.earlier}: {counts} ({summary.text_path})", file=out)
