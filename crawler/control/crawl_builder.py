"""CrawlBuilder: wires one crawl's parts from its order, in its run directory, and unwires them.

The CrawlController calls it while PREPARING, in this order: :meth:`~CrawlBuilder.claim_run_dir`
(the order names a contact; no other live crawl owns the run directory, else
:class:`CrawlInUseError`), :meth:`~CrawlBuilder.lay_out_run_dir` (subdirectories,
``order.effective.yaml``, the PID file, the application log), :meth:`~CrawlBuilder.open_logs`
(after reading back what the run directory keeps: statistics on resume, block rules),
:meth:`~CrawlBuilder.build_frontier` (the class ``frontier.class`` names, over
``order.frontier``'s store, queue-assignment policy and uniq filter; its optional abilities
checked once, :class:`~crawler.frontier.frontier_abilities.FrontierAbilities`),
:meth:`~CrawlBuilder.open_server_journal`,
:meth:`~CrawlBuilder.open_history`, :meth:`~CrawlBuilder.open_collections` (the earlier
collections of ``dedup``) and :meth:`~CrawlBuilder.start_processors` (with their
:class:`~crawler.processor.ProcessorContext`, rules bound to the seeds). At the end of the crawl
:meth:`~CrawlBuilder.stop_processors` and :meth:`~CrawlBuilder.release_run_dir` undo it.
:func:`new_run_dir` makes a fresh run directory for a new launch.

The builder reads the crawl's parts from its :class:`WiredCrawl` (the CrawlController) and keeps
nothing it builds: the controller holds that. Made, it hands the crawl's sheets to the scope rules
(and later, in the context, to the processors) as the core's
:class:`~crawler.param_overrides.ParamOverrides`. Not thread-safe: the controller's thread only.
Heritrix counterpart: the Spring wiring of ``crawler-beans.cxml`` (``CrawlJob``).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

import structlog

from crawler import __version__
from crawler.alerts.alert_forwarder import AlertForwarder, forwarder_for
from crawler.archive.collection_set import CollectionSet, CollectionSetError
from crawler.chain import ProcessorChains
from crawler.clock import Clock
from crawler.continuity.job_digest_index import job_index_location
from crawler.continuity.run_digest_index import RunDigestIndex, open_run_digest_index
from crawler.control.steering import BlockRules
from crawler.crawler_error import CrawlerError
from crawler.curi import CrawlURI
from crawler.decide.decide_rule import DecideRuleSequence, RuleContext
from crawler.disk import DiskGuard
from crawler.frontier.assignment import QueueAssignmentPolicy
from crawler.frontier.frontier import Frontier
from crawler.frontier.frontier_abilities import ClaimsUris, FrontierAbilities
from crawler.frontier.store.queue_store import QueueStore, store_is_shared
from crawler.history import CrawlHistory
from crawler.logs.applog import close_app_logging, configure_app_logging
from crawler.logs.crawl_logs import CrawlLogs
from crawler.netguard import AddressPolicy
from crawler.order import components
from crawler.order.errors import OrderError, OrderIssue
from crawler.order.loader import effective_yaml, require_contact_url
from crawler.order.preflight import frontier_store_issues
from crawler.order.schema import CrawlOrder
from crawler.processor import ProcessorContext
from crawler.reports.status import is_running, read_status
from crawler.schedule.previous_run import resolve_previous
from crawler.secrets.secret_refs import write_stored
from crawler.seeds.seed_list import read_added_seeds
from crawler.servers import ServerCache
from crawler.sheets.sheet_overlays import SheetOverlays
from crawler.stats import CrawlStats
from crawler.tally import TallyStore
from crawler.uniq import UriUniqFilter

_T = TypeVar("_T")

PID_FILE = "crawler.pid"
RUN_SUBDIRS = ("logs", "warcs", "state", "reports", "action")
HOSTS_KEEP_S = 21600.0
"""Seconds the crawl's Redis keeps a shared lookup at least (the default IP validity)."""


class CrawlInUseError(CrawlerError, OSError):
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


class WiredCrawl(Protocol):
    """What the builder reads of the crawl (the CrawlController's attributes and methods)."""

    order: CrawlOrder
    run_dir: Path
    clock: Clock
    logger: Any
    stats: CrawlStats
    servers: ServerCache
    addresses: AddressPolicy
    stopping: threading.Event
    chains: ProcessorChains
    scope: DecideRuleSequence
    seed_uris: list[str]
    block_rules: BlockRules
    disk_guard: DiskGuard
    sheets: SheetOverlays
    digest_index: RunDigestIndex | None

    def schedule(self, curi: CrawlURI) -> bool: ...
    def schedule_many(self, curis: Sequence[CrawlURI]) -> list[bool]: ...
    def add_seed(self, uri: str, via: str | None) -> bool: ...
    def catch_up_seeds(self, curi: CrawlURI) -> None: ...


class CrawlBuilder:
    """Builds the parts of one crawl; ``on_final`` and ``uri_error`` are the crawl's callbacks
    for the frontier (a URI's final disposition) and the processors (uri-errors.log)."""

    def __init__(
        self,
        crawl: WiredCrawl,
        on_final: Callable[[CrawlURI], None],
        uri_error: Callable[[str | None, str, str], None],
    ) -> None:
        self._crawl = crawl
        self.order = crawl.order
        self.run_dir = crawl.run_dir
        self.state_dir = crawl.run_dir / "state"
        self._on_final = on_final
        self._uri_error = uri_error
        self._tallies: TallyStore | None = None
        self._alerts: AlertForwarder | None = None
        # The sheets reach the core through its ParamOverrides protocol: the scope rules get
        # them here, the processors through their context (start_processors).
        for index, rule in enumerate(crawl.scope.rules):
            rule.attach_sheets(crawl.sheets, index)

    def claim_run_dir(self) -> None:
        """Refuse an order without a contact URL, or a run directory a live crawl is using."""
        require_contact_url(self.order)
        live = read_status(self.run_dir)
        if is_running(live) and live is not None and live.get("pid") != os.getpid():
            raise CrawlInUseError(
                f"{self.run_dir} is in use by a running crawl (pid {live.get('pid')}); "
                "stop it first (crawler terminate)"
            )

    def lay_out_run_dir(self) -> Any:
        """Create the run's directories, ``order.effective.yaml`` (with ``history.import_from:
        previous`` resolved to the job's latest finished run, or to none) and the PID file,
        start the application log; returns the crawl's logger."""
        run = self.run_dir
        for sub in RUN_SUBDIRS:
            (run / sub).mkdir(parents=True, exist_ok=True)
        # history.import_from: previous becomes the run it names, in the effective order too.
        self.order, previous = resolve_previous(self.order, run)
        self._crawl.order = self.order
        (run / "order.effective.yaml").write_text(effective_yaml(self.order), encoding="utf-8")
        # state/ keeps what a resume needs (cookies, logins, secrets written in clear in the
        # order): the owner's alone.
        os.chmod(self.state_dir, 0o700)
        if self.order.secrets is not None:
            write_stored(self.state_dir, self.order.secrets)
        (run / PID_FILE).write_text(f"{os.getpid()}\n", encoding="ascii")
        self._alerts = forwarder_for(
            self.order.alerts, self.order.name, run.name, f"crawler/{__version__}"
        )
        configure_app_logging(
            run / "logs", self.order.logging.level, self.order.logging.console, self._alerts
        )
        logger = structlog.get_logger("crawler").bind(crawl=self.order.name)
        if previous is not None and previous.run_dir is None:
            logger.info(
                "history_import_skipped",
                reason="history.import_from: previous, and the job has no finished run yet: "
                "this run starts without an earlier history",
                job_dir=str(previous.job_dir),
            )
        elif previous is not None:
            logger.info("history_import_previous", run_dir=str(previous.run_dir))
        return logger

    def open_logs(self, resume: bool) -> CrawlLogs:
        """crawl.log and the other logs of ``logs/``, opened for appending. First, what the run
        directory keeps is read back: on resume the statistics replay the crawl.log so far, and
        the operator's block rules are loaded."""
        c = self._crawl
        if resume:
            # Seeds that joined the crawl with a hop path (a seed's redirect) count as seeds.
            added = set(read_added_seeds(self.run_dir).uris)
            replayed = c.stats.replay_crawl_log(self.run_dir / "logs" / "crawl.log", added)
            c.logger.info("crawl_resuming", finished_before=replayed)
        c.block_rules.load()
        return CrawlLogs(self.run_dir / "logs", extra_info=self.order.logging.crawl_log_extra_info)

    def build_frontier(self) -> FrontierAbilities:
        """The frontier ``frontier.class`` names over the parts of ``order.frontier``, opened on
        the run's state directory, with its optional abilities (checked here, once). Raises
        :class:`OrderError` if the class does not suit the store (as preflight does)."""
        c = self._crawl
        fcfg = self.order.frontier
        issues = frontier_store_issues(fcfg)
        if issues:
            raise OrderError(issues)
        make: Callable[..., Frontier] = components.frontier_class(fcfg.class_)
        store = components.build_component(fcfg.store, QueueStore, "frontier.store")
        policy = components.build_component(
            fcfg.queue_assignment, QueueAssignmentPolicy, "frontier.queue_assignment"
        )
        policy.bind_servers(c.servers)  # the IP policy keys queues by the addresses DNS learns
        uniq = components.build_component(fcfg.uniq_filter, UriUniqFilter, "frontier.uniq_filter")
        frontier = make(
            store,
            policy,
            uniq,
            fcfg,
            clock=c.clock,
            on_final=self._on_final,
            logger=c.logger,
            uri_error=self._uri_error,
        )
        frontier.open(self.state_dir)
        return FrontierAbilities.of(frontier)

    def open_server_journal(self) -> None:
        """Journal robots.txt and DNS outcomes in ``state/servers.jsonl``: they survive a restart
        (even kill -9), so a resumed crawl does not fetch them again. With a shared frontier,
        share them with the other workers through the crawl's Redis
        (:mod:`crawler.server_facts`), so each host's are fetched once per crawl."""
        servers = self._crawl.servers
        servers.attach_journal(self.state_dir / "servers.jsonl")
        if self._store_is_shared():
            from crawler.server_facts.redis_server_facts import RedisServerFacts

            share = self._connect_shared(RedisServerFacts.connect, outage=False)
            validity_s = self.order.robots.validity_s
            servers.attach_share(share, validity_s, max(validity_s, HOSTS_KEEP_S))

    def _store_is_shared(self) -> bool:
        """Whether the frontier's store is shared by the workers of a crawl (Redis)."""
        store = self.order.frontier.store
        return store_is_shared(components.resolve_class(store.class_, QueueStore, "frontier.store"))

    def _connect_shared(self, connect: Callable[..., _T], *, outage: bool = True) -> _T:
        """``connect(url, namespace, start_wait_s=, logger=[, outage_timeout_s=])`` with the
        shared frontier store's parameters: the crawl's Redis and key prefix. A Redis that
        cannot be reached is an order error naming ``frontier.store.params.url``."""
        from crawler.frontier.redis.redis_conn import RedisUnavailableError

        params = self.order.frontier.store.params
        kwargs: dict[str, Any] = {
            "start_wait_s": float(params.get("start_wait_s") or 0.0),
            "logger": self._crawl.logger,
        }
        if outage:
            kwargs["outage_timeout_s"] = float(params.get("outage_timeout_s") or 600.0)
        try:
            return connect(
                str(params.get("url") or "redis://127.0.0.1:6379/0"),
                str(params.get("namespace") or ""),
                **kwargs,
            )
        except RedisUnavailableError as exc:
            raise OrderError([OrderIssue("frontier.store.params.url", str(exc))]) from None

    def open_history(self) -> CrawlHistory | None:
        """The crawl history (``history`` in the order), or None when it is off."""
        cfg = self.order.history
        if not cfg.enabled:
            return None
        try:
            return CrawlHistory.open(self.state_dir, self.import_source())
        except (FileNotFoundError, ValueError) as exc:
            raise OrderError([OrderIssue("history.import_from", str(exc))]) from None

    def import_source(self) -> Path | None:
        """The earlier crawl ``history.import_from`` names (a run or state directory), if any."""
        source = self.order.history.import_from
        return Path(self.order.base_dir) / Path(source).expanduser() if source else None

    def open_digest_index(self, history: CrawlHistory | None) -> RunDigestIndex | None:
        """The payload-digest index (order key ``digest_index``): this run's own, or the crawl's
        Redis one when the frontier is shared, with the job's index of earlier crawls and the
        imported crawl's behind it; None without a history (no dedup then)."""
        if history is None:
            return None
        order = self.order
        located = job_index_location(order.digest_index.job_index, self.run_dir)
        job_index, runs_dir = located if located is not None else (None, None)
        shared = None
        if self._store_is_shared():
            from crawler.continuity.redis_digest_index import RedisDigestIndex

            shared = self._connect_shared(RedisDigestIndex.connect)
        try:
            return open_run_digest_index(
                self.state_dir,
                job_index=job_index,
                runs_dir=runs_dir,
                import_from=self.import_source(),
                shared=shared,
                logger=self._crawl.logger,
            )
        except OSError as exc:
            if shared is not None:
                shared.close()
            raise OrderError(
                [OrderIssue("digest_index", f"cannot open the digest index: {exc}")]
            ) from None

    def open_tallies(self) -> TallyStore | None:
        """The crawl-wide tallies every worker shares (quotas, trap budgets, form logins) when
        the frontier is in Redis, under the crawl's namespace; None for a crawl of one process
        (its rules keep their tallies in memory and ``state/``). Closed by
        :meth:`stop_processors`."""
        if not self._store_is_shared():
            return None
        from crawler.tally.redis_tally_store import RedisTallyStore

        self._tallies = self._connect_shared(RedisTallyStore.connect)
        return self._tallies

    def open_collections(self) -> CollectionSet | None:
        """The earlier collections ``dedup.collections`` names, or None when it names none."""
        try:
            return CollectionSet.open(
                self.order.dedup, Path(self.order.base_dir), self.state_dir, self._crawl.logger
            )
        except CollectionSetError as exc:
            raise OrderError([OrderIssue(exc.path, str(exc))]) from None

    def start_processors(
        self,
        abilities: FrontierAbilities,
        history: CrawlHistory | None,
        collections: CollectionSet | None = None,
    ) -> None:
        """Bind each processor's ``should_process_rule`` to the seeds, then start the chains
        with the processors' context (the frontier's abilities among its members)."""
        c = self._crawl
        seen = abilities.seen
        ctx = ProcessorContext(
            run_dir=self.run_dir,
            state_dir=self.state_dir,
            order=self.order,
            stats=c.stats,
            logger=c.logger,
            clock=c.clock,
            stopping=c.stopping,
            servers=c.servers,
            scope=c.scope,
            schedule=c.schedule,
            uri_error=self._uri_error,
            history=history,
            digest_index=c.digest_index,
            collections=collections,
            schedule_many=c.schedule_many,
            seen_recently=seen.seen_recently if seen is not None else None,
            add_seed=c.add_seed,
            catch_up_seeds=c.catch_up_seeds,
            watch_disk=c.disk_guard.watch,
            sheets=c.sheets,
            claim_uri=self._claimer(abilities.claim),
            finish_inline=self._finish_inline,
            find_processor=c.chains.find,
            inline_gate=abilities.inline_gate,
            addresses=c.addresses,
            tallies=self.open_tallies(),
            in_rotation=abilities.rotation.in_rotation if abilities.rotation else None,
        )
        for chain in c.chains.chains:
            for proc in chain:
                if proc.should_process_rule is not None:
                    proc.should_process_rule.bind(
                        RuleContext(seeds=c.seed_uris, base_dir=self.order.base_dir)
                    )
        c.chains.start(ctx)

    def _claimer(self, claims: ClaimsUris | None) -> Callable[[CrawlURI], bool] | None:
        """The frontier's ``claim`` that also counts a claimed URI as scheduled for its host
        (so the hosts report's remaining counts stay right when it finishes inline)."""
        if claims is None:
            return None
        stats = self._crawl.stats
        claim = claims.claim

        def claim_uri(curi: CrawlURI) -> bool:
            if claim(curi):
                stats.note_scheduled(curi.uri)
                return True
            return False

        return claim_uri

    def _finish_inline(self, curi: CrawlURI) -> None:
        """A URI fetched outside the frontier (a browser page's sub-resource): the write chain,
        then its final disposition, as the frontier would give it. Thread-safe like the chains."""
        try:
            for proc in self._crawl.chains["write"]:
                proc.process(curi)
        finally:
            self._on_final(curi)

    def stop_processors(
        self, history: CrawlHistory | None, collections: CollectionSet | None = None
    ) -> None:
        """Stop the chains (in reverse order), close the history, the earlier collections and
        the servers' journal."""
        self._crawl.chains.stop()
        if self._tallies is not None:
            self._tallies.close()
            self._tallies = None
        digests = self._crawl.digest_index
        if digests is not None:
            try:
                digests.finish()
            except Exception:
                self._crawl.logger.exception("digest_index_save_failed")
            digests.close()
        if history is not None:
            history.close()
        if collections is not None:
            collections.close()
        self._crawl.servers.close_journal()
        self._crawl.servers.close_share()

    def release_run_dir(self, logs: CrawlLogs | None) -> None:
        """The crawl has ended: remove the PID file, close the logs and the application log."""
        (self.run_dir / PID_FILE).unlink(missing_ok=True)
        if logs is not None:
            logs.close()
        if self._alerts is not None:
            # The last alerts (crawl_finished) go out before the application log closes.
            sent = self._alerts.close(self.order.alerts.flush_timeout_s)
            structlog.get_logger("crawler").info(
                "alert_webhook_summary",
                sent=sum(c.sent for c in sent),
                failed=sum(c.failed for c in sent),
                dropped=sum(c.dropped for c in sent),
                unsent=sum(c.unsent for c in sent),
            )
            self._alerts = None
        close_app_logging()
