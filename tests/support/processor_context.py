"""One way for tests to build the ProcessorContext a processor gets when the crawl starts."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog

from crawler import CrawlURI, DecideRuleSequence, ManualClock, ProcessorContext
from crawler.clock import Clock
from crawler.continuity import DigestIndex
from crawler.history import CrawlHistory
from crawler.order.schema import CrawlOrder
from crawler.servers import ServerCache
from crawler.stats import CrawlStats


def make_context(
    run_dir: Path,
    *,
    clock: Clock | None = None,
    servers: ServerCache | None = None,
    scope: DecideRuleSequence | None = None,
    schedule: Callable[[CrawlURI], Any] | None = None,
    uri_error: Callable[[str | None, str, str], None] | None = None,
    history: CrawlHistory | None = None,
    digest_index: DigestIndex | None = None,
    stopping: threading.Event | None = None,
    stats: CrawlStats | None = None,
    order: CrawlOrder | None = None,
    **order_fields: Any,
) -> ProcessorContext:
    """A context like the controller's, with test defaults for whatever is not given.

    ``state_dir`` is ``run_dir / "state"``. The defaults are a fresh ManualClock, ServerCache,
    CrawlStats and ``stopping`` event, an empty scope, a ``schedule`` that accepts every URI
    and a ``uri_error`` that drops the line. ``order`` is used as it is; without it the order
    is ``CrawlOrder(name="t", operator={"contact_url": "http://x/"}, **order_fields)``, where
    ``order_fields`` may also replace ``name`` or ``operator``.
    """
    if order is None:
        order_fields = {"name": "t", "operator": {"contact_url": "http://x/"}, **order_fields}
        order = CrawlOrder(**order_fields)
    elif order_fields:
        raise TypeError(f"give either order or order fields, not both: {sorted(order_fields)}")
    return ProcessorContext(
        run_dir=run_dir,
        state_dir=run_dir / "state",
        order=order,
        stats=CrawlStats() if stats is None else stats,
        logger=structlog.get_logger(),
        clock=ManualClock() if clock is None else clock,
        stopping=threading.Event() if stopping is None else stopping,
        servers=ServerCache() if servers is None else servers,
        scope=DecideRuleSequence() if scope is None else scope,
        schedule=(lambda curi: True) if schedule is None else schedule,
        uri_error=(lambda base, message, raw: None) if uri_error is None else uri_error,
        history=history,
        digest_index=digest_index,
    )
