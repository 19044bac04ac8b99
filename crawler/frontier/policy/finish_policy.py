"""FinishPolicy: what becomes of a finished URI, what it costs its queue, how long the queue waits.

Both frontiers call :meth:`FinishPolicy.settle` once per URI handed back by ``finished()`` and
only apply its :class:`FinishOutcome` to their state (the LevelDB/memory frontier under its
lock, the Redis frontier as FINISH's arguments):

* the retry decision is :meth:`RetryPolicy.take
  <crawler.frontier.retry.retry_policy.RetryPolicy.take>` (which counts the attempt): a truthy
  verdict sends the URI back to the head of its queue, which waits ``wait_s`` from now: the URI's
  ``retry_delay_s`` or a longer Retry-After back-off; a retry costs the queue the URI's cost, unless
  it was deferred (-50);
* otherwise the URI is *disregarded* (costs nothing), *succeeded* (costs its cost) or *failed*
  (costs its cost plus ``error_penalty_amount``); its queue waits until ``polite_s`` (the URI's
  politeness delay, ``min_delay_ms`` if unset) has passed since the end of the fetch, or the
  back-off ``wait_s`` from now, whichever is later;
* ``backoff_s`` (Retry-After) and ``hold_s`` (bandwidth debt) hold the URI's server, and
  ``fetched`` (status, start, duration) feeds the server's adaptive pace.

The back-off hints are taken out of ``curi.data``. Heritrix counterpart: the disposition half of
``WorkQueueFrontier.finished`` (``needsReenqueuing``, ``isSuccess``, the cost and penalty
charged). Immutable after construction: thread-safe (the CrawlURI belongs to the caller).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from crawler.curi import CrawlURI, FetchStatus
from crawler.frontier.politeness.politeness import BACKOFF_MS_KEY, SERVER_HOLD_MS_KEY
from crawler.frontier.retry.retry_policy import DEFER, WAIT, RetryPolicy
from crawler.frontier.rotation.queue_release import fetch_answer
from crawler.order.schema import FrontierConfig

RETRIED, SUCCEEDED, FAILED, DISREGARDED = "retried", "succeeded", "failed", "disregarded"
"""Kinds of :class:`FinishOutcome` (the last three are the crawl's totals)."""
_DEFERRED = int(FetchStatus.DEFERRED)


class FinishOutcome(NamedTuple):
    """The decision for one finished URI (see the module docstring)."""

    kind: str
    verdict: str
    """The :class:`~crawler.frontier.retry.retry_policy.RetryPolicy` verdict (falsy: final)."""
    cost: int
    wait_s: float
    polite_s: float
    backoff_s: float
    hold_s: float
    fetched: tuple[int, int, int] | None

    @property
    def retried(self) -> bool:
        """Whether the URI goes back to the head of its queue."""
        return self.kind == RETRIED

    @property
    def failed_try(self) -> bool:
        """A retry after a failed fetch attempt (a deferral or a wait is none)."""
        return self.kind == RETRIED and self.verdict not in (WAIT, DEFER)


class FinishPolicy:
    """Settles finished URIs for one order (see the module docstring)."""

    __slots__ = ("_cost", "_min_delay_s", "_penalty", "retry")

    def __init__(self, config: FrontierConfig, cost: Callable[[CrawlURI], int]) -> None:
        self.retry = RetryPolicy(config.retries)
        self._cost = cost
        self._penalty = config.error_penalty_amount
        self._min_delay_s = config.politeness.min_delay_ms / 1000.0

    def settle(self, curi: CrawlURI) -> FinishOutcome:
        """Decide ``curi``'s fate as it finished; counts its attempt (``RetryPolicy.take``) and
        removes the back-off hints from ``curi.data``. Does not reset a retried URI."""
        backoff_s = hold_s = 0.0
        data = curi.data
        if data:
            backoff_s = float(data.pop(BACKOFF_MS_KEY, 0) or 0) / 1000.0
            hold_s = float(data.pop(SERVER_HOLD_MS_KEY, 0) or 0) / 1000.0
        fetched = fetch_answer(curi)
        status = curi.status
        verdict = self.retry.take(curi)
        if verdict:
            cost = 0 if status == _DEFERRED else self._cost(curi)
            wait_s = max(0.0, curi.retry_delay_s, backoff_s)
            return FinishOutcome(RETRIED, verdict, cost, wait_s, 0.0, backoff_s, hold_s, fetched)
        if curi.is_disregarded:
            kind, cost = DISREGARDED, 0
        elif curi.is_success:
            kind, cost = SUCCEEDED, self._cost(curi)
        else:
            kind, cost = FAILED, self._cost(curi) + self._penalty
        delay_ms = curi.politeness_delay_ms
        polite_s = delay_ms / 1000.0 if delay_ms >= 0 else self._min_delay_s
        return FinishOutcome(kind, verdict, cost, backoff_s, polite_s, backoff_s, hold_s, fetched)
