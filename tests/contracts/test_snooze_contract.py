"""Every store snoozes a queue for its politeness delay after a fetch (the delay the fetch chain
set, or ``min_delay_ms`` when it set none) and wakes it when the delay has passed, while other
queues go on. Real, short delays: Redis keeps time by its own clock."""

from __future__ import annotations

import time

import pytest
from support.stores import FrontierMaker

from crawler.order.schema import PolitenessConfig

pytestmark = pytest.mark.timeout(60)

DELAY_MS = 600


@pytest.mark.parametrize("set_by_chain", [True, False], ids=["delay-set", "min-delay"])
def test_politeness_delay_snoozes_the_queue_then_wakes_it(
    stores: FrontierMaker, set_by_chain: bool
) -> None:
    min_delay_ms = 0 if set_by_chain else DELAY_MS
    h = stores.frontier(
        politeness=PolitenessConfig(
            delay_factor=0,
            min_delay_ms=min_delay_ms,
            max_delay_ms=DELAY_MS,
            host_max_connections=0,
        )
    )
    h.add("http://a.test/1")
    h.add("http://a.test/2")
    first = h.take()
    assert first is not None and first.uri == "http://a.test/1"
    finished_at = time.monotonic()
    if set_by_chain:
        h.done(first, politeness_delay_ms=DELAY_MS)
    else:
        h.done(first)  # politeness_delay_ms left at -1: min_delay_ms
    h.add("http://b.test/1")
    other = h.take()  # another queue is not held up
    assert other is not None and other.uri == "http://b.test/1"
    h.done(other)
    second = h.take(timeout_s=20.0)
    waited_s = time.monotonic() - finished_at
    assert second is not None and second.uri == "http://a.test/2"
    assert waited_s >= DELAY_MS / 1000 - 0.05
