"""FrontierAbilities: what a frontier can do beyond the Frontier protocol, checked once.

Every frontier implements :class:`~crawler.frontier.frontier.Frontier`. Some also have optional
abilities, each a runtime-checkable protocol of its own:

* :class:`ClaimsUris` — ``claim(curi)`` marks a URI fetched outside the frontier (a browser
  page's sub-resource) as seen, so the frontier never queues it;
* :class:`GatesInlineFetches` — ``inline_gate``, the server gate such fetches pass
  (:class:`~crawler.frontier.politeness.inline_gate.InlineGate`);
* :class:`RecallsSeen` — ``seen_recently(uris)``, which URIs surely were seen, without a round
  trip;
* :class:`QueueIntrospection` — per-queue detail, URIs waiting for a retry, paced servers
  (status and reports);
* :class:`ServerCapIntrospection` — the busiest servers of the server cap;
* :class:`LatenessIntrospection` — the lateness guard's cap on the active queues;
* :class:`CountsRotation` — ``in_rotation()``, the queues in rotation now (what the fetcher's
  idle connection pool is sized from);
* :class:`CarriesWrites` — ``carry_before_queueing(source)``: writes another shared structure
  owes Redis (the digest index's entries) ride in the frontier's own round trips, applied
  before it queues anything.

:meth:`FrontierAbilities.of` tests a frontier against each protocol once, when the crawl is
built; the crawl keeps the result and its users read a field (None: the frontier lacks that
ability) instead of probing the frontier again. Immutable, so thread-safe; the abilities are the
frontier's own methods, as thread-safe as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from crawler.curi import CrawlURI
    from crawler.frontier.frontier import Frontier
    from crawler.frontier.frontier_report import QueueDetail
    from crawler.frontier.politeness.inline_gate import InlineGate
    from crawler.frontier.redis.redis_ride import Ride
    from crawler.frontier.retry.retry_watch import RetriesWaiting


@runtime_checkable
class ClaimsUris(Protocol):
    """A frontier that records URIs fetched outside it as seen."""

    def claim(self, curi: CrawlURI) -> bool:
        """Mark ``curi`` (canonicalized here) as seen without queueing it; True if it was new."""
        ...


@runtime_checkable
class GatesInlineFetches(Protocol):
    """A frontier whose server cap, pace and holds also govern fetches made outside it."""

    inline_gate: InlineGate


@runtime_checkable
class RecallsSeen(Protocol):
    """A frontier that can tell cheaply (locally, or in one round trip for a batch) which URIs it
    surely has seen."""

    def seen_recently(self, uris: Sequence[str]) -> list[bool]:
        """One flag per URI: True where it surely was seen (False: unknown, ask ``schedule``)."""
        ...


@runtime_checkable
class QueueIntrospection(Protocol):
    """A frontier that shows its queues, its retries and its adaptive pace."""

    def queue_details(self, limit: int = 2000) -> list[QueueDetail]:
        """The ``limit`` longest non-exhausted queues, longest first."""
        ...

    def retries_waiting(self, limit: int = 10) -> RetriesWaiting:
        """The URIs waiting for a retry after a failed try, the ``limit`` due soonest listed."""
        ...

    def paced_servers(self, limit: int = 20) -> list[tuple[str, float]]:
        """``(server, gap between fetch starts in s)`` of the most slowed servers, slowest
        first."""
        ...


@runtime_checkable
class ServerCapIntrospection(Protocol):
    """A frontier that shows how busy its server cap is."""

    def busy_servers(self, limit: int = 20) -> list[tuple[str, int, int]]:
        """``(server, fetches under way, queues parked on it)``, busiest first."""
        ...


@runtime_checkable
class HeldServersIntrospection(Protocol):
    """A frontier that counts the servers its server cap holds (for metrics)."""

    def held_servers(self) -> tuple[int, int] | None:
        """``(servers with every connection taken and queues parked on them, those queues)``
        crawl-wide, None if unknown; may do I/O and raise (call it off the hot path)."""
        ...


@runtime_checkable
class LatenessIntrospection(Protocol):
    """A frontier with a lateness guard on its active queues."""

    def lateness_guard(self) -> tuple[float, int, bool]:
        """``(cap on the active queues (inf: none), queues rotated out late, saturated now)``."""
        ...


@runtime_checkable
class CountsRotation(Protocol):
    """A frontier that tells how many queues are in rotation."""

    def in_rotation(self) -> int:
        """Queues in rotation now (ready, in process or waiting out their politeness delay;
        crawl-wide on a shared frontier): the hosts whose next fetch is coming. Cheap, takes no
        lock and does no I/O (a recent count, read on the fetch path)."""
        ...


@runtime_checkable
class CarriesWrites(Protocol):
    """A shared frontier that applies another structure's waiting writes before it queues."""

    def carry_before_queueing(self, source: Callable[[], Ride | None]) -> None:
        """Before queueing any URI, take ``source()`` (None: nothing to carry) and have its
        commands applied first, riding in the frontier's own round trips where they can."""
        ...


@dataclass(frozen=True)
class FrontierAbilities:
    """A frontier and its optional abilities (None where it lacks one)."""

    frontier: Frontier
    claim: ClaimsUris | None = None
    inline_gate: InlineGate | None = None
    seen: RecallsSeen | None = None
    queues: QueueIntrospection | None = None
    server_cap: ServerCapIntrospection | None = None
    lateness: LatenessIntrospection | None = None
    held: HeldServersIntrospection | None = None
    rotation: CountsRotation | None = None
    carries: CarriesWrites | None = None

    @classmethod
    def of(cls, frontier: Frontier) -> FrontierAbilities:
        """Test ``frontier`` against each ability's protocol (once: isinstance on a
        runtime-checkable protocol is slow, so never on a hot path)."""
        return cls(
            frontier,
            claim=frontier if isinstance(frontier, ClaimsUris) else None,
            inline_gate=frontier.inline_gate if isinstance(frontier, GatesInlineFetches) else None,
            seen=frontier if isinstance(frontier, RecallsSeen) else None,
            queues=frontier if isinstance(frontier, QueueIntrospection) else None,
            server_cap=frontier if isinstance(frontier, ServerCapIntrospection) else None,
            lateness=frontier if isinstance(frontier, LatenessIntrospection) else None,
            held=frontier if isinstance(frontier, HeldServersIntrospection) else None,
            rotation=frontier if isinstance(frontier, CountsRotation) else None,
            carries=frontier if isinstance(frontier, CarriesWrites) else None,
        )
