"""CrawlController: builds a crawl from its order, runs it and ends it cleanly.

States: NASCENT → PREPARING → RUNNING ⇄ PAUSING → PAUSED → STOPPING → FINISHED (PAUSING lasts
until the URIs in process have finished). The crawl ends when the frontier is empty and no URI is
in process, when a limit is hit, or on an operator stop (first SIGINT/SIGTERM or ``crawler
terminate``: finish the URIs in process, write everything, exit 0; second signal: exit at once).

Collaborators: a :class:`~crawler.control.crawl_builder.CrawlBuilder` wires (and unwires) the
crawl's parts, a :class:`~crawler.seeds.seed_module.SeedModule` holds the seeds, a
:class:`~crawler.control.crawl_reporter.CrawlReporter` shows the crawl (progress-statistics.log,
``status.json``, display, reports), :class:`~crawler.control.stop_signals.StopSignals` takes the
signals. The per-URI paths (:meth:`schedule`, :meth:`schedule_many`, the frontier's ``on_final``)
stay here and call their targets directly. :meth:`run` is called from one thread (normally the main
thread); its loop also takes in the action directory (:mod:`crawler.control.steering`) and has the
reporter write what is due — ToeThreads never do any of that. ``pause``, ``unpause`` and
``request_stop`` may be called from any thread. Heritrix counterpart:
``org.archive.crawler.framework.CrawlController``.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from crawler.clock import Clock, SystemClock
from crawler.continuity.run_digest_index import RunDigestIndex
from crawler.control.crawl_builder import CrawlBuilder, CrawlInUseError, new_run_dir
from crawler.control.crawl_reporter import CrawlReporter
from crawler.control.steering import BLOCK_RULES_FILE, POLL_INTERVAL_S, ActionDirectory, BlockRules
from crawler.control.stop_signals import StopSignals
from crawler.control.toepool import ToePool
from crawler.curi import CrawlURI
from crawler.decide.decide_rule import DecideResult
from crawler.disk import DiskGuard
from crawler.exit_code import ExitCode
from crawler.frontier.frontier import Frontier
from crawler.frontier.frontier_abilities import FrontierAbilities
from crawler.history import CrawlHistory
from crawler.logs.applog import flush_app_logging
from crawler.logs.crawl_logs import CrawlLogs
from crawler.logs.progress import ProgressRow
from crawler.memory import HeapTrimmer
from crawler.metrics.crawl_metrics import start_crawl_metrics
from crawler.metrics.metrics_server import MetricsServer
from crawler.netguard import AddressPolicy
from crawler.order import components
from crawler.order.schema import CrawlOrder, SheetConfig
from crawler.seeds.seed_list import SeedList
from crawler.seeds.seed_module import SeedModule
from crawler.servers import ServerCache
from crawler.sheets.sheet_overlays import SheetOverlays
from crawler.sheets.sheet_updates import (
    checked_merge,
    dump_sheets,
    load_saved_sheets,
    read_sheet_document,
    save_sheets,
)
from crawler.stats import CrawlStats

if TYPE_CHECKING:
    from crawler.archive.collection_set import CollectionSet
    from crawler.cli.display import Display

__all__ = ["CrawlController", "CrawlInUseError", "new_run_dir"]

STATES = ("NASCENT", "PREPARING", "RUNNING", "PAUSING", "PAUSED", "STOPPING", "FINISHED")


class CrawlController:
    """One crawl of one order in one run directory."""

    def __init__(
        self,
        order: CrawlOrder,
        run_dir: Path,
        *,
        clock: Clock | None = None,
        install_signals: bool = True,
        resume: bool = False,
        display: Display | None = None,
    ) -> None:
        self.order = order
        self.resume = resume
        self.run_dir = run_dir
        self.clock: Clock = clock or SystemClock()
        self.install_signals = install_signals
        self.state = "NASCENT"
        self.exit_status = ""
        self.logger: Any = structlog.get_logger("crawler")
        self.stats = CrawlStats()
        self.servers = ServerCache(
            robots_max_size_bytes=order.robots.max_size_bytes,
            max_servers=order.memory.max_cached_servers,
            max_hosts=order.memory.max_cached_hosts,
        )
        self.stopping = threading.Event()
        self._stop_reason = ""
        self._state_lock = threading.Lock()
        self._sheets_lock = threading.Lock()
        self.logs: CrawlLogs | None = None
        self.frontier: Frontier | None = None
        self.frontier_abilities: FrontierAbilities | None = None  # checked once, when built
        self.pool: ToePool | None = None
        self.chains = components.build_chains(order)
        self.scope = components.build_rules(order.scope, "scope")
        self.sheets = SheetOverlays(order, load_saved_sheets(run_dir) if resume else None)
        # Set by a distributed worker: shares the sheets in force with every worker.
        self.publish_sheets: Callable[[str], None] | None = None
        # Which addresses fetches may reach: the seeds' servers join as the seeds are read.
        self.addresses = AddressPolicy(order.fetch.allow_private)
        self.seed_module = SeedModule(
            order, self.scope, self.stats, self.schedule, run_dir, self.addresses
        )
        self.seed_uris = self.seed_module.uris  # the same lists for the crawl's life
        self.seed_directives = self.seed_module.directives
        self.display = display
        self.block_rules = BlockRules(run_dir / BLOCK_RULES_FILE)
        self.actions: ActionDirectory | None = None
        self.history: CrawlHistory | None = None
        self.digest_index: RunDigestIndex | None = None
        self.collections: CollectionSet | None = None
        self._builder = CrawlBuilder(self, self._on_final, self._uri_error)
        limits = order.limits
        self.disk_guard = DiskGuard(
            [run_dir, run_dir / "warcs", run_dir / "state", run_dir / "logs"],
            min_free_mb=limits.min_free_disk_mb,
            resume_margin_mb=limits.disk_resume_margin_mb,
            check_interval_s=limits.disk_check_interval_s,
        )
        # Why the crawl is paused: "operator" (pause command, pause_at_start) and/or "disk" (the
        # guard). The crawl runs again only when no reason is left.
        self.pause_reasons: set[str] = set()
        self._pause_message = ""
        self._pause_lock = threading.RLock()  # pause/unpause come from several threads
        self.reporter = CrawlReporter(self)
        self.status = self.reporter.status  # ToeThreads note failures in it directly
        self.metrics: MetricsServer | None = None
        self.heap = HeapTrimmer(order.memory)

    @property
    def last_row(self) -> ProgressRow | None:
        """The latest row of progress-statistics.log, None before the first."""
        return self.reporter.last_row

    # ------------------------------------------------------------ lifecycle
    def _set_state(self, state: str, message: str = "") -> None:
        with self._state_lock:
            self.state = state
        self.logger.info("crawl_state", state=state, message=message, run_dir=str(self.run_dir))
        self.reporter.state_changed(state, message)

    def prepare(self) -> None:
        """Create the run's directories, open logs and frontier, start processors, add seeds."""
        self._builder.claim_run_dir()
        self.heap.start(self.clock.monotonic())  # before any crawl thread makes an arena
        self.logger = self._builder.lay_out_run_dir()
        self.metrics = start_crawl_metrics(
            self.order.metrics,
            lambda: self.reporter.last_status,
            self.stats,
            self.chains,
            self.logger,
        )
        self._set_state("PREPARING")
        self.logs = self._builder.open_logs(self.resume)
        self.reporter.publish_status()
        self.seed_module.load(self.logger, self._uri_error)
        abilities = self._builder.build_frontier()
        self.frontier, self.frontier_abilities = abilities.frontier, abilities
        self._builder.open_server_journal()
        self.actions = ActionDirectory(self.run_dir / "action", self, self.logger, self._uri_error)
        self.history = self._builder.open_history()
        self.digest_index = self._builder.open_digest_index(self.history)
        if abilities.carries is not None and self.digest_index is not None:
            carried = self.digest_index.carried_by_frontier()  # a page's entry before its links
            if carried is not None:
                abilities.carries.carry_before_queueing(carried)
        self.collections = self._builder.open_collections()
        self._builder.start_processors(abilities, self.history, self.collections)
        self.seed_module.schedule_all()
        self.logger.info(
            "crawl_prepared",
            seeds=len(self.seed_uris),
            threads=self.order.toe_threads,
            cpus=sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        )

    def _uri_error(self, base: str | None, message: str, raw: str) -> None:
        if self.logs is not None:
            self.logs.uri_error(base, message, raw, self.clock.time())

    def _on_final(self, curi: CrawlURI) -> None:
        """Final disposition of a URI: crawl.log line, statistics, free its recording."""
        now_s = self.clock.time()
        if self.logs is not None:
            self.logs.log_final(curi, now_s)
        self.stats.record_final(curi)
        if curi.status <= 0:
            self.status.note_final(curi, now_s)
        curi.close_recording()

    # ------------------------------------------------------------ steering
    def schedule(self, curi: CrawlURI) -> bool:
        """Offer ``curi`` to the frontier unless an operator block rule refuses it. Thread-safe."""
        if self.frontier is None or (
            self.block_rules.blocks(curi.uri) and not curi.hop_path.endswith("P")
        ):
            return False
        self.seed_module.stamp((curi,))
        if self.frontier.schedule(curi):
            self.stats.note_scheduled(curi.uri)
            return True
        return False

    def schedule_many(self, curis: Sequence[CrawlURI]) -> list[bool]:
        """:meth:`schedule` each of ``curis`` (one page's outlinks) in one frontier call."""
        result = [False] * len(curis)
        if self.frontier is None:
            return result
        blocks = self.block_rules.blocks
        offered = [i for i, c in enumerate(curis) if c.hop_path.endswith("P") or not blocks(c.uri)]
        if not offered:
            return result
        self.seed_module.stamp(curis)
        queued = self.frontier.schedule_many([curis[i] for i in offered])
        for i, ok in zip(offered, queued, strict=True):
            result[i] = ok
        self.stats.note_scheduled_many([c.uri for c, ok in zip(curis, result, strict=True) if ok])
        return result

    def in_scope(self, curi: CrawlURI) -> bool:
        """Whether the crawl's scope accepts ``curi``."""
        return self.scope.decide(curi) is DecideResult.ACCEPT

    def add_seeds(self, seeds: SeedList) -> int:
        """Add seeds (and scope directives) to the running crawl; returns how many were queued."""
        return self.seed_module.add(seeds)

    def add_seed(self, uri: str, via: str | None) -> bool:
        """Make ``uri`` a seed of the running crawl (a seed's redirect); see
        :meth:`SeedModule.add_discovered`. Thread-safe."""
        return self.seed_module.add_discovered(uri, via)

    def catch_up_seeds(self, curi: CrawlURI) -> None:
        """Before scoping ``curi``'s links: learn the seeds the worker that scheduled it knew
        (distributed crawls; see :meth:`SeedModule.catch_up_for`). Thread-safe."""
        self.seed_module.catch_up_for(curi)

    def add_block_rule(self, pattern: str) -> None:
        """Block queued and future URIs matching ``pattern`` (kept in block-rules.txt)."""
        self.block_rules.add(pattern)
        self.logger.info("block_rule_added", rule=pattern, rules=len(self.block_rules.patterns))

    def update_sheets(self, text: str, source: str = "sheets") -> dict[str, Any]:
        """Add, replace or remove sheets (a sheets document, see :mod:`crawler.sheets.
        sheet_updates`) while the crawl runs; raises OrderError and changes nothing if the
        result is invalid. Shared with the other workers of a distributed crawl."""
        merged = checked_merge(self.order, self.sheets.configs, text, source)
        self._put_sheets(merged, source)
        if self.publish_sheets is not None:
            self.publish_sheets(dump_sheets(merged))
        return {"sheets": [sheet.name for sheet in merged], "version": self.sheets.version}

    def replace_sheets(self, text: str, source: str = "sheets") -> None:
        """Put the sheets of ``text`` in force instead of all current ones (the crawl-wide copy
        of a distributed crawl). Raises OrderError and changes nothing if one is invalid."""
        self._put_sheets(read_sheet_document(text, source)[0], source)

    def _put_sheets(self, sheets: list[SheetConfig], source: str) -> None:
        with self._sheets_lock:
            self.sheets.replace(sheets, source)
            save_sheets(self.run_dir, sheets)
        self.logger.info(
            "sheets_changed", sheets=[s.name for s in sheets], version=self.sheets.version
        )

    def write_reports(self) -> list[Path]:
        """Write every report of ``reports/`` from the live crawl (also while it runs)."""
        return self.reporter.write_reports()

    # ---------------------------------------------------------------- run
    def run(self) -> int:
        """Run the crawl to its end; returns the process exit code (0 when it finished)."""
        if self.state == "NASCENT":
            self.prepare()
        assert self.frontier is not None and self.logs is not None
        signals = StopSignals(self.request_stop, self.logger)
        if self.install_signals:
            signals.install()
        self.reporter.note_start(self.logs)
        self.pool = ToePool(
            self.frontier, self.chains, self.order.toe_threads, blocked=self.block_rules.blocks
        )
        if self.order.pause_at_start:
            self.pool.pause()
            self.reporter.note_paused()
            self.pause_reasons.add("operator")
            self._set_state("PAUSED", "Paused at start")
        else:
            self._set_state("RUNNING", "Running")
        # What exists now (order, modules, caches) lives as long as the crawl: out of the cycle
        # collector's way. The hot path makes many short-lived objects and few cycles, so the
        # young generation is collected less often than Python's default (every 700).
        thresholds = gc.get_threshold()
        gc.freeze()
        gc.set_threshold(20_000, 20, 20)
        self.pool.start()
        try:
            self._wait_for_end()
        finally:
            self._finish()
            gc.set_threshold(*thresholds)
            gc.unfreeze()
            signals.restore()
        return ExitCode.OK

    def _wait_for_end(self) -> None:
        assert self.frontier is not None and self.pool is not None
        next_action = self.clock.monotonic()
        self.reporter.plan_outputs(next_action)
        limits = self.order.limits
        while not self.stopping.is_set():
            self.clock.sleep(0.1, self.stopping)
            now = self.clock.monotonic()
            if now >= next_action and self.actions is not None:
                self.actions.poll()
                next_action = now + POLL_INTERVAL_S
            self._check_disk(now)
            self.reporter.tick(now)
            self.heap.tick(now)
            if self.state == "PAUSING" and self.pool.busy_threads() == 0:
                self._set_state("PAUSED", self._pause_message or "Paused by operator")
                self.reporter.write_progress()
            if self.state != "RUNNING":
                continue
            if self.pool.busy_threads() == 0 and self.frontier.is_empty():
                self.request_stop("Finished")
                break
            totals = self.stats.counts()
            if limits.max_documents and totals.succeeded >= limits.max_documents:
                self.request_stop("Finished - Maximum number of documents limit hit")
            elif limits.max_bytes and totals.bytes >= limits.max_bytes:
                self.request_stop("Finished - Maximum amount of data limit hit")
            elif limits.max_time_s and self.reporter.elapsed_s() >= limits.max_time_s:
                self.request_stop("Finished - Timelimit hit")

    def request_stop(self, reason: str = "Finished - Ended by operator") -> None:
        """End the crawl: URIs in process finish, then everything is written. Thread-safe."""
        if not self._stop_reason:
            self._stop_reason = reason
        self.stopping.set()

    def pause(self, reason: str = "operator", message: str = "Paused by operator") -> None:
        """Stop handing out URIs; PAUSED once those in process finished. Thread-safe.

        ``reason`` is ``"operator"`` or ``"disk"`` (the disk guard); ``message`` becomes the
        ``CRAWL PAUSED`` line once the crawl has paused.
        """
        with self._pause_lock:
            if self.pool is None or self.state not in ("RUNNING", "PAUSING", "PAUSED"):
                return
            self.pause_reasons.add(reason)
            if self.state == "RUNNING":
                self._pause_message = message
                self.pool.pause()
                self.reporter.note_paused()
                self._set_state("PAUSING", "Pausing")

    def unpause(self, reason: str | None = None) -> None:
        """Resume a paused (or pausing) crawl. Thread-safe.

        The operator's unpause (``reason`` None) clears every reason (a disk still short of
        space pauses the crawl again at the guard's next reading); the guard's (``"disk"``)
        clears only its own, so an operator's pause stays.
        """
        with self._pause_lock:
            if self.pool is None or self.state not in ("PAUSING", "PAUSED"):
                return
            if reason is None:
                self.pause_reasons.clear()
            else:
                self.pause_reasons.discard(reason)
            if not self.pause_reasons:
                self.reporter.note_unpaused()
                self.pool.unpause()
                self._set_state("RUNNING", "Running")

    def _check_disk(self, mono_s: float) -> None:
        """Write log lines a full disk made wait; read the free disk space when due: pause
        below the threshold, resume above it."""
        if self.logs is not None:
            self.logs.flush()
        flush_app_logging()
        guard = self.disk_guard
        action = guard.check(mono_s)
        if action is None:
            return
        status = guard.status()
        if action == "pause":
            if "disk" not in self.pause_reasons and self.state in ("RUNNING", "PAUSING", "PAUSED"):
                self.logger.warning("disk_space_low", **status, state=self.state)
                self.pause("disk", guard.reason())
        else:
            self.logger.warning("disk_space_recovered", **status, state=self.state)
            self.unpause("disk")

    # ---------------------------------------------------------------- end
    def _write_wacz(self) -> None:
        """The WACZ package the order asks for (``archive.wacz``); a failure is logged."""
        from crawler.archive.wacz import package_at_end

        archive = self.order.archive
        try:
            summary = package_at_end(self.run_dir, self.order.name, archive.wacz_file)
        except Exception:
            self.logger.exception("wacz_failed")
            return
        self.logger.info("wacz_written", path=str(summary.path), pages=summary.pages)

    def _finish(self) -> None:
        """Stop threads and processors, write reports, close the frontier, publish FINISHED."""
        reason = self._stop_reason or "Finished - Abnormal exit from crawling"
        self.reporter.note_stopping()
        self._set_state("STOPPING", reason)
        if self.pool is not None:
            self.pool.request_stop()
            self.pool.join()
        self.reporter.note_threads_stopped()
        self._builder.stop_processors(self.history, self.collections)
        self.exit_status = reason
        try:
            self.write_reports()
        except Exception:
            self.logger.exception("reports_failed")
        self.reporter.write_change_report()
        if self.order.archive.wacz:
            self._write_wacz()
        if self.frontier is not None:
            self.reporter.note_frontier_closing(self.frontier)
            self.frontier.close()
            self.frontier = self.frontier_abilities = None
        self._set_state("FINISHED", reason)
        totals = self.stats.counts()
        self.logger.info(
            "crawl_finished",
            status=reason,
            downloaded=totals.succeeded,
            failed=totals.failed,
            bytes=totals.bytes,
            heap=self.heap.snapshot(),
        )
        if self.metrics is not None:
            self.metrics.close()
            self.metrics = None
        self._builder.release_run_dir(self.logs)
