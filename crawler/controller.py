"""CrawlController: builds a crawl from its order, runs it and ends it cleanly.

States: NASCENT → PREPARING → RUNNING ⇄ PAUSING → PAUSED → STOPPING → FINISHED (PAUSING lasts
until the URIs in process have finished). The crawl ends when the frontier is empty and no URI is
in process, when a limit is hit, or on an operator stop (first SIGINT/SIGTERM or ``crawler
terminate``: finish the URIs in process, write everything, exit 0; second signal: exit at once).

:meth:`CrawlController.run` is called from one thread (normally the main thread); its loop also
takes in the action directory (:mod:`crawler.steering`), publishes ``status.json``
(:mod:`crawler.status`), writes progress-statistics.log and refreshes the display — ToeThreads
never do any of that. ``pause``, ``unpause`` and ``request_stop`` may be called from any thread.
Reports (:mod:`crawler.reports`) are written at the end of every crawl, also an interrupted one.
Heritrix counterpart: ``org.archive.crawler.framework.CrawlController``.
"""

from __future__ import annotations

import gc
import os
import signal
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import structlog

from crawler.applog import close_app_logging, configure_app_logging
from crawler.clock import Clock, SystemClock
from crawler.curi import CrawlURI, SchedulingDirective
from crawler.decide.decide_rule import DecideResult, RuleContext
from crawler.frontier import WorkQueueFrontier, frontier_summary_report
from crawler.frontier.assignment import QueueAssignmentPolicy
from crawler.frontier.frontier import Frontier, FrontierSnapshot
from crawler.frontier.queue_store import QueueStore
from crawler.history import CrawlHistory
from crawler.logs import CrawlLogs, log14
from crawler.order import components
from crawler.order.errors import OrderError, OrderIssue
from crawler.order.loader import effective_yaml, require_contact_url
from crawler.order.schema import CrawlOrder
from crawler.processor import ProcessorContext
from crawler.progress import LEGEND, ProgressRow, ProgressStatistics
from crawler.reports import CrawlSummary, render_reports, write_reports
from crawler.reports.runtime import (
    basic_frontier_report,
    frontier_entry,
    processor_entries,
    processors_report,
    threads_report,
)
from crawler.seeds import SeedList, load_seeds
from crawler.servers import ServerCache
from crawler.stats import CrawlStats, HostStats
from crawler.status import StatusPublisher, is_running, read_status
from crawler.steering import BLOCK_RULES_FILE, POLL_INTERVAL_S, ActionDirectory, BlockRules
from crawler.toepool import ToePool
from crawler.uniq import UriUniqFilter

if TYPE_CHECKING:
    from crawler.display import Display

STATES = ("NASCENT", "PREPARING", "RUNNING", "PAUSING", "PAUSED", "STOPPING", "FINISHED")
STATUS_INTERVAL_S = 1.0
"""status.json is rewritten this often (more often for a live display, and at state changes)."""
SLOW_PARTS_INTERVAL_S = 5.0
"""The busiest hosts and processor reports in status.json are refreshed this often."""
PID_FILE = "crawler.pid"
_PROGRESS_WORDS = {"PAUSING": "WAITING", "STOPPING": "ENDING", "FINISHED": "ENDED"}


class CrawlInUseError(OSError):
    """The run directory belongs to a crawl that is still running."""


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
        self.servers = ServerCache(robots_max_size_bytes=order.robots.max_size_bytes)
        self.stopping = threading.Event()
        self._stop_reason = ""
        self._state_lock = threading.Lock()
        self._signals = 0
        self.logs: CrawlLogs | None = None
        self.frontier: Frontier | None = None
        self.pool: ToePool | None = None
        self.chains = components.build_chains(order)
        self.scope = components.build_rules(order.scope, "scope")
        self.seed_uris: list[str] = []
        self.seed_directives: list[str] = []
        self._start_s = 0.0
        self._paused_since = 0.0
        self._paused_total_s = 0.0
        self._progress: ProgressStatistics | None = None
        self.last_row: ProgressRow | None = None
        self.display = display
        self.block_rules = BlockRules(run_dir / BLOCK_RULES_FILE)
        self.status = StatusPublisher(run_dir, order.name)
        self.actions: ActionDirectory | None = None
        self.history: CrawlHistory | None = None
        self._snapshot = FrontierSnapshot()
        self._last_doc: dict[str, Any] | None = None
        self._busiest: list[tuple[str, HostStats]] = []
        self._processors: list[dict[str, Any]] = []
        self._slow_parts_due = 0.0
        self._display_due = 0.0
        self._end_elapsed_s: float | None = None

    # ------------------------------------------------------------ lifecycle
    def _set_state(self, state: str, message: str = "") -> None:
        with self._state_lock:
            self.state = state
        self.logger.info("crawl_state", state=state, message=message, run_dir=str(self.run_dir))
        if self.logs is not None and state != "PREPARING":
            word = _PROGRESS_WORDS.get(state, state)
            self.logs.progress.write(
                f"{log14(self.clock.time())} CRAWL {word} - {message or state.title()}"
            )
        if self.logs is not None:
            self._publish_status()

    def prepare(self) -> None:
        """Create the run's directories, open logs and frontier, start processors, add seeds."""
        require_contact_url(self.order)
        live = read_status(self.run_dir)
        if is_running(live) and live is not None and live.get("pid") != os.getpid():
            raise CrawlInUseError(
                f"{self.run_dir} is in use by a running crawl (pid {live.get('pid')}); "
                "stop it first (crawler terminate)"
            )
        self._set_state("PREPARING")
        run = self.run_dir
        for sub in ("logs", "warcs", "state", "reports", "action"):
            (run / sub).mkdir(parents=True, exist_ok=True)
        (run / "order.effective.yaml").write_text(effective_yaml(self.order), encoding="utf-8")
        (run / PID_FILE).write_text(f"{os.getpid()}\n", encoding="ascii")
        configure_app_logging(run / "logs", self.order.logging.level, self.order.logging.console)
        self.logger = structlog.get_logger("crawler").bind(crawl=self.order.name)
        if self.resume:
            replayed = self.stats.replay_crawl_log(run / "logs" / "crawl.log")
            self.logger.info("crawl_resuming", finished_before=replayed)
        self.block_rules.load()
        self.logs = CrawlLogs(run / "logs", extra_info=self.order.logging.crawl_log_extra_info)
        self._publish_status()
        seeds = load_seeds(self.order)
        for problem in seeds.errors:
            self.logger.warning("bad_seed", problem=problem)
            self.logs.uri_error(None, problem, problem.split(" ")[0], self.clock.time())
        self.seed_uris = list(seeds.uris)
        self.seed_directives = list(seeds.directives)
        self.scope.bind(
            RuleContext(seeds=self.seed_uris + self.seed_directives, base_dir=self.order.base_dir)
        )
        self.frontier = self._build_frontier(run / "state")
        # robots.txt and DNS outcomes survive a restart (even kill -9): no second fetch on resume
        self.servers.attach_journal(run / "state" / "servers.jsonl")
        self.actions = ActionDirectory(run / "action", self, self.logger, self._uri_error)
        self.history = self._open_history(run / "state")
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
            schedule=self.schedule,
            uri_error=self._uri_error,
            history=self.history,
            schedule_many=self.schedule_many,
            seen_recently=getattr(self.frontier, "seen_recently", None),
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
            self._schedule_seed(uri)
        self.logger.info(
            "crawl_prepared",
            seeds=len(self.seed_uris),
            threads=self.order.toe_threads,
            cpus=sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        )

    def _build_frontier(self, state_dir: Path) -> Frontier:
        fcfg = self.order.frontier
        store = components.build_component(fcfg.store, QueueStore, "frontier.store")
        policy = components.build_component(
            fcfg.queue_assignment, QueueAssignmentPolicy, "frontier.queue_assignment"
        )
        bind = getattr(policy, "bind_servers", None)
        if bind is not None:  # the IP policy keys queues by the addresses FetchDNS learns
            bind(self.servers)
        uniq = components.build_component(fcfg.uniq_filter, UriUniqFilter, "frontier.uniq_filter")
        shared = getattr(store, "build_frontier", None)
        if shared is not None:
            # A store shared by many processes (RedisQueueStore) brings its own frontier.
            built: Frontier = shared(
                policy,
                uniq,
                fcfg,
                clock=self.clock,
                on_final=self._on_final,
                logger=self.logger,
                uri_error=self._uri_error,
            )
            built.open(state_dir)  # type: ignore[attr-defined]
            return built
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

    def _open_history(self, state_dir: Path) -> CrawlHistory | None:
        """The crawl history (``history`` in the order), or None when it is off."""
        cfg = self.order.history
        if not cfg.enabled:
            return None
        source = None
        if cfg.import_from:
            source = Path(self.order.base_dir) / Path(cfg.import_from).expanduser()
        try:
            return CrawlHistory.open(state_dir, source)
        except (FileNotFoundError, ValueError) as exc:
            raise OrderError([OrderIssue("history.import_from", str(exc))]) from None

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
        queued = self.frontier.schedule_many([curis[i] for i in offered])
        for i, ok in zip(offered, queued, strict=True):
            result[i] = ok
        self.stats.note_scheduled_many([c.uri for c, ok in zip(curis, result, strict=True) if ok])
        return result

    def _schedule_seed(self, uri: str) -> bool:
        self.stats.note_seed(uri)
        curi = CrawlURI(
            uri=uri,
            is_seed=True,
            directive=SchedulingDirective.MEDIUM,
            source_tag=uri if self.order.seeds.source_tag_seeds else None,
        )
        return self.schedule(curi)

    def in_scope(self, curi: CrawlURI) -> bool:
        """Whether the crawl's scope accepts ``curi``."""
        return self.scope.decide(curi) is DecideResult.ACCEPT

    def add_seeds(self, seeds: SeedList) -> int:
        """Add seeds (and scope directives) to the running crawl; returns how many were queued.

        The scope is bound again with every seed, so seeds-as-SURT-prefixes rules admit them.
        """
        known = set(self.seed_uris)
        new = [uri for uri in seeds.uris if uri not in known]
        self.seed_uris.extend(new)
        self.seed_directives.extend(seeds.directives)
        self.scope.bind(
            RuleContext(seeds=self.seed_uris + self.seed_directives, base_dir=self.order.base_dir)
        )
        return sum(1 for uri in new if self._schedule_seed(uri))

    def add_block_rule(self, pattern: str) -> None:
        """Block queued and future URIs matching ``pattern`` (kept in block-rules.txt)."""
        self.block_rules.add(pattern)
        self.logger.info("block_rule_added", rule=pattern, rules=len(self.block_rules.patterns))

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
        self.pool = ToePool(
            self.frontier, self.chains, self.order.toe_threads, blocked=self.block_rules.blocks
        )
        if self.display is not None:
            self.display.start()
        if self.order.pause_at_start:
            self.pool.pause()
            self._paused_since = self.clock.monotonic()
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
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return 0

    def _wait_for_end(self) -> None:
        assert self.frontier is not None and self.pool is not None
        interval = self.order.logging.progress_interval_s
        now = self.clock.monotonic()
        next_progress = now + interval
        next_status = next_action = now
        status_every_s = STATUS_INTERVAL_S
        if self.display is not None:
            status_every_s = min(status_every_s, self.display.interval_s)
        limits = self.order.limits
        while not self.stopping.is_set():
            self.clock.sleep(0.1, self.stopping)
            now = self.clock.monotonic()
            if now >= next_action and self.actions is not None:
                self.actions.poll()
                next_action = now + POLL_INTERVAL_S
            if now >= next_progress:
                self._write_progress()
                next_progress = now + interval
            if now >= next_status:
                self._publish_status()
                next_status = now + status_every_s
            if self.state == "PAUSING" and self.pool.busy_threads() == 0:
                self._set_state("PAUSED", "Paused by operator")
                self._write_progress()
            if self.state != "RUNNING":
                continue
            if self.pool.busy_threads() == 0 and self.frontier.is_empty():
                self._stop("Finished")
                break
            totals = self.stats.counts()
            if limits.max_documents and totals.succeeded >= limits.max_documents:
                self._stop("Finished - Maximum number of documents limit hit")
            elif limits.max_bytes and totals.bytes >= limits.max_bytes:
                self._stop("Finished - Maximum amount of data limit hit")
            elif limits.max_time_s and self._elapsed_s() >= limits.max_time_s:
                self._stop("Finished - Timelimit hit")

    def _stop(self, reason: str) -> None:
        if not self._stop_reason:
            self._stop_reason = reason
        self.stopping.set()

    def request_stop(self, reason: str = "Finished - Ended by operator") -> None:
        """End the crawl: URIs in process finish, then everything is written. Thread-safe."""
        self._stop(reason)

    def pause(self) -> None:
        """Stop handing out URIs; PAUSED once those in process finished. Thread-safe."""
        if self.pool is not None and self.state == "RUNNING":
            self.pool.pause()
            self._paused_since = self.clock.monotonic()
            self._set_state("PAUSING", "Pausing")

    def unpause(self) -> None:
        """Resume a paused (or pausing) crawl. Thread-safe."""
        if self.pool is not None and self.state in ("PAUSING", "PAUSED"):
            paused_s = self.clock.monotonic() - self._paused_since
            self._paused_total_s += paused_s
            if self._progress is not None:
                self._progress.add_paused(paused_s)
            self.pool.unpause()
            self._set_state("RUNNING", "Running")

    def _elapsed_s(self) -> float:
        """Seconds since the crawl started running, paused time excluded."""
        if self._end_elapsed_s is not None:
            return self._end_elapsed_s
        if not self._start_s:
            return 0.0
        paused = self._paused_total_s
        if self.state in ("PAUSING", "PAUSED"):
            paused += self.clock.monotonic() - self._paused_since
        return max(0.0, self.clock.time() - self._start_s - paused)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self._signals += 1
        if self._signals == 1:
            self.logger.warning("stop_requested", signal=signal.Signals(signum).name)
            self.request_stop()
        else:
            self.logger.error("forced_exit", signal=signal.Signals(signum).name)
            os._exit(1)

    # ------------------------------------------------------ what it shows
    def _write_progress(self) -> None:
        if self.frontier is None or self.logs is None or self._progress is None:
            return
        totals = self.stats.counts()
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

    def _publish_status(self) -> None:
        """Build and write status.json and redraw the display (the controller's thread only)."""
        if self.frontier is not None:
            self._snapshot = self.frontier.snapshot()
        mono_s = self.clock.monotonic()
        if mono_s >= self._slow_parts_due or self.state not in ("RUNNING", "PAUSED"):
            self._busiest = self.stats.busiest_hosts(10)
            self._processors = processor_entries(self.chains)
            self._slow_parts_due = mono_s + SLOW_PARTS_INTERVAL_S
        pool = self.pool
        doc = self.status.document(
            state=self.state,
            exit_status=self.exit_status,
            now_s=self.clock.time(),
            mono_s=mono_s,
            started_s=self._start_s,
            elapsed_s=self._elapsed_s(),
            counts=self.stats.counts(),
            snap=self._snapshot,
            busy_threads=pool.busy_threads() if pool is not None else 0,
            total_threads=pool.size if pool is not None else self.order.toe_threads,
            thread_steps=pool.step_counts() if pool is not None else {},
            busiest=self._busiest,
            block_rules=self.block_rules.patterns,
            seeds=len(self.seed_uris),
            processors=self._processors,
        )
        self.status.publish(doc)
        self._last_doc = doc
        if self.display is not None and mono_s >= self._display_due:
            self.display.update(doc)
            self._display_due = mono_s + self.display.interval_s

    def write_reports(self) -> list[Path]:
        """Write every report of ``reports/`` from the live crawl (also while it runs)."""
        now_s = self.clock.time()
        summary = CrawlSummary(
            self.order.name,
            self.exit_status or f"{self.state} - Active",
            round(self._elapsed_s() * 1000),
            tuple(self.seed_uris),
        )
        texts = render_reports(
            self.stats.totals(),
            summary,
            processors=processors_report(processor_entries(self.chains), now_s),
            frontier=self._frontier_report(now_s),
            threads=threads_report(self.pool, now_s),
        )
        paths = write_reports(self.run_dir / "reports", texts)
        self.logger.info("reports_written", dir=str(self.run_dir / "reports"))
        return paths

    def _frontier_report(self, now_s: float) -> str:
        if self.frontier is None:
            return basic_frontier_report(self.order.name, {}, now_s)
        try:
            # Both built-in frontiers (work-queue, Redis) also offer queue_details().
            return frontier_summary_report(self.frontier, self.order.name, now_s)  # type: ignore[arg-type]
        except Exception:
            self.logger.exception("frontier_report_failed")
        return basic_frontier_report(
            self.order.name, frontier_entry(self.frontier.snapshot()), now_s
        )

    # ---------------------------------------------------------------- end
    def _finish(self) -> None:
        """Stop threads and processors, write reports, close the frontier, publish FINISHED."""
        reason = self._stop_reason or "Finished - Abnormal exit from crawling"
        if self.state in ("PAUSING", "PAUSED"):
            self._paused_total_s += self.clock.monotonic() - self._paused_since
        self._set_state("STOPPING", reason)
        if self.pool is not None:
            self.pool.request_stop()
            self.pool.join()
        self._write_progress()
        self._end_elapsed_s = self._elapsed_s()
        self.chains.stop()
        if self.history is not None:
            self.history.close()
        self.servers.close_journal()
        self.exit_status = reason
        try:
            self.write_reports()
        except Exception:
            self.logger.exception("reports_failed")
        if self.frontier is not None:
            self._snapshot = self.frontier.snapshot()
            self.frontier.close()
            self.frontier = None
        self._display_due = 0.0
        self._set_state("FINISHED", reason)
        if self.display is not None:
            self.display.stop(None)
        totals = self.stats.counts()
        self.logger.info(
            "crawl_finished",
            status=reason,
            downloaded=totals.succeeded,
            failed=totals.failed,
            bytes=totals.bytes,
        )
        (self.run_dir / PID_FILE).unlink(missing_ok=True)
        if self.logs is not None:
            self.logs.close()
        close_app_logging()
