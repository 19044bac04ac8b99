"""RetryPolicy: which finished URIs go back to their queue, what they count, how long they wait.

The one place both frontiers (LevelDB/memory and Redis, and a Redis worker's own prerequisites)
decide a finished URI's fate: each calls :meth:`RetryPolicy.take` once per finished URI. Order
section ``frontier.retries``:

* **Deferrals are no tries.** A URI deferred (-50) for a prerequisite it scheduled (dns:,
  robots.txt, a login step: ``curi.prerequisite`` set) goes back at once without counting a fetch
  attempt; its deferrals are counted apart (``curi.data[DEFERRALS_KEY]``): ``max_deferrals``
  are allowed, one more ends it -50, so a prerequisite that keeps deferring cannot loop for
  ever. A -50 without a prerequisite only waits for another queue's (a poll, bounded by that
  processor's own wait) and counts nothing. Only real fetch attempts count in
  ``fetch_attempts`` and crawl.log's ``Nt``. (Heritrix counts deferrals as attempts, so with
  ``max_retries: 0`` or a login a seed could end -50 unfetched; we do not.)
* **The crawler's own failures** -1/-2/-3 (:data:`~crawler.curi.RETRYABLE_STATUSES`), as in
  Heritrix: up to ``max_retries`` attempts in all, ``retry_delay_s`` apart.
* **Malformed responses** — a fetcher marks the attempt with :func:`note_protocol_error` (bad status
  line, bad chunked encoding, body shorter than its Content-Length): the server broke HTTP, and will
  most likely do it again. Up to ``protocol_max_tries`` attempts in all (within ``max_retries``),
  ``protocol_retry_delay_s`` apart, and none more once the same error (same text) comes back twice
  in a row; the final one is annotated ``protocolError``. Timeouts and connection failures keep
  ``max_retries``.
* **HTTP answers that ask to come back later** (``http_statuses``: 408, 429, 500, 502, 503, 504
  by default), as Scrapy's RetryMiddleware does: up to ``http_max_tries`` attempts in all. The
  n-th retry waits ``http_backoff_s`` x 2^(n-1), capped at ``http_backoff_max_s``; a
  ``Retry-After`` the DispositionProcessor honoured replaces that wait. The last answer is the
  URI's final status (crawl.log shows it once, with the ``Nt`` attempts annotation).

HTTP and protocol-error tries are counted in ``curi.data`` (kept across retries, removed at the
end) apart from ``fetch_attempts``, which counts every fetch attempt.

The HTTP default is 4 attempts (3 retries), one more than Scrapy's ``RETRY_TIMES = 2``: Scrapy
retries at once, so its retries span milliseconds; ours back off 1, 2 and 4 s, so together they
ride out an outage or a restart of about 7 s, and a 429 drawn while the server's pace was still
finding the server's limit (several queues or workers refused at once) gets a try at the pace
that limit set. A server that keeps failing costs at most three more fetches per URI, seconds
apart. Heritrix retries none of these.

Pure and immutable (state lives on the CrawlURI, which one thread owns): thread-safe.
"""

from __future__ import annotations

from crawler.curi import RETRYABLE_STATUSES, CrawlURI, FetchStatus
from crawler.order.schema import RetriesConfig

HTTP_TRIES_KEY = "frontier.http_tries"
"""``curi.data`` key: HTTP answers of a retried status this URI has had so far."""
DEFERRALS_KEY = "frontier.deferrals"
"""``curi.data`` key: times this URI was deferred for a prerequisite so far."""
PROTOCOL_TRIES_KEY = "frontier.protocol_tries"
"""``curi.data`` key: attempts of this URI that ended in a malformed response so far."""
LAST_PROTOCOL_ERROR_KEY = "frontier.protocol_error"
"""``curi.data`` key: the text of the last malformed-response error (to see it repeat)."""
PROTOCOL_ERROR_KEY = "fetch.protocol_error"
"""``curi.data`` key a fetcher sets (:func:`note_protocol_error`) for the attempt just made."""
_KEPT_KEYS = (HTTP_TRIES_KEY, DEFERRALS_KEY, PROTOCOL_TRIES_KEY, LAST_PROTOCOL_ERROR_KEY)
MAX_ERROR_CHARS = 200
_DEFERRED = int(FetchStatus.DEFERRED)  # a plain int: an enum member's lookup costs on every URI

WAIT, DEFER, RETRY, PROTOCOL, HTTP, FINAL = "wait", "defer", "retry", "protocol", "http", ""
"""Verdicts of :meth:`RetryPolicy.verdict` (``FINAL``, empty, is the only falsy one)."""


def note_protocol_error(curi: CrawlURI, error: str) -> None:
    """Mark the attempt ``curi`` just made as ended by a malformed response (the server broke
    HTTP), described by ``error`` (its exception's name and message). For fetchers."""
    curi.data[PROTOCOL_ERROR_KEY] = error[:MAX_ERROR_CHARS]


def protocol_error(curi: CrawlURI) -> str | None:
    """The malformed-response error of the attempt ``curi`` just made, or None."""
    error = curi.data.get(PROTOCOL_ERROR_KEY) if curi.data else None
    return str(error) if error is not None else None


class RetryPolicy:
    """The retry decision and back-off of one order (see the module docstring)."""

    __slots__ = (
        "_backoff_max_s",
        "_backoff_s",
        "_http",
        "_http_max_tries",
        "_max_deferrals",
        "_max_retries",
        "_protocol_delay_s",
        "_protocol_max_tries",
    )

    def __init__(self, config: RetriesConfig) -> None:
        self._max_retries = config.max_retries
        self._http = frozenset(config.http_statuses)
        self._http_max_tries = config.http_max_tries
        self._backoff_s = config.http_backoff_s
        self._backoff_max_s = config.http_backoff_max_s
        self._max_deferrals = config.max_deferrals
        self._protocol_max_tries = config.protocol_max_tries
        self._protocol_delay_s = config.protocol_retry_delay_s

    def retries(self, status: int, attempts: int) -> bool:
        """Whether a URI that ended with ``status`` after ``attempts`` fetch attempts (this one
        counted, no malformed response) is tried again."""
        if status in RETRYABLE_STATUSES and status != _DEFERRED:
            return attempts < self._max_retries
        return status in self._http and attempts < self._http_max_tries

    def http_try(self, curi: CrawlURI) -> int:
        """The number of the HTTP try ``curi`` just made, counting only answers of a retried
        status (1 = its first such answer)."""
        return int(curi.data.get(HTTP_TRIES_KEY, 0)) + 1

    def verdict(self, curi: CrawlURI) -> str:
        """What :meth:`take` will do with ``curi`` as it finished (``fetch_attempts`` not yet
        counting this attempt): ``WAIT``/``DEFER`` (back at once, no try counted), ``RETRY``,
        ``PROTOCOL``, ``HTTP`` (back after a failed try) or ``FINAL`` (falsy). Changes nothing."""
        status = curi.status
        if status > 0:  # an answer: retried only if its HTTP status is
            if status in self._http and self.http_try(curi) < self._http_max_tries:
                return HTTP
            return FINAL
        data = curi.data
        if status == _DEFERRED:
            if curi.prerequisite is None:
                return WAIT
            deferrals = int(data.get(DEFERRALS_KEY, 0)) + 1
            return DEFER if deferrals <= self._max_deferrals else FINAL
        attempts = curi.fetch_attempts + 1
        if status in RETRYABLE_STATUSES:
            if attempts >= self._max_retries:
                return FINAL
            error = protocol_error(curi)
            if error is None:
                return RETRY
            tries = int(data.get(PROTOCOL_TRIES_KEY, 0)) + 1
            if tries >= self._protocol_max_tries or error == data.get(LAST_PROTOCOL_ERROR_KEY):
                return FINAL
            return PROTOCOL
        if status in self._http and self.http_try(curi) < self._http_max_tries:
            return HTTP
        return FINAL

    def will_retry(self, curi: CrawlURI) -> bool:
        """Whether :meth:`take` will send ``curi``, as it finished, back to its queue after a
        failed fetch attempt (not a deferral)."""
        return self.verdict(curi) in (RETRY, PROTOCOL, HTTP)

    def take(self, curi: CrawlURI) -> str:
        """The frontier's decision for a finished ``curi``: its :meth:`verdict`, truthy to send
        it back to its queue. Counts the attempt (``fetch_attempts``, unless it was deferred),
        the deferral, HTTP or protocol-error try in ``curi.data``; a final URI keeps only
        ``fetch_attempts``."""
        verdict = self.verdict(curi)
        data = curi.data
        error = data.pop(PROTOCOL_ERROR_KEY, None) if data else None
        if verdict == WAIT:
            return verdict
        if verdict == DEFER:
            data[DEFERRALS_KEY] = int(data.get(DEFERRALS_KEY, 0)) + 1
            return verdict
        if curi.status != _DEFERRED:
            curi.fetch_attempts += 1
        if verdict == PROTOCOL:
            data[PROTOCOL_TRIES_KEY] = int(data.get(PROTOCOL_TRIES_KEY, 0)) + 1
            data[LAST_PROTOCOL_ERROR_KEY] = error
            return verdict
        # Present only after a malformed response: "the same error twice in a row".
        data.pop(LAST_PROTOCOL_ERROR_KEY, None)
        if verdict == HTTP:
            data[HTTP_TRIES_KEY] = self.http_try(curi)
        elif verdict == FINAL:
            if error is not None:
                # Kept for crawl.log's reader: why the URI ended.
                curi.annotate("protocolError")
            if data:
                for key in _KEPT_KEYS:
                    data.pop(key, None)
        return verdict

    def retry_delay_s(self, curi: CrawlURI, default_s: float) -> float:
        """Wait before retrying ``curi`` after its -1/-2/-3: ``protocol_retry_delay_s`` after a
        malformed response, else ``default_s`` (the order's ``retry_delay_s``)."""
        return self._protocol_delay_s if protocol_error(curi) is not None else default_s

    def is_http_retry_status(self, status: int) -> bool:
        """Whether ``status`` is one of the HTTP statuses retried."""
        return status in self._http

    def http_backoff_s(self, attempts: int) -> float:
        """Wait before the retry that follows attempt number ``attempts`` (1 = the first)."""
        exponent = min(max(attempts - 1, 0), 30)
        return min(self._backoff_s * (1 << exponent), self._backoff_max_s)
