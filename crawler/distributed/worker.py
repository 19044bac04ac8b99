"""A worker of a distributed crawl: ``crawler worker ORDER --redis URL`` (also what the launcher
of ``crawler run --workers N`` starts, with ``--worker-id``, ``--crawl-id`` and ``--run-dir``).

:func:`worker_main` joins the running crawl of the order's name, from this or another machine,
loads the order again with the overrides that attach it to the crawl
(:func:`~crawler.distributed.overrides.worker_overrides`; ``pause_at_start`` when the crawl is
paused), pins its CPUs and runs a :class:`~crawler.control.controller.CrawlController` until the
shared frontier is empty. With ``crawl_id`` it refuses to join a later crawl of the same name.

:class:`ControlFollower`, a daemon thread beside the crawl, applies the crawl-wide control state
(pause, unpause, terminate, set through Redis by any machine) to the controller every
:data:`CONTROL_POLL_S` and publishes this worker's heartbeat (state, counts, busy threads) for
``crawler status``; it also adds the seeds other workers discovered (a seed's redirect target,
listed in Redis) to this worker's scope, so a page under such a seed is scoped alike whichever
worker fetches it. It also puts in force the crawl-wide sheets (a Redis key and its version,
published by any worker that took a ``*.sheets`` action file, or by ``crawler sheets``), so a
change reaches every worker within :data:`CONTROL_POLL_S`. A Redis outage keeps the current
state; the next beat catches up.

Thread-safety: the follower only calls the controller's thread-safe operator methods.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from crawler.control import affinity
from crawler.control.controller import CrawlController, new_run_dir
from crawler.distributed.overrides import worker_overrides
from crawler.exit_code import ExitCode
from crawler.frontier.frontier import FrontierStateError
from crawler.frontier.redis.redis_conn import RedisUnavailableError
from crawler.frontier.redis.redis_frontier import RedisFrontier
from crawler.frontier.redis.redis_registry import CrawlRegistry, CrawlRegistryError
from crawler.metrics.worker_metrics import worker_families
from crawler.order.errors import OrderError
from crawler.order.loader import load_order

CONTROL_POLL_S = 0.5


LAUNCHED_OUTAGE_WAIT_S = 600.0
"""How long a worker the launcher started waits for an unreachable Redis at start (the default
``frontier.store.params.outage_timeout_s`` of running workers)."""


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
        # A worker the launcher started joins a crawl whose Redis answered it a moment ago: it
        # waits out a restart, as running workers do. Joined by hand, a wrong URL fails at once.
        registry = CrawlRegistry(
            redis_url, outage_timeout_s=LAUNCHED_OUTAGE_WAIT_S if crawl_id is not None else 0.0
        )
        entry = registry.join(order.name)
    except OrderError as error:
        print(str(error), file=err)
        return ExitCode.USAGE
    except (RedisUnavailableError, CrawlRegistryError) as exc:
        print(f"cannot join the crawl: {exc}", file=err)
        return ExitCode.FAILED
    if crawl_id is not None and entry.crawl_id != crawl_id:
        print(f"crawl {crawl_id} of {order.name!r} is over (now {entry.crawl_id})", file=err)
        return ExitCode.FAILED
    wid = worker_id or f"{socket.gethostname()}-{os.getpid()}"
    extra = worker_overrides(order, redis_url, entry.namespace, wid)
    if registry.control(entry.namespace) == "PAUSED":
        extra.append("pause_at_start=true")  # joining a paused crawl: stay paused
    try:
        order = load_order(order_path, [*sets, *extra])
        affinity.apply(order.cpu_affinity)
    except OrderError as error:
        print(str(error), file=err)
        return ExitCode.USAGE
    try:
        if run_dir is None:
            run_dir = new_run_dir(order_path.resolve().parent / "workers" / wid)
        run_dir.mkdir(parents=True, exist_ok=True)
        print(run_dir, file=out, flush=True)
        controller = CrawlController(order, run_dir)
        ns = entry.namespace
        seeds = controller.seed_module
        seeds.publish = lambda uri, via: registry.add_seed(ns, uri, via)
        seeds.fetch_shared = lambda start: registry.seeds_since(ns, start)
        controller.publish_sheets = lambda text: _publish(registry, ns, text)
        keeper = ControlFollower(registry, entry.namespace, wid, controller)
        keeper.start()
        try:
            code = controller.run()
        finally:
            keeper.stop()
    except (FrontierStateError, OSError) as exc:
        print(f"cannot open the crawl's state: {exc}", file=err)
        return ExitCode.FAILED
    except OrderError as error:
        print(str(error), file=err)
        return ExitCode.USAGE
    print(f"{controller.exit_status}", file=out)
    return code


def _publish(registry: CrawlRegistry, ns: str, text: str) -> None:
    registry.publish_sheets(ns, text)


class ControlFollower(threading.Thread):
    """Applies the crawl-wide control state to one worker's controller; sends heartbeats."""

    def __init__(
        self, registry: CrawlRegistry, ns: str, wid: str, controller: CrawlController
    ) -> None:
        super().__init__(name="crawl-control", daemon=True)
        self.registry, self.ns, self.wid, self.controller = registry, ns, wid, controller
        self._stop_event = threading.Event()
        self.sheets_version = 0
        self._metrics_added = False

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
            elif wish == "RUNNING" and "operator" in c.pause_reasons:
                # Only the operator's pause: a worker whose disk guard paused it stays paused.
                c.unpause("operator")
            self._follow_seeds()
            self.follow_sheets()
            self._beat()
            self._add_metrics()
            if self._stop_event.wait(CONTROL_POLL_S):
                return

    def _follow_seeds(self) -> None:
        """Add the seeds other workers discovered (seeds' redirects) to this worker's scope."""
        c = self.controller
        if c.state in ("NASCENT", "PREPARING"):
            return  # the seed module loads its seeds first
        with contextlib.suppress(Exception):  # Redis away: the next poll catches up
            c.seed_module.catch_up()

    def follow_sheets(self) -> None:
        """Put the crawl-wide sheets in force when their version changed (any worker's action
        file, ``crawler sheets``); an invalid document is logged and skipped."""
        try:
            version, document = self.registry.sheets(self.ns)
        except Exception:  # noqa: BLE001 - Redis away: the next poll catches up
            return
        if version <= self.sheets_version:
            return
        self.sheets_version = version
        try:
            self.controller.replace_sheets(document, f"redis sheets v{version}")
        except OrderError as exc:
            self.controller.logger.error("sheets_rejected", version=version, error=str(exc))

    def _add_metrics(self) -> None:
        """Once the crawl serves metrics: every worker's heartbeat age there too, and once the
        shared frontier is open, the leases each holds."""
        metrics = self.controller.metrics
        if self._metrics_added or metrics is None:
            return
        self._metrics_added = True
        registry, ns, controller = self.registry, self.ns, self.controller

        def families() -> list[Any]:
            frontier = controller.frontier  # None until the crawl has built it, and after
            leases = frontier.worker_leases() if isinstance(frontier, RedisFrontier) else None
            return worker_families(registry.workers(ns), leases=leases)

        metrics.collector.add_source(families)

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
