"""Order settings for crawling the hostile site (:mod:`crawler.demo.hostile_site`) quickly.

The settings are realistic ones a crawl operator would choose for a hostile or trap-laden site,
not test hooks: short fetch timeouts, few quick retries and a cap on Retry-After. The default
scope itself stops the traps. Pure functions.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from crawler.demo.hostile_site import HostileSite

RETRY_AFTER_CAP_S = 2.0
"""``frontier.politeness.respect_retry_after_up_to_s`` in :func:`crawl_settings`."""
FETCH_TIMEOUT_S = 5.0
"""``fetch_http``'s ``timeout_s`` (a whole fetch) in :func:`crawl_settings`."""
READ_TIMEOUT_S = 3.0
"""``fetch_http``'s ``read_timeout_s`` and ``connect_timeout_s`` in :func:`crawl_settings`: short
for a stall, long enough that an ordinary answer never misses it on a loaded machine."""
MAX_REDIRECTS = 20
"""The default scope cuts a chain of this many redirects (TransclusionDecideRule's
``max_redirect_hops``; browsers stop at 20)."""


def crawl_settings(site: HostileSite, toe_threads: int = 6) -> list[str]:
    """``--set`` overrides (for ``load_order`` or the CLI) crawling ``site`` quickly to its end.

    Short fetch timeouts (``FETCH_TIMEOUT_S`` total, ``READ_TIMEOUT_S`` per read) and retries (3
    attempts, 0.2 s apart, malformed responses too) keep the stalls and cuts fast; Retry-After is
    honoured up to ``RETRY_AFTER_CAP_S``; politeness is off (our own server). The default scope ends
    the calendar trap (TooManyHopsDecideRule, 20 hops: months -19..19, within the trap budget's
    series of 30) and the endless redirect chain (TransclusionDecideRule's ``max_redirect_hops``).
    ``limits.max_time_s`` is only a safety net: the crawl must end "Finished" well before.
    """
    return [
        f"seeds.urls={json.dumps(site.seed_lines)}",
        "seeds.file=null",
        f"toe_threads={toe_threads}",
        "frontier.politeness.delay_factor=0",
        "frontier.politeness.min_delay_ms=0",
        "frontier.politeness.max_delay_ms=0",
        f"frontier.politeness.respect_retry_after_up_to_s={RETRY_AFTER_CAP_S}",
        "frontier.retries.max_retries=3",
        "frontier.retries.retry_delay_s=0.2",
        "frontier.retries.protocol_retry_delay_s=0.2",
        f"chains.fetch.fetch_http.params.timeout_s={FETCH_TIMEOUT_S}",
        f"chains.fetch.fetch_http.params.read_timeout_s={READ_TIMEOUT_S}",
        f"chains.fetch.fetch_http.params.connect_timeout_s={READ_TIMEOUT_S}",
        "logging.console=false",
        "logging.progress_interval_s=1",
        "limits.max_time_s=90",
    ]
