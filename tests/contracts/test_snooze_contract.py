"""Every store snoozes a queue for its politeness delay after a fetch (the delay the fetch chain
set, or ``min_delay_ms`` when it set none) and wakes it when the delay has passed, while other
queues go on. Real, short delays: Redis keeps time by its own clock."""

from __future__ import annotations

import threading
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


def test_threads_waiting_in_next_take_each_queue_when_its_delay_ends(
    stores: FrontierMaker,
) -> None:
    """Many threads blocked in ``next()`` with long timeouts, as toe threads: each snoozed queue
    is taken when its politeness delay ends, whichever delay the waiting threads slept for
    first, and no thread is left asleep until its own timeout."""
    h = stores.frontier(
        politeness=PolitenessConfig(
            delay_factor=0, min_delay_ms=0, max_delay_ms=5000, host_max_connections=0
        )
    )
    delays_ms = {"slow.test": 4000, "mid.test": 1500, "fast.test": 250}
    for host in delays_ms:
        h.add(f"http://{host}/1")
        h.add(f"http://{host}/2")
    taken: dict[str, float] = {}
    finished: dict[str, float] = {}
    lock = threading.Lock()

    def toe() -> None:
        while (curi := h.frontier.next(20.0)) is not None:
            host = curi.uri.split("/")[2]
            with lock:
                taken[curi.uri] = time.monotonic()
            # the longest delay's queue is snoozed first, the shorter ones after it
            time.sleep(0.15 * list(delays_ms).index(host) if curi.uri.endswith("/1") else 0)
            curi.status = 200
            curi.politeness_delay_ms = delays_ms[host]
            h.frontier.finished(curi)
            with lock:
                finished[curi.uri] = time.monotonic()

    threads = [threading.Thread(target=toe) for _ in range(24)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 30
    while len(taken) < 6 and time.monotonic() < deadline:
        time.sleep(0.02)
    h.close()
    for t in threads:
        t.join(10)
    assert len(taken) == 6, sorted(taken)
    for host, delay_ms in delays_ms.items():
        waited_s = taken[f"http://{host}/2"] - finished[f"http://{host}/1"]
        # late by more than ~1 s: left asleep until another queue's wake time or a timeout
        assert delay_ms / 1000 - 0.05 <= waited_s < delay_ms / 1000 + 1.2, (host, waited_s)
