"""SeedModule: the crawl's seeds — read from the order, offered to the frontier, fed to the scope.

:meth:`~SeedModule.load` reads ``seeds.file`` and ``seeds.urls`` (:func:`crawler.seeds.load_seeds`):
each bad seed becomes a ``bad_seed`` warning and a uri-errors.log line, and the scope is bound to
the seeds and the ``+``/``-`` directives, so seeds-as-SURT-prefixes rules admit them.
:meth:`~SeedModule.schedule_all` offers every seed to the frontier (counted as a seed in the
statistics; on resume the uniq filter already holds them). :meth:`~SeedModule.add` takes more seeds
while the crawl runs (a ``*.seeds`` action file) and binds the scope again. A seed whose line
set ``max_hops`` carries it (``CrawlURI.seed_max_hops``) to every URI descended from it.
:attr:`uris` and :attr:`directives` are one list each for the crawl's life, changed in place, so
whatever holds them (the controller, rules bound to the seeds) sees the seeds added later.

Not thread-safe: only the controller's thread calls it (while preparing, then from the action
directory's poll); the seeds it schedules go through the thread-safe ``schedule``. Heritrix
counterpart: ``SeedModule`` (announcing seeds to the frontier and to the scope's seed
listeners; ``actOn`` for seeds added to a running crawl).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from crawler.curi import CrawlURI, SchedulingDirective
from crawler.decide.decide_rule import DecideRuleSequence, RuleContext
from crawler.order.schema import CrawlOrder
from crawler.seeds import SeedList, load_seeds
from crawler.stats import CrawlStats


class SeedModule:
    """The seeds and scope directives of one crawl."""

    def __init__(
        self,
        order: CrawlOrder,
        scope: DecideRuleSequence,
        stats: CrawlStats,
        schedule: Callable[[CrawlURI], bool],
    ) -> None:
        self.order = order
        self.scope = scope
        self.stats = stats
        self._schedule = schedule
        self.uris: list[str] = []
        self.directives: list[str] = []
        self.max_hops: dict[str, int] = {}

    def load(self, logger: Any, uri_error: Callable[[str | None, str, str], None]) -> None:
        """Read the order's seeds (bad ones are logged and skipped), then bind the scope."""
        seeds = load_seeds(self.order)
        for problem in seeds.errors:
            logger.warning("bad_seed", problem=problem)
            uri_error(None, problem, problem.split(" ")[0])
        self.uris[:] = seeds.uris
        self.directives[:] = seeds.directives
        self.max_hops.clear()
        self.max_hops.update(seeds.max_hops)
        self._bind_scope()

    def schedule_all(self) -> None:
        """Offer every seed to the frontier."""
        # On resume the uniq filter already holds the seeds, so scheduling them again adds nothing
        # unless the crash came before they were stored.
        for uri in self.uris:
            self._schedule_seed(uri)

    def add(self, seeds: SeedList) -> int:
        """Add seeds (and scope directives) to the running crawl; returns how many were queued.

        The scope is bound again with every seed, so seeds-as-SURT-prefixes rules admit them.
        """
        known = set(self.uris)
        new = [uri for uri in seeds.uris if uri not in known]
        self.uris.extend(new)
        self.directives.extend(seeds.directives)
        self.max_hops.update({uri: seeds.max_hops[uri] for uri in new if uri in seeds.max_hops})
        self._bind_scope()
        return sum(1 for uri in new if self._schedule_seed(uri))

    def _bind_scope(self) -> None:
        self.scope.bind(
            RuleContext(seeds=self.uris + self.directives, base_dir=self.order.base_dir)
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
