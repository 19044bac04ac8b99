"""RetryPolicy: which finished URIs go back to their queue, and how long an HTTP retry waits.

Two kinds of retry (order section ``frontier.retries``):

* the crawler's own failures -1/-2/-3/-50 (:data:`~crawler.curi.RETRYABLE_STATUSES`), as in
  Heritrix: up to ``max_retries`` attempts in all, ``retry_delay_s`` apart (-50 at once);
* HTTP answers that ask to come back later (``http_statuses``: 408, 429, 500, 502, 503, 504 by
  default), as Scrapy's RetryMiddleware does: up to ``http_max_tries`` attempts in all. The
  n-th retry waits ``http_backoff_s`` x 2^(n-1), capped at ``http_backoff_max_s``; a
  ``Retry-After`` the DispositionProcessor honoured replaces that wait. The last answer is the
  URI's final status (crawl.log shows it once, with the ``Nt`` attempts annotation).

HTTP tries are counted apart from ``fetch_attempts`` (in ``curi.data[HTTP_TRIES_KEY]``, kept
across retries and removed at the end), so a URI first deferred (-50) for its robots.txt still
gets all its HTTP tries; the ``Nt`` annotation counts every attempt, as before.

The default is 4 attempts (3 retries), one more than Scrapy's ``RETRY_TIMES = 2``: Scrapy
retries at once, so its retries span milliseconds; ours back off 1, 2 and 4 s, so together they
ride out an outage or a restart of about 7 s, and a 429 drawn while the server's pace was still
finding the server's limit (several queues or workers refused at once) gets a try at the pace
that limit set. A server that keeps failing costs at most three more fetches per URI, seconds
apart. Heritrix retries none of these.

Pure and immutable: thread-safe.
"""

from __future__ import annotations

from crawler.curi import RETRYABLE_STATUSES, CrawlURI
from crawler.order.schema import RetriesConfig

HTTP_TRIES_KEY = "frontier.http_tries"
"""``curi.data`` key: HTTP answers of a retried status this URI has had so far."""


class RetryPolicy:
    """The retry decision and HTTP back-off of one order (see the module docstring)."""

    __slots__ = ("_backoff_max_s", "_backoff_s", "_http", "_http_max_tries", "_max_retries")

    def __init__(self, config: RetriesConfig) -> None:
        self._max_retries = config.max_retries
        self._http = frozenset(config.http_statuses)
        self._http_max_tries = config.http_max_tries
        self._backoff_s = config.http_backoff_s
        self._backoff_max_s = config.http_backoff_max_s

    def retries(self, status: int, attempts: int) -> bool:
        """Whether a URI that ended with ``status`` after ``attempts`` attempts (this one
        counted) is tried again."""
        if status in RETRYABLE_STATUSES:
            return attempts < self._max_retries
        return status in self._http and attempts < self._http_max_tries

    def http_try(self, curi: CrawlURI) -> int:
        """The number of the HTTP try ``curi`` just made, counting only answers of a retried
        status (1 = its first such answer)."""
        return int(curi.data.get(HTTP_TRIES_KEY, 0)) + 1

    def will_retry(self, curi: CrawlURI) -> bool:
        """Whether :meth:`take` will send ``curi``, as it finished, back to its queue."""
        status = curi.status
        if status in RETRYABLE_STATUSES:
            return curi.fetch_attempts + 1 < self._max_retries
        return status in self._http and self.http_try(curi) < self._http_max_tries

    def take(self, curi: CrawlURI) -> bool:
        """The frontier's decision for a finished ``curi`` (``fetch_attempts`` already counts
        this attempt): True to retry it. Counts its HTTP tries in ``curi.data``."""
        status = curi.status
        if status in RETRYABLE_STATUSES:
            return curi.fetch_attempts < self._max_retries
        if status in self._http:
            tries = self.http_try(curi)
            if tries < self._http_max_tries:
                curi.data[HTTP_TRIES_KEY] = tries
                return True
        curi.data.pop(HTTP_TRIES_KEY, None)
        return False

    def is_http_retry_status(self, status: int) -> bool:
        """Whether ``status`` is one of the HTTP statuses retried."""
        return status in self._http

    def http_backoff_s(self, attempts: int) -> float:
        """Wait before the retry that follows attempt number ``attempts`` (1 = the first)."""
        exponent = min(max(attempts - 1, 0), 30)
        return min(self._backoff_s * (1 << exponent), self._backoff_max_s)
