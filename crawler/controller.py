"""CrawlController: builds a crawl from its order, runs it and ends it cleanly.

States: NASCENT → PREPARING → RUNNING ⇄ PAUSED → STOPPING → FINISHED. The crawl ends when the
frontier is empty and no URI is in process, when a limit is hit, or on an operator stop (first
SIGINT/SIGTERM: finish the URIs in process, write everything, exit 0; second: exit at once).
:meth:`CrawlController.run` is called from one thread (normally the main thread); ``pause``,
``unpause`` and ``request_stop`` may be called from any thread. Heritrix counterpart:
``org.archive.crawler.framework.CrawlController``.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

import structlog

from crawler.applog import close_app_logging, configure_app_logging
from crawler.clock import Clock, SystemClock
from crawler.curi import CrawlURI, SchedulingDirective
from crawler.decide.decide_rule import RuleContext
from crawler.frontier import WorkQueueFrontier
from crawler.frontier.assignment import QueueAssignmentPolicy
from crawler.frontier.queue_store import QueueStore
from crawler.logs import CrawlLogs, log14
from crawler.order import components
from crawler.order.loader import effective_yaml, require_contact_url
from crawler.order.schema import CrawlOrder
from crawler.processor import ProcessorContext
from crawler.progress import LEGEND, ProgressRow, ProgressStatistics
from crawler.seeds import load_seeds
from crawler.servers import ServerCache
from crawler.stats import CrawlStats
from crawler.toepool import ToePool
from crawler.uniq import UriUniqFilter

STATES = ("NASCENT", "PREPARING", "RUNNING", "PAUSED", "STOPPING", "FINISHED")


def new_run_dir(job_dir: Path, now_s: float | None = None) -> Path:
    """Create ``<job_dir>/runs/<UTC yyyymmddThhmmssZ>/`` (unique) and point ``latest`` at it."""
    stamp = time.strftime(
        "%Y%m%dT%H%M%SZ", time.gmtime(now_s if now_s is not None else time.time())
    )
    runs = job_dir / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    run_dir = runs / stamp
    suffix = 1
    while True:
        try:
            run_dir.mkdir()
            break
        except FileExistsError:
            suffix += 1
            run_dir = runs / f"{stamp}-{suffix}"
    latest = job_dir / "latest"
    try:
        if latest.is_symlink() or latest.exists():
            latest.unlink()
        latest.symlink_to(run_dir.relative_to(job_dir))
    except OSError:
        pass
    return run_dir


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
        self.servers = ServerCache(robots_max_size_bytes=order.robots.max_size_bytes)
        self.stopping = threading.Event()
        self._stop_reason = ""
        self._state_lock = threading.Lock()
        self._signals = 0
        self.logs: CrawlLogs | None = None
        self.frontier: WorkQueueFrontier | None = None
        self.pool: ToePool | None = None
        self.chains = components.build_chains(order)
        self.scope = components.build_rules(order.scope, "scope")
        self.seed_uris: list[str] = []
        self._start_s = 0.0
        self._paused_since = 0.0
        self._progress: ProgressStatistics | None = None
        self.last_row: ProgressRow | None = None

    # ------------------------------------------------------------ lifecycle
    def _set_state(self, state: str, message: str = "") -> None:
        with self._state_lock:
            self.state = state
        self.logger.info("crawl_state", state=state, message=message, run_dir=str(self.run_dir))
        if self.logs is not None and state in ("RUNNING", "PAUSED", "STOPPING", "FINISHED"):
            word = {"STOPPING": "ENDING", "FINISHED": "ENDED"}.get(state, state)
            self.logs.progress.write(
                f"{log14(self.clock.time())} CRAWL {word} - {message or state.title()}"
            )

    def prepare(self) -> None:
        """Create the run's directories, open logs and frontier, start processors, add seeds."""
        require_contact_url(self.order)
        self._set_state("PREPARING")
        run = self.run_dir
        for sub in ("logs", "warcs", "state", "reports", "action"):
            (run / sub).mkdir(parents=True, exist_ok=True)
        (run / "order.effective.yaml").write_text(effective_yaml(self.order), encoding="utf-8")
        configure_app_logging(run / "logs", self.order.logging.level, self.order.logging.console)
        self.logger = structlog.get_logger("crawler").bind(crawl=self.order.name)
        if self.resume:
            replayed = self.stats.replay_crawl_log(run / "logs" / "crawl.log")
            self.logger.info("crawl_resuming", finished_before=replayed)
        self.logs = CrawlLogs(run / "logs", extra_info=self.order.logging.crawl_log_extra_info)
        seeds = load_seeds(self.order)
        for problem in seeds.errors:
            self.logger.warning("bad_seed", problem=problem)
            self.logs.uri_error(None, problem, problem.split(" ")[0], self.clock.time())
        self.seed_uris = list(seeds.uris)
        self.scope.bind(
            RuleContext(seeds=self.seed_uris + list(seeds.directives), base_dir=self.order.base_dir)
        )
        self.frontier = self._build_frontier(run / "state")
        ctx = ProcessorContext(
            run_dir=run,
            state_dir=run / "state",
            order=self.order,
            stats=self.stats,
            logger=self.logger,
            clock=self.clock,
            stopping=self.stopping,
            servers=self.servers,
            scope=self.scope,
            schedule=self.frontier.schedule,
            uri_error=self._uri_error,
        )
        for chain in self.chains.chains:
            for proc in chain:
                if proc.should_process_rule is not None:
                    proc.should_process_rule.bind(
                        RuleContext(seeds=self.seed_uris, base_dir=self.order.base_dir)
                    )
        self.chains.start(ctx)
        # On resume the uniq filter already holds the seeds, so scheduling them again adds nothing
        # unless the crash came before they were stored.
        for uri in self.seed_uris:
            self.stats.note_seed(uri)
            curi = CrawlURI(
                uri=uri,
                is_seed=True,
                directive=SchedulingDirective.MEDIUM,
                source_tag=uri if self.order.seeds.source_tag_seeds else None,
            )
            self.frontier.schedule(curi)
        self.logger.info(
            "crawl_prepared", seeds=len(self.seed_uris), threads=self.order.toe_threads
        )

    def _build_frontier(self, state_dir: Path) -> WorkQueueFrontier:
        fcfg = self.order.frontier
        store = components.build_component(fcfg.store, QueueStore, "frontier.store")
        policy = components.build_component(
            fcfg.queue_assignment, QueueAssignmentPolicy, "frontier.queue_assignment"
        )
        uniq = components.build_component(fcfg.uniq_filter, UriUniqFilter, "frontier.uniq_filter")
        frontier = WorkQueueFrontier(
            store,
            policy,
            uniq,
            fcfg,
            clock=self.clock,
            on_final=self._on_final,
            logger=self.logger,
            uri_error=self._uri_error,
        )
        frontier.open(state_dir)
        return frontier

    def _uri_error(self, base: str | None, message: str, raw: str) -> None:
        if self.logs is not None:
            self.logs.uri_error(base, message, raw, self.clock.time())

    def _on_final(self, curi: CrawlURI) -> None:
        """Final disposition of a URI: crawl.log line, statistics, free its recording."""
        if self.logs is not None:
            self.logs.log_final(curi, self.clock.time())
        self.stats.record_final(curi)
        curi.close_recording()

    # ---------------------------------------------------------------- run
    def run(self) -> int:
        """Run the crawl to its end; returns the process exit code (0 when it finished)."""
        if self.state == "NASCENT":
            self.prepare()
        assert self.frontier is not None and self.logs is not None
        previous: dict[signal.Signals, Any] = {}
        if self.install_signals and threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                previous[sig] = signal.signal(sig, self._on_signal)
        self._start_s = self.clock.time()
        self._progress = ProgressStatistics(self._start_s)
        self.logs.progress.write(LEGEND)
        self.pool = ToePool(self.frontier, self.chains, self.order.toe_threads)
        if self.order.pause_at_start:
            self.pool.pause()
            self._paused_since = self.clock.monotonic()
            self._set_state("PAUSED", "Paused at start")
        else:
            self._set_state("RUNNING", "Running")
        self.pool.start()
        try:
            self._wait_for_end()
        finally:
            self._finish()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return 0

    def _wait_for_end(self) -> None:
        assert self.frontier is not None and self.pool is not None
        interval = self.order.logging.progress_interval_s
        next_progress = self.clock.monotonic() + interval
        limits = self.order.limits
        while not self.stopping.is_set():
            self.clock.sleep(0.1, self.stopping)
            now = self.clock.monotonic()
            if now >= next_progress:
                self._write_progress()
                next_progress = now + interval
            if self.state == "PAUSED":
                continue
            if self.pool.busy_threads() == 0 and self.frontier.is_empty():
                self._stop("Finished")
                break
            totals = self.stats.totals()
            if limits.max_documents and totals.succeeded >= limits.max_documents:
                self._stop("Finished - Maximum number of documents limit hit")
            elif limits.max_bytes and totals.bytes >= limits.max_bytes:
                self._stop("Finished - Maximum amount of data limit hit")
            elif limits.max_time_s and self.clock.time() - self._start_s >= limits.max_time_s:
                self._stop("Finished - Timelimit hit")

    def _stop(self, reason: str) -> None:
        if not self._stop_reason:
            self._stop_reason = reason
        self.stopping.set()

    def request_stop(self, reason: str = "Finished - Ended by operator") -> None:
        """End the crawl: URIs in process finish, then everything is written. Thread-safe."""
        self._stop(reason)

    def pause(self) -> None:
        """Stop handing out URIs; those in process finish. Thread-safe."""
        if self.pool is not None and self.state == "RUNNING":
            self.pool.pause()
            self._paused_since = self.clock.monotonic()
            self._set_state("PAUSED", "Paused by operator")

    def unpause(self) -> None:
        """Resume a paused crawl. Thread-safe."""
        if self.pool is not None and self.state == "PAUSED":
            if self._progress is not None:
                self._progress.add_paused(self.clock.monotonic() - self._paused_since)
            self.pool.unpause()
            self._set_state("RUNNING", "Running")

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self._signals += 1
        if self._signals == 1:
            self.logger.warning("stop_requested", signal=signal.Signals(signum).name)
            self.request_stop()
        else:
            self.logger.error("forced_exit", signal=signal.Signals(signum).name)
            os._exit(1)

    def _write_progress(self) -> None:
        if self.frontier is None or self.logs is None or self._progress is None:
            return
        totals = self.stats.totals()
        row = self._progress.sample(
            self.clock.time(),
            self.frontier.snapshot(),
            downloaded=totals.succeeded,
            failed=totals.failed,
            total_bytes=totals.bytes,
            busy_threads=self.pool.busy_threads() if self.pool else 0,
        )
        self.last_row = row
        self.logs.progress.write(row.line())

    def _finish(self) -> None:
        """Stop threads, processors and frontier; write the last progress line."""
        reason = self._stop_reason or "Finished - Abnormal exit from crawling"
        self._set_state("STOPPING", reason)
        if self.pool is not None:
            self.pool.request_stop()
            self.pool.join()
        self._write_progress()
        self.chains.stop()
        if self.frontier is not None:
            self.frontier.close()
        self.exit_status = reason
        self._set_state("FINISHED", reason)
        totals = self.stats.totals()
        self.logger.info(
            "crawl_finished",
            status=reason,
            downloaded=totals.succeeded,
            failed=totals.failed,
            bytes=totals.bytes,
        )
        if self.logs is not None:
            self.logs.close()
        close_app_logging()
