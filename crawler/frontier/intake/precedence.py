"""Scheduling policies of the frontier: URI cost, URI precedence and queue precedence.

Chosen by name in the order (``frontier.cost_policy``, ``uri_precedence_policy``,
``queue_precedence_policy``); lower precedence numbers are more urgent. Pure functions over a
CrawlURI or a WorkQueue, thread-safe.

Heritrix counterparts (the cost and precedence policies of its frontier):

* cost: ``UnitCostAssignmentPolicy`` (1), ``ZeroCostAssignmentPolicy`` (0),
  ``WagCostAssignmentPolicy`` (1, +1 with a query, +1 more when the via has the same path).
* URI precedence (the byte after the directive in a queue's sort key): ``CostUriPrecedencePolicy``
  (= cost, default), ``HopsUriPrecedencePolicy`` (1 + link hops), ``BaseUriPrecedencePolicy``
  (1); ``preset`` keeps what the scheduler set on the CrawlURI (``PreloadedUriPrecedencePolicy``).
* queue precedence: ``BaseQueuePrecedencePolicy`` (``base_queue_precedence``, 3),
  ``HighestUriQueuePrecedencePolicy`` (base + the best URI precedence the queue received since
  it was last empty — an upper bound, as it does not rise when that URI leaves),
  ``SuccessCountsQueuePrecedencePolicy``
  (:func:`~crawler.frontier.policy.queue_precedence.success_counts_precedence`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from crawler.curi import Hop
from crawler.frontier.policy.queue_precedence import success_counts_precedence

if TYPE_CHECKING:
    from crawler.curi import CrawlURI
    from crawler.frontier.workqueue import WorkQueue
    from crawler.order.schema import FrontierConfig


def unit_cost(curi: CrawlURI) -> int:
    """Every URI costs 1."""
    return 1


def zero_cost(curi: CrawlURI) -> int:
    """Nothing costs anything (budgets never run out)."""
    return 0


def wag_cost(curi: CrawlURI) -> int:
    """1; +1 with a query string; +1 more if the via's path (before ``?``) is the same."""
    uri = curi.uri
    q = uri.find("?")
    if q < 0:
        return 1
    via = curi.via or ""
    vq = via.find("?")
    same_path = via[: vq if vq >= 0 else len(via)] == uri[:q]
    return 3 if same_path else 2


COST_POLICIES: dict[str, Callable[[CrawlURI], int]] = {
    "unit": unit_cost,
    "zero": zero_cost,
    "wag": wag_cost,
}


def _link_hops(curi: CrawlURI) -> int:
    # Dropped hops are mostly links on long paths; counting them keeps deep URIs deep.
    return curi.hop_path.count(Hop.LINK) + curi.hops_dropped


def uri_precedence_function(
    config: FrontierConfig, cost: Callable[[CrawlURI], int]
) -> Callable[[CrawlURI], int] | None:
    """The function giving a new URI its precedence, or None to keep ``curi.precedence``."""
    name = config.uri_precedence_policy
    if name == "cost":
        return cost
    if name == "hops":
        return lambda curi: 1 + _link_hops(curi)
    if name == "base":
        return lambda curi: 1
    return None


def queue_precedence_function(config: FrontierConfig) -> Callable[[WorkQueue], int]:
    """The function giving a queue its precedence when it (re)enters the inactive FIFOs."""
    base = config.base_queue_precedence
    name = config.queue_precedence_policy
    if name == "highest_uri":
        return lambda q: base + q.best_uri_precedence
    if name == "success_counts":
        return lambda q: success_counts_precedence(base, q.succeeded)
    return lambda q: base


def sort_ahead_of(curi: CrawlURI, via_key: int) -> None:
    """Give a prerequisite the directive one above its via's so it sorts ahead of it in the
    via's queue (``via_key``: the via's sort key). A via already at HIGHEST (0) leaves only the
    precedence byte to win with."""
    via_directive = via_key >> 56
    curi.directive = min(curi.directive, max(0, via_directive - 1))
    if curi.directive >= via_directive:
        via_precedence = (via_key >> 48) & 0xFF
        curi.precedence = min(curi.precedence, max(0, via_precedence - 1))
