"""CrawlReporter: what a running crawl shows — progress-statistics.log, status.json, reports.

It reads the crawl's live parts from its :class:`ReportedCrawl` (the CrawlController) at each
call, so it sees the frontier, pool and logs as they are opened and closed, and it keeps the
crawl's elapsed time (paused time excluded, frozen once the threads have stopped) from what the
controller notes: the start (progress legend written, display started), each pause, the end.

* :meth:`~CrawlReporter.state_changed` — the ``CRAWL …`` line of progress-statistics.log, then
  status.json (at FINISHED the display shows it, then stops);
* :meth:`~CrawlReporter.tick` — called by the run loop: a progress row every
  ``progress_interval_s``, status.json every ``STATUS_INTERVAL_S`` (the busiest hosts and the
  processor entries every ``SLOW_PARTS_INTERVAL_S``), and the display redrawn at its interval;
* :meth:`~CrawlReporter.write_reports` — every report of ``reports/``, at the end and on request;
* :meth:`~CrawlReporter.write_change_report` — at the end, once the history is closed, what
  changed since the crawl this one imported its history from
  (:mod:`crawler.continuity.change_report`).

Thread-safety: no lock, like the controller's own fields. The run loop's thread makes almost
every call; ``pause``/``unpause`` (any thread) note the pause and change the state through it,
as the controller always did. ToeThreads only call :attr:`~CrawlReporter.status`'s
``note_final`` (thread-safe). Heritrix counterpart: the reporting half of ``StatisticsTracker``
(progress-statistics, ``dumpReports``, the crawl's elapsed time) and the REST job status.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from crawler.continuity.change_report import ChangeReportError, write_change_report
from crawler.frontier import frontier_summary_report
from crawler.frontier.frontier import Frontier, FrontierSnapshot
from crawler.frontier.frontier_abilities import FrontierAbilities
from crawler.frontier.retry.retry_watch import RetriesWaiting
from crawler.logs.crawl_logs import CrawlLogs, log14
from crawler.logs.progress import LEGEND, ProgressRow, ProgressStatistics
from crawler.reports import CrawlSummary, render_reports, write_reports
from crawler.reports.runtime import (
    basic_frontier_report,
    frontier_entry,
    processor_entries,
    processors_report,
    threads_report,
)
from crawler.reports.status import StatusPublisher

if TYPE_CHECKING:
    from crawler.chain import ProcessorChains
    from crawler.cli.display import Display
    from crawler.clock import Clock
    from crawler.control.steering import BlockRules
    from crawler.control.toepool import ToePool
    from crawler.disk import DiskGuard
    from crawler.order.schema import CrawlOrder
    from crawler.stats import CrawlStats, HostStats

STATUS_INTERVAL_S = 1.0
"""status.json is rewritten this often (more often for a live display, and at state changes)."""
SLOW_PARTS_INTERVAL_S = 5.0
"""The busiest hosts and processor reports in status.json are refreshed this often."""
RETRIES_SHOWN = 10
"""URIs waiting for a retry listed in status.json (the soonest due)."""
_PROGRESS_WORDS = {"PAUSING": "WAITING", "STOPPING": "ENDING", "FINISHED": "ENDED"}


class ReportedCrawl(Protocol):
    """What the reporter reads of the crawl (the CrawlController's attributes)."""

    order: CrawlOrder
    run_dir: Path
    clock: Clock
    logger: Any
    state: str
    exit_status: str
    stats: CrawlStats
    chains: ProcessorChains
    block_rules: BlockRules
    seed_uris: list[str]
    display: Display | None
    logs: CrawlLogs | None
    frontier: Frontier | None
    frontier_abilities: FrontierAbilities | None
    pool: ToePool | None
    disk_guard: DiskGuard
    pause_reasons: set[str]


class CrawlReporter:
    """Progress rows, state lines, status.json and reports of one crawl."""

    def __init__(self, crawl: ReportedCrawl) -> None:
        self._crawl = crawl
        self.status = StatusPublisher(crawl.run_dir, crawl.order.name)
        self.last_row: ProgressRow | None = None
        self._progress: ProgressStatistics | None = None
        self._start_s = 0.0
        self._paused_since = 0.0
        self._paused_total_s = 0.0
        self._end_elapsed_s: float | None = None
        self._snapshot = FrontierSnapshot()
        self._last_doc: dict[str, Any] | None = None
        self._busiest: list[tuple[str, HostStats]] = []
        self._paced: list[tuple[str, float]] = []
        self._held: tuple[int, int] | None = None
        self._processors: list[dict[str, Any]] = []
        self._slow_parts_due = 0.0
        self._display_due = 0.0
        self._progress_due = self._status_due = self._status_every_s = 0.0

    # ------------------------------------------------------------ elapsed time
    def note_start(self, logs: CrawlLogs) -> None:
        """The crawl starts running now: the clock starts, the progress legend is written, the
        display starts."""
        self._start_s = self._crawl.clock.time()
        self._progress = ProgressStatistics(self._start_s)
        logs.progress.write(LEGEND)
        if self._crawl.display is not None:
            self._crawl.display.start()

    def note_paused(self) -> None:
        """The crawl pauses now (its paused time is not elapsed time)."""
        self._paused_since = self._crawl.clock.monotonic()

    def note_unpaused(self) -> None:
        """The crawl runs again: the pause is added to the paused time and the progress rates."""
        paused_s = self._crawl.clock.monotonic() - self._paused_since
        self._paused_total_s += paused_s
        if self._progress is not None:
            self._progress.add_paused(paused_s)

    def note_stopping(self) -> None:
        """The crawl is about to stop (still in its state before STOPPING): a pause ends here."""
        if self._crawl.state in ("PAUSING", "PAUSED"):
            self._paused_total_s += self._crawl.clock.monotonic() - self._paused_since

    def note_threads_stopped(self) -> None:
        """The threads have stopped: a last progress row; the elapsed time stops here."""
        self.write_progress()
        self._end_elapsed_s = self.elapsed_s()

    def note_frontier_closing(self, frontier: Frontier) -> None:
        """status.json keeps the counts of ``frontier``, about to be closed (the crawl has
        ended: no queue waits any more, see :meth:`FrontierSnapshot.ended`)."""
        self._snapshot = frontier.snapshot().ended()

    def elapsed_s(self) -> float:
        """Seconds since the crawl started running, paused time excluded."""
        if self._end_elapsed_s is not None:
            return self._end_elapsed_s
        if not self._start_s:
            return 0.0
        paused = self._paused_total_s
        if self._crawl.state in ("PAUSING", "PAUSED"):
            paused += self._crawl.clock.monotonic() - self._paused_since
        return max(0.0, self._crawl.clock.time() - self._start_s - paused)

    # --------------------------------------------------------- periodic outputs
    def plan_outputs(self, mono_s: float) -> None:
        """From ``mono_s`` on, :meth:`tick` writes a progress row every ``progress_interval_s``
        (the first one interval later) and status.json every ``STATUS_INTERVAL_S`` (or the
        display's interval if shorter; the first one at once)."""
        c = self._crawl
        self._progress_due = mono_s + c.order.logging.progress_interval_s
        self._status_due = mono_s
        self._status_every_s = STATUS_INTERVAL_S
        if c.display is not None:
            self._status_every_s = min(self._status_every_s, c.display.interval_s)

    def tick(self, mono_s: float) -> None:
        """Write the periodic outputs due at ``mono_s``."""
        if mono_s >= self._progress_due:
            self.write_progress()
            self._progress_due = mono_s + self._crawl.order.logging.progress_interval_s
        if mono_s >= self._status_due:
            self.publish_status()
            self._status_due = mono_s + self._status_every_s

    def state_changed(self, state: str, message: str) -> None:
        """Once the logs are open: the ``CRAWL …`` line of progress-statistics.log (not for
        PREPARING), then status.json. At FINISHED the display shows the end, then stops."""
        c = self._crawl
        if c.logs is not None:
            if state != "PREPARING":
                word = _PROGRESS_WORDS.get(state, state)
                c.logs.progress.write(
                    f"{log14(c.clock.time())} CRAWL {word} - {message or state.title()}"
                )
            if state == "FINISHED":
                self._display_due = 0.0
            self.publish_status()
        if state == "FINISHED" and c.display is not None:
            c.display.stop(None)

    def write_progress(self) -> None:
        """A row of progress-statistics.log (once the crawl has started running)."""
        c = self._crawl
        if c.frontier is None or c.logs is None or self._progress is None:
            return
        totals = c.stats.counts()
        row = self._progress.sample(
            c.clock.time(),
            c.frontier.snapshot(),
            downloaded=totals.succeeded,
            failed=totals.failed,
            total_bytes=totals.bytes,
            busy_threads=c.pool.busy_threads() if c.pool else 0,
        )
        self.last_row = row
        c.logs.progress.write(row.line())

    @property
    def last_status(self) -> dict[str, Any] | None:
        """The status document published last (None before the first); read from any thread
        (the reference is replaced whole, never changed in place)."""
        return self._last_doc

    def publish_status(self) -> None:
        """Build and write status.json and redraw the display (the controller's thread only)."""
        c = self._crawl
        if c.frontier is not None:
            self._snapshot = c.frontier.snapshot()
        mono_s = c.clock.monotonic()
        if mono_s >= self._slow_parts_due or c.state not in ("RUNNING", "PAUSED"):
            self._busiest = c.stats.busiest_hosts(10)
            queues = c.frontier_abilities.queues if c.frontier_abilities is not None else None
            self._paced = queues.paced_servers(10) if queues is not None else []
            self._held = self._held_servers()
            self._processors = processor_entries(c.chains)
            self._slow_parts_due = mono_s + SLOW_PARTS_INTERVAL_S
        elif self._held is None:  # no reading yet (the frontier came after the last one)
            self._held = self._held_servers()
        pool = c.pool
        doc = self.status.document(
            state=c.state,
            exit_status=c.exit_status,
            now_s=c.clock.time(),
            mono_s=mono_s,
            started_s=self._start_s,
            elapsed_s=self.elapsed_s(),
            counts=c.stats.counts(),
            snap=self._snapshot,
            busy_threads=pool.busy_threads() if pool is not None else 0,
            total_threads=pool.size if pool is not None else c.order.toe_threads,
            thread_steps=pool.step_counts() if pool is not None else {},
            busiest=self._busiest,
            block_rules=c.block_rules.patterns,
            seeds=len(c.seed_uris),
            processors=self._processors,
            retrying=self._retries_waiting(),
        )
        doc["paced_servers"] = [
            {"server": server, "gap_ms": round(gap_s * 1000, 1)} for server, gap_s in self._paced
        ]
        if self._held is not None:
            doc["held_servers"], doc["parked_queues"] = self._held
        doc["pause_reasons"] = sorted(c.pause_reasons)
        doc["disk"] = c.disk_guard.status()
        self.status.publish(doc)
        self._last_doc = doc
        if c.display is not None and mono_s >= self._display_due:
            c.display.update(doc)
            self._display_due = mono_s + c.display.interval_s

    def _held_servers(self) -> tuple[int, int] | None:
        """``(servers, queues)`` the server cap holds, if the frontier tells (None if it
        cannot now: a Redis Cluster, Redis away)."""
        abilities = self._crawl.frontier_abilities
        held = abilities.held if abilities is not None else None
        if held is None:
            return None
        try:
            return held.held_servers()
        except Exception:  # noqa: BLE001 - a reading for metrics never stops the status
            return None

    def _retries_waiting(self) -> RetriesWaiting | None:
        """The URIs the frontier holds for a retry after a failed try, if it tells."""
        abilities = self._crawl.frontier_abilities
        queues = abilities.queues if abilities is not None else None
        return queues.retries_waiting(RETRIES_SHOWN) if queues is not None else None

    # ------------------------------------------------------------------ reports
    def write_reports(self) -> list[Path]:
        """Write every report of ``reports/`` from the live crawl (also while it runs)."""
        c = self._crawl
        now_s = c.clock.time()
        summary = CrawlSummary(
            c.order.name,
            c.exit_status or f"{c.state} - Active",
            round(self.elapsed_s() * 1000),
            tuple(c.seed_uris),
        )
        texts = render_reports(
            c.stats.totals(),
            summary,
            processors=processors_report(processor_entries(c.chains), now_s),
            frontier=self._frontier_report(now_s),
            threads=threads_report(c.pool, now_s),
        )
        paths = write_reports(c.run_dir / "reports", texts)
        c.logger.info("reports_written", dir=str(c.run_dir / "reports"))
        return paths

    def write_change_report(self) -> None:
        """``reports/changes-report.txt`` and ``.json`` against the crawl named by
        ``history.import_from`` (none if it names none). Call it once the crawl history is
        closed. A worker of a ``--workers`` crawl writes none: its launcher writes the
        crawl-wide report. A failure is logged (``change_report_failed``), never raised."""
        c = self._crawl
        if c.order.frontier.store.params.get("worker_id"):
            return
        try:
            summary = write_change_report(c.run_dir)
        except ChangeReportError as exc:
            c.logger.warning("change_report_failed", error=str(exc))
            return
        except Exception:
            c.logger.exception("change_report_failed")
            return
        if summary is not None:
            c.logger.info(
                "change_report_written", path=str(summary.text_path), earlier=str(summary.earlier),
                **summary.counts,
            )  # fmt: skip

    def _frontier_report(self, now_s: float) -> str:
        c = self._crawl
        abilities = c.frontier_abilities
        if abilities is None:
            return basic_frontier_report(c.order.name, {}, now_s)
        try:
            return frontier_summary_report(abilities, c.order.name, now_s)
        except Exception:
            c.logger.exception("frontier_report_failed")
        return basic_frontier_report(
            c.order.name, frontier_entry(abilities.frontier.snapshot()), now_s
        )
