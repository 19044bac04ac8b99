"""SeedModule: the crawl's seeds — read from the order, offered to the frontier, fed to the scope.

:meth:`~SeedModule.load` reads ``seeds.file`` and ``seeds.urls``
(:func:`crawler.seeds.seed_list.load_seeds`): each bad seed becomes a ``bad_seed`` warning and a
uri-errors.log line, and the scope is bound to the seeds and the ``+``/``-`` directives, so
seeds-as-SURT-prefixes rules admit them. Given the run directory, it also reads back the seeds that
joined an earlier launch of this run (the journal ``RUN_DIR/seeds-added.txt``), so ``crawler
resume`` keeps them and their scope. :meth:`~SeedModule.schedule_all` offers every seed to the
frontier (counted as a seed in the statistics; on resume the uniq filter already holds them).
:meth:`~SeedModule.add` takes more seeds while the crawl runs (a ``*.seeds`` action file) and binds
the scope again; :meth:`~SeedModule.add_discovered` makes one URI a seed (the target of a seed's
redirect: Heritrix's ``seedsRedirectNewSeeds``) and tells the scope of it without rebinding (and, in
a distributed crawl, the other workers, through :attr:`publish`). Both write the journal. In a
distributed crawl every URI scheduled carries how many shared seeds its worker knew (:meth:`stamp`);
a worker that processes a URI stamped ahead of itself fetches the ones it missed first
(:meth:`catch_up_for`), so a page under a new seed is scoped alike by every worker.
With an :class:`~crawler.netguard.AddressPolicy` (``addresses``), the servers the operator's
seeds name (the order's, a ``*.seeds`` file's; not a redirect's) and the hosts the operator's
SURT prefixes name whole (``+`` directives, the scope rules' ``surts``) may be fetched although
their addresses are not public. A seed whose line
sets ``max_hops`` carries it (``CrawlURI.seed_max_hops``) to every URI descended from it.
:attr:`uris` and :attr:`directives` are one list each for the crawl's life, changed in place, so
whatever holds them (the controller, rules bound to the seeds) sees the seeds added later.

Thread-safety: :meth:`add_discovered` is called by ToeThreads, the rest by the controller's thread;
one lock serializes every change (and the scope's binding), so a seed is never lost between a
rebinding and an addition. Heritrix counterpart: ``SeedModule`` (announcing seeds to the frontier
and to the scope's seed listeners; ``actOn`` for seeds added to a running crawl).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import structlog

from crawler.curi import CrawlURI, SchedulingDirective
from crawler.decide.decide_rule import DecideRuleSequence, RuleContext
from crawler.decide.surt_rules import SurtPrefixedDecideRule
from crawler.netguard import AddressPolicy
from crawler.order.schema import CrawlOrder
from crawler.seeds.seed_list import (
    ADDED_SEEDS_FILE,
    REDIRECT_NOTE,
    SeedList,
    load_seeds,
    read_added_seeds,
)
from crawler.stats import CrawlStats
from crawler.surt import prefix_from_directive
from crawler.urls import UriError

SEEDS_VERSION_KEY = "seedsVersion"
"""Key of ``CrawlURI.data``: how many shared seeds the worker that scheduled the URI knew."""


class SeedModule:
    """The seeds and scope directives of one crawl."""

    def __init__(
        self,
        order: CrawlOrder,
        scope: DecideRuleSequence,
        stats: CrawlStats,
        schedule: Callable[[CrawlURI], bool],
        run_dir: Path | None = None,
        addresses: AddressPolicy | None = None,
    ) -> None:
        self.order = order
        self.addresses = addresses
        self.scope = scope
        self.stats = stats
        self._schedule = schedule
        self.run_dir = run_dir
        self.uris: list[str] = []
        self.directives: list[str] = []
        self._known: set[str] = set()
        self._lock = threading.Lock()
        self.publish: Callable[[str, str | None], None] | None = None
        """Set by a worker of a distributed crawl: tells the others of a discovered seed."""
        self.fetch_shared: Callable[[int], list[tuple[str, str | None]]] | None = None
        """Set by a worker of a distributed crawl: the shared seeds ``(uri, via)`` from the
        n-th on."""
        self.version = 0
        """How many shared seeds this worker has applied (0 outside distributed crawls)."""
        self.max_hops: dict[str, int] = {}

    def load(self, logger: Any, uri_error: Callable[[str | None, str, str], None]) -> None:
        """Read the order's seeds (bad ones are logged and skipped) and the journal's, then bind
        the scope."""
        seeds = load_seeds(self.order)
        for problem in seeds.errors:
            logger.warning("bad_seed", problem=problem)
            uri_error(None, problem, problem.split(" ")[0])
        added = read_added_seeds(self.run_dir) if self.run_dir is not None else SeedList()
        with self._lock:
            self.uris[:] = seeds.uris
            self.directives[:] = seeds.directives
            self._known = set(seeds.uris)
            new = [uri for uri in added.uris if uri not in self._known]
            self.uris.extend(new)
            self._known.update(new)
            self.directives.extend(added.directives)
            self.max_hops.clear()
            self.max_hops.update(seeds.max_hops)
            self.max_hops.update({u: added.max_hops[u] for u in new if u in added.max_hops})
            self._bind_scope()
            named = [u for u in added.uris if u not in added.redirected]
            self._allow([*seeds.uris, *named], [*seeds.directives, *added.directives])
        if added.uris or added.directives:
            logger.info("added_seeds_restored", seeds=len(new), directives=len(added.directives))

    def schedule_all(self) -> None:
        """Offer every seed to the frontier."""
        # On resume the uniq filter already holds the seeds, so scheduling them again adds nothing
        # unless the crash came before they were stored.
        for uri in list(self.uris):
            self._schedule_seed(uri)

    def add(self, seeds: SeedList) -> int:
        """Add seeds (and scope directives) to the running crawl; returns how many were queued.

        The scope is bound again with every seed, so seeds-as-SURT-prefixes rules admit them.
        """
        with self._lock:
            new = [uri for uri in seeds.uris if uri not in self._known]
            self.uris.extend(new)
            self._known.update(new)
            self.directives.extend(seeds.directives)
            self.max_hops.update({u: seeds.max_hops[u] for u in new if u in seeds.max_hops})
            opts = seeds.max_hops
            lines = [f"{u} max_hops={opts[u]}" if u in opts else u for u in new]
            self._write_journal([*lines, *seeds.directives])
            self._bind_scope()
            self._allow(seeds.uris, seeds.directives)
        return sum(1 for uri in new if self._schedule_seed(uri))

    def add_discovered(self, uri: str, via: str | None = None, *, announce: bool = True) -> bool:
        """Make ``uri`` (normalized) a seed of the running crawl: the scope learns its prefix,
        the seeds report lists it, the journal keeps it, and (with ``announce``) :attr:`publish`
        tells the other workers. False if it was a seed already.

        The caller schedules the URI itself (with its hop path and via). Thread-safe.
        """
        with self._lock:
            if uri in self._known:
                return False
            self.uris.append(uri)
            self._known.add(uri)
            self._write_journal([uri + (f"  {REDIRECT_NOTE} {via}" if via else "")])
            self.scope.seed_added(uri)
        self.stats.note_seed(uri)
        publish = self.publish
        if announce and publish is not None:
            try:
                publish(uri, via)
                self.catch_up()  # so the version stamped on what this worker schedules counts it
            except Exception as exc:  # noqa: BLE001 - the others learn it when they meet the URI
                structlog.get_logger("crawler").warning(
                    "added_seed_not_published", uri=uri, error=str(exc)
                )
        return True

    def catch_up(self, version: int = -1) -> None:
        """Apply the shared seeds this worker has not applied yet — all of them, or only if
        ``version`` (a URI's :data:`SEEDS_VERSION_KEY`) is ahead of :attr:`version`. Raises what
        :attr:`fetch_shared` raises. Thread-safe (applying a seed twice is harmless)."""
        fetch = self.fetch_shared
        start = self.version
        if fetch is None or 0 <= version <= start:
            return
        added = fetch(start)
        for uri, via in added:
            self.add_discovered(uri, via, announce=False)
        with self._lock:
            self.version = max(self.version, start + len(added))

    def stamp(self, curis: Iterable[CrawlURI]) -> None:
        """Write :attr:`version` on URIs about to be scheduled (when there is one), so whichever
        worker processes them first catches up with the seeds this one knew."""
        version = self.version
        if version:
            for curi in curis:
                curi.data[SEEDS_VERSION_KEY] = version

    def catch_up_for(self, curi: CrawlURI) -> None:
        """:meth:`catch_up` with the version ``curi`` was scheduled with; a Redis failure is
        logged and leaves the scope as it is."""
        version = curi.data.get(SEEDS_VERSION_KEY)
        if isinstance(version, int) and version > self.version:
            try:
                self.catch_up(version)
            except Exception as exc:  # noqa: BLE001 - Redis away: the next poll catches up
                structlog.get_logger("crawler").warning("added_seeds_not_fetched", error=str(exc))

    def _bind_scope(self) -> None:
        self.scope.bind(
            RuleContext(seeds=self.uris + self.directives, base_dir=self.order.base_dir)
        )

    def _allow(self, uris: Iterable[str], directives: Iterable[str]) -> None:
        """Tell the address policy which servers and hosts the operator named."""
        policy = self.addresses
        if policy is None:
            return
        policy.allow_seeds(uris)
        for directive in directives:
            if directive.startswith("+"):
                try:
                    policy.allow_surt_prefix(prefix_from_directive(directive[1:]))
                except UriError:
                    continue
        for rule in self.scope.rules:
            if isinstance(rule, SurtPrefixedDecideRule) and rule.params.decision == "ACCEPT":
                for prefix in rule.operator_prefixes:
                    policy.allow_surt_prefix(prefix)

    def _write_journal(self, lines: Iterable[str]) -> None:
        text = "".join(line + "\n" for line in lines)
        if self.run_dir is None or not text:
            return
        try:
            with (self.run_dir / ADDED_SEEDS_FILE).open("a", encoding="utf-8") as out:
                out.write(text)
        except OSError as exc:
            # The seeds still count in this launch; only a resume would not know them.
            structlog.get_logger("crawler").warning(
                "added_seeds_not_journaled", error=str(exc), lines=text.count("\n")
            )

    def _schedule_seed(self, uri: str) -> bool:
        self.stats.note_seed(uri)
        curi = CrawlURI(
            uri=uri,
            is_seed=True,
            directive=SchedulingDirective.MEDIUM,
            source_tag=uri if self.order.seeds.source_tag_seeds else None,
            seed_max_hops=self.max_hops.get(uri, -1),
        )
        return self._schedule(curi)
