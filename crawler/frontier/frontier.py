"""The Frontier protocol and FrontierSnapshot: what the rest of the crawler sees of the frontier.

The frontier hands each ToeThread one CrawlURI at a time from a queue whose politeness time has
come, and takes it back in :meth:`Frontier.finished`. Implementations are thread-safe.

The order names the frontier's class (``frontier.class``); the crawl builds it as
``cls(store, queue_assignment, uniq_filter, frontier_config, clock=, on_final=, logger=,
uri_error=)`` with its parts unopened (no I/O), then calls :meth:`Frontier.open`. What a
frontier may do beyond this protocol (claim, inline gate, introspection, ...) is declared by the
protocols of :mod:`crawler.frontier.frontier_abilities`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, ClassVar, Protocol

from crawler.crawler_error import CrawlerError

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from crawler.curi import CrawlURI


@dataclass(frozen=True)
class FrontierSnapshot:
    """Counts at one moment, for progress-statistics.log, status and reports.

    ``queues`` maps a queue state (ready, in_process, snoozed, inactive, retired, exhausted) to
    how many queues are in it; ``longest`` lists the biggest queues as (key, size);
    ``inactive_by_precedence`` counts inactive queues per queue precedence, ``ineligible`` those
    at or past the precedence floor (never crawled).
    """

    discovered: int = 0
    queued: int = 0
    in_process: int = 0
    succeeded: int = 0
    failed: int = 0
    disregarded: int = 0
    queues: dict[str, int] = field(default_factory=dict)
    total_queues: int = 0
    max_depth: int = -1
    avg_depth: float = 0.0
    congestion: float = 0.0
    longest: tuple[tuple[str, int], ...] = ()
    inactive_by_precedence: dict[int, int] = field(default_factory=dict)
    ineligible: int = 0

    def ended(self) -> FrontierSnapshot:
        """The counts a crawl that has ended shows: with no URI queued or in process, a queue
        still counted snoozed (its last politeness delay running), ready or inactive is empty,
        so it is exhausted. Counts with URIs left (a limit ended the crawl) stay as they are."""
        waiting = ("ready", "snoozed", "inactive")
        if self.queued or self.in_process or not any(self.queues.get(s) for s in waiting):
            return self
        queues = dict(self.queues)
        queues["exhausted"] = queues.get("exhausted", 0) + sum(queues.get(s, 0) for s in waiting)
        queues.update({s: 0 for s in waiting if s in queues})
        return replace(self, queues=queues)


class FrontierStateError(CrawlerError):
    """The frontier's state directory cannot be used: written by an incompatible version,
    corrupt, or locked by another running process. ``str(error)`` is a message for the operator.
    """


class Frontier(Protocol):
    """The Heritrix frontier contract. All methods are thread-safe.

    ``shared`` says whether the frontier shares its queues with other crawler processes; it
    must run over a store that says the same (:attr:`QueueStoreBase.shared
    <crawler.frontier.store.queue_store.QueueStoreBase.shared>`; preflight refuses another pair).
    """

    shared: ClassVar[bool]

    def open(self, state_dir: Path) -> None:
        """Open the store and the uniq filter (under ``state_dir`` when they keep files) and
        recover what an earlier run of the crawl left. Called once, before any other method.

        Raises :class:`FrontierStateError` for a state it cannot use.
        """
        ...

    def schedule(self, curi: CrawlURI) -> bool:
        """Queue ``curi`` if its canonical form was never seen (or it is force-fetched).

        Returns True when it was queued. Never raises for a bad URI: it is refused and logged.
        """
        ...

    def schedule_many(self, curis: Sequence[CrawlURI]) -> list[bool]:
        """:meth:`schedule` each of ``curis`` in order (typically the outlinks of one page).

        Returns one flag per URI, True where it was queued. Implementations share the work
        among them (one lock hold, one store write, one round trip) so a page's links cost
        little more than one link.
        """
        ...

    def next(self, timeout_s: float) -> CrawlURI | None:
        """A URI whose queue may be fetched now, or None after ``timeout_s`` without one.

        Optional, outside the protocol: ``wake_waiters()``, making every ``next()`` blocked
        at the time return None at once; the toe pool calls it when it pauses or stops (a
        frontier without it leaves idle threads to their timeout,
        :data:`crawler.control.toepool.IDLE_WAIT_S`)."""
        ...

    def finished(self, curi: CrawlURI) -> bool:
        """Take back a URI handed out by :meth:`next`.

        Retries it (returns False) or records its final disposition, calling the frontier's
        final-disposition listener (crawl.log, stats) before returning True.
        """
        ...

    def is_empty(self) -> bool:
        """True when nothing is queued and nothing is in process."""
        ...

    def snapshot(self) -> FrontierSnapshot:
        """Current counts."""
        ...

    def close(self) -> None:
        """Flush and release the store. Idempotent."""
        ...
