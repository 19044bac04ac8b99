"""Politeness delay: how long a queue waits after a fetch before it may hand out its next URI.

Heritrix counterpart: ``DispositionProcessor.politenessDelayFor``. The DispositionProcessor
computes ``curi.politeness_delay_ms`` with :func:`politeness_delay_ms`; the frontier snoozes the
URI's queue for that long in ``finished()``. Two hints travel in ``curi.data`` from the
DispositionProcessor to the frontier, which removes them in ``finished()``:

* ``BACKOFF_MS_KEY`` — a 503/429 ``Retry-After`` back-off (:func:`retry_after_s`): the queue
  snoozes at least that long and its server takes no fetch start before it (whatever queue);
* ``SERVER_HOLD_MS_KEY`` — bandwidth debt of this fetch (:func:`bandwidth_delay_ms`): the
  server's next fetch start moves that much later, summed over concurrent fetches.

Pure functions, thread-safe.
"""

from __future__ import annotations

import email.utils

from crawler.order.schema import PolitenessConfig

BACKOFF_MS_KEY = "frontier.backoff_ms"
SERVER_HOLD_MS_KEY = "frontier.server_hold_ms"


def politeness_delay_ms(
    duration_ms: int, config: PolitenessConfig, crawl_delay_s: float | None = None
) -> int:
    """Delay after a fetch that took ``duration_ms`` (negative: no fetch timing known).

    ``delay_factor`` x duration, raised to ``min_delay_ms`` then capped at ``max_delay_ms``
    (the cap wins if min > max). If that is below ``respect_crawl_delay_up_to_s`` and robots.txt
    gave a ``crawl_delay_s``, the delay rises to the crawl delay, itself capped at that limit.
    Without fetch timing the delay is 0, as in Heritrix (nothing was fetched, nothing to spare).
    """
    if duration_ms < 0:
        return 0
    delay = int(config.delay_factor * duration_ms)
    delay = max(delay, config.min_delay_ms)
    delay = min(delay, config.max_delay_ms)
    respect_ms = int(config.respect_crawl_delay_up_to_s * 1000)
    if crawl_delay_s is not None and crawl_delay_s > 0 and delay < respect_ms:
        crawl_delay_ms = min(int(crawl_delay_s * 1000), respect_ms)
        delay = max(delay, crawl_delay_ms)
    return delay


def bandwidth_delay_ms(content_bytes: int, config: PolitenessConfig) -> int:
    """Minimum delay keeping a host under ``max_per_host_bandwidth_kbps`` (0 = no limit).

    Heritrix: the host's next fetch may start ``bytes / (KB/s x 1.024)`` ms later.
    """
    if config.max_per_host_bandwidth_kbps <= 0 or content_bytes <= 0:
        return 0
    return int(content_bytes / (config.max_per_host_bandwidth_kbps * 1.024))


def retry_after_s(value: str | None, now_s: float, cap_s: float) -> float:
    """Seconds a ``Retry-After`` header value asks to wait (delta-seconds or an HTTP date),
    capped at ``cap_s``; 0 when absent, unparsable, in the past, or ``cap_s`` is 0."""
    if not value or cap_s <= 0:
        return 0.0
    text = value.strip()
    if text.isdigit():
        wait = float(text)
    else:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return 0.0
        if when.tzinfo is None:
            return 0.0
        wait = when.timestamp() - now_s
    return min(max(wait, 0.0), cap_s)
