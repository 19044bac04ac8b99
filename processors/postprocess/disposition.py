"""DispositionProcessor: how long the URI's queue waits (politeness) and when a retry may run.

Last processor of the post chain. Reads ``curi.fetch_start_ms``, ``curi.fetch_duration_ms``,
``curi.content_size``, ``curi.status``, the ``Retry-After`` response header and the server's
robots Crawl-delay (``ctx.servers.crawl_delay_s``); writes ``curi.politeness_delay_ms``,
``curi.retry_delay_s`` and two frontier hints in ``curi.data`` (see
:mod:`crawler.frontier.politeness.politeness`), which the frontier applies in ``finished()``.

Politeness (Heritrix §5.5): only when a fetch happened (start and duration known), else 0:
``delay_factor`` x fetch duration clamped to [``min_delay_ms``, ``max_delay_ms``]; if that is
below ``respect_crawl_delay_up_to_s`` and robots.txt (when obeyed) gives a Crawl-delay for our
User-Agent, raised to it (capped at ``respect_crawl_delay_up_to_s``).
Bandwidth: with ``max_per_host_bandwidth_kbps`` > 0 the fetch's bytes become a server hold
(``bytes / (KB/s x 1.024)`` ms) that the frontier adds to the server's next fetch start, across
all queues of that server — so the cap holds even when a host is spread over many queues.
Back-off (beyond Heritrix): a 503 or 429 with ``Retry-After`` (seconds or an HTTP date), up to
``respect_retry_after_up_to_s`` (0 = ignore), snoozes the queue and holds its server that long.
Retry delay: the order's ``retry_delay_s`` for -1/-2/-3 (``protocol_retry_delay_s`` after a
malformed response); a -50 keeps the wait the pre chain chose
(0: at once, after its prerequisite); for a retried HTTP status (``frontier.retries.
http_statuses``) the exponential back-off of :class:`~crawler.frontier.RetryPolicy` for this
attempt — except the first retry of a 429/503 (``frontier.pace.signal_statuses``) while the
adaptive pace is on: that one waits only for the server's pace, which the answer just
lengthened (a back-off would stall every other URI of the URI's queue with it, and at a pace
that keeps under the server's limit the retry is answered); a Retry-After is applied by the
frontier whichever is longer; 0 otherwise.
Every parameter left unset (None) takes the order's ``frontier.politeness`` /
``frontier.retries`` value. The politeness delay follows the URI's sheets (``frontier.
politeness.*`` and this processor's own params in a sheet; see :mod:`crawler.sheets`).

Thread-safety: no shared mutable state. Heritrix counterpart:
``org.archive.crawler.postprocessor.DispositionProcessor``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from crawler import CrawlURI, FetchStatus, Params, Processor, ProcessorContext
from crawler.frontier import BACKOFF_MS_KEY, SERVER_HOLD_MS_KEY, RetryPolicy, retry_after_s
from crawler.urls import UriError, server_key
from processors.fetch.user_agent import user_agent

_DELAYED_RETRY_STATUSES = frozenset(
    {FetchStatus.DOMAIN_UNRESOLVABLE, FetchStatus.CONNECT_FAILED, FetchStatus.CONNECT_LOST}
)
_BACKOFF_STATUSES = frozenset({429, 503})


class DispositionParams(Params):
    """Parameters of :class:`DispositionProcessor`; None means "the order's value"."""

    delay_factor: float | None = Field(None, ge=0, description="x fetch duration")
    min_delay_ms: int | None = Field(None, ge=0, description="shortest politeness delay")
    max_delay_ms: int | None = Field(None, ge=0, description="longest politeness delay")
    respect_crawl_delay_up_to_s: float | None = Field(
        None, ge=0, description="robots Crawl-delay obeyed up to this many seconds"
    )
    max_per_host_bandwidth_kbps: int | None = Field(
        None, ge=0, description="per-host bandwidth cap in KB/s; 0 = none"
    )
    retry_delay_s: float | None = Field(None, ge=0, description="wait before retrying -1/-2/-3")
    respect_retry_after_up_to_s: float | None = Field(
        None, ge=0, description="503/429 Retry-After honoured up to this; 0 = ignore"
    )


class DispositionProcessor(Processor[DispositionParams]):
    """Sets the politeness and retry delays (see the module docstring)."""

    sheet_params = frozenset(
        {"delay_factor", "min_delay_ms", "max_delay_ms", "respect_crawl_delay_up_to_s"}
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._delay_factor = 5.0
        self._min_ms = 3000
        self._max_ms = 30000
        self._respect_ms = 300_000.0
        self._bandwidth_kbps = 0
        self._retry_delay_s = 900.0
        self._retry_after_cap_s = 300.0
        self._obey_robots = True
        self._user_agent = ""
        self._retry: RetryPolicy | None = None
        self._paced: frozenset[int] = frozenset()

    def start(self, ctx: ProcessorContext) -> None:
        super().start(ctx)
        p = self.params
        order = ctx.order
        pol = order.frontier.politeness

        def pick(value: Any, default: Any) -> Any:
            return default if value is None else value

        self._delay_factor = pick(p.delay_factor, pol.delay_factor)
        self._min_ms = pick(p.min_delay_ms, pol.min_delay_ms)
        self._max_ms = pick(p.max_delay_ms, pol.max_delay_ms)
        self._respect_ms = 1000.0 * pick(
            p.respect_crawl_delay_up_to_s, pol.respect_crawl_delay_up_to_s
        )
        self._bandwidth_kbps = pick(p.max_per_host_bandwidth_kbps, pol.max_per_host_bandwidth_kbps)
        self._retry_delay_s = pick(p.retry_delay_s, order.frontier.retries.retry_delay_s)
        self._retry_after_cap_s = pick(
            p.respect_retry_after_up_to_s, pol.respect_retry_after_up_to_s
        )
        self._obey_robots = order.robots.policy != "ignore"
        self._user_agent = user_agent(order)
        self._retry = RetryPolicy(order.frontier.retries)
        pace = order.frontier.pace
        self._paced = frozenset(pace.signal_statuses) if pace.enabled else frozenset()

    def inner_process(self, curi: CrawlURI) -> None:
        status = curi.status
        retry = self._retry
        if status in _DELAYED_RETRY_STATUSES:
            default_s = float(self._retry_delay_s)
            curi.retry_delay_s = retry.retry_delay_s(curi, default_s) if retry else default_s
        elif status >= 400 and retry is not None and retry.is_http_retry_status(status):
            attempt = retry.http_try(curi)
            if status in self._paced:
                attempt -= 1
            curi.retry_delay_s = retry.http_backoff_s(attempt) if attempt > 0 else 0.0
        elif status != FetchStatus.DEFERRED:
            curi.retry_delay_s = 0.0
        # A deferred URI keeps the wait a pre-fetch processor chose (0 unless it is waiting
        # for another queue's prerequisite).
        curi.politeness_delay_ms = self._politeness_delay_ms(curi)
        if curi.status in _BACKOFF_STATUSES and self._retry_after_cap_s > 0:
            wait_s = retry_after_s(
                curi.header("Retry-After"), self.context.clock.time(), self._retry_after_cap_s
            )
            if wait_s > 0:
                curi.data[BACKOFF_MS_KEY] = int(wait_s * 1000)
        if self._bandwidth_kbps > 0 and curi.content_size > 0:
            curi.data[SERVER_HOLD_MS_KEY] = curi.content_size / (self._bandwidth_kbps * 1.024)

    def _politeness_delay_ms(self, curi: CrawlURI) -> int:
        duration_ms = curi.fetch_duration_ms
        if curi.fetch_start_ms <= 0 or duration_ms < 0:
            return 0
        factor, min_ms, max_ms, respect_ms = self._pace_for(curi)
        delay = factor * duration_ms
        delay = min(max(delay, min_ms), max_ms)
        if delay < respect_ms and self._obey_robots:
            crawl_delay_ms = self._crawl_delay_ms(curi.uri)
            if crawl_delay_ms > delay:
                delay = min(crawl_delay_ms, respect_ms)
        return int(delay)

    def _pace_for(self, curi: CrawlURI) -> tuple[float, float, float, float]:
        """(delay factor, min ms, max ms, Crawl-delay cap ms) for ``curi``: the order's, or with
        the sheets of ``curi`` (``frontier.politeness.*`` and this processor's params)."""
        sheets = self._sheets
        if sheets is None or not sheets.active:
            return self._delay_factor, self._min_ms, self._max_ms, self._respect_ms
        overlay = sheets.overlay_for(curi)
        if overlay.empty:
            return self._delay_factor, self._min_ms, self._max_ms, self._respect_ms

        def pace() -> tuple[float, float, float, float]:
            p = self.params_for(curi)
            pol = overlay.politeness
            return (
                pol.delay_factor if p.delay_factor is None else p.delay_factor,
                pol.min_delay_ms if p.min_delay_ms is None else p.min_delay_ms,
                pol.max_delay_ms if p.max_delay_ms is None else p.max_delay_ms,
                1000.0
                * (
                    pol.respect_crawl_delay_up_to_s
                    if p.respect_crawl_delay_up_to_s is None
                    else p.respect_crawl_delay_up_to_s
                ),
            )

        return overlay.memo((self.name, "pace"), pace)

    def _crawl_delay_ms(self, uri: str) -> float:
        try:
            key = server_key(uri)
        except (UriError, ValueError):
            return 0.0
        seconds = self.context.servers.crawl_delay_s(key, self._user_agent)
        return 0.0 if not seconds else 1000.0 * seconds
