"""Idle toe threads wait long in ``frontier.next()``; pausing and stopping the pool still reach
them at once (``frontier.wake_waiters()``)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from crawler.chain import ProcessorChains
from crawler.clock import ManualClock
from crawler.control.toepool import IDLE_WAIT_S, ToePool
from crawler.frontier import HostnameQueueAssignmentPolicy, MemoryQueueStore, WorkQueueFrontier
from crawler.order.schema import FrontierConfig, PolitenessConfig
from crawler.uniq import MemoryUriUniqFilter

pytestmark = pytest.mark.timeout(30)


def _pool(tmp: Path) -> tuple[ToePool, WorkQueueFrontier]:
    frontier = WorkQueueFrontier(
        MemoryQueueStore(),
        HostnameQueueAssignmentPolicy(),
        MemoryUriUniqFilter(),
        FrontierConfig(politeness=PolitenessConfig(delay_factor=0, min_delay_ms=0, max_delay_ms=0)),
        clock=ManualClock(),
    )
    frontier.open(tmp)
    pool = ToePool(frontier, ProcessorChains([]), 8)
    pool.start()
    time.sleep(0.3)  # every thread blocked in next()
    return pool, frontier


def test_pause_and_stop_reach_idle_threads_before_their_wait_ends(tmp_path: Path) -> None:
    assert IDLE_WAIT_S >= 1.0  # the wait this is about
    pool, frontier = _pool(tmp_path)
    try:
        pool.pause()
        deadline = time.monotonic() + IDLE_WAIT_S / 2
        while pool.step_counts().get("PAUSED", 0) < 8 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert pool.step_counts().get("PAUSED", 0) == 8
        pool.unpause()
        time.sleep(0.2)
        started = time.monotonic()
        pool.request_stop()
        assert pool.join(IDLE_WAIT_S / 2)
        assert time.monotonic() - started < IDLE_WAIT_S / 2
    finally:
        pool.request_stop()
        pool.join(5)
        frontier.close()
