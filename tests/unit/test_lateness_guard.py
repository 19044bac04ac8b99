"""LatenessGuard: trims the active set by the excess that the lateness of fetch starts shows
(Little's law), only once every fetch has started late for a while, not for a burst of late
ones; lets the cap grow again on demand once nothing is late."""

from __future__ import annotations

import math

import pytest

from crawler.frontier.policy.lateness_guard import (
    CALM_S,
    MIN_LATE_S,
    PERSIST_S,
    RUN_GAP_S,
    TRIM_GAIN,
    LatenessGuard,
)

DELAY_S = 1.0
STEP_S = 0.01  # a fetch every 10 ms: 100 a second


def run(guard: LatenessGuard, now_s: float, seconds: float, late_s: float) -> float:
    """Fetches every STEP_S for ``seconds``, each starting ``late_s`` after its queue was due
    (reported as it starts); returns the time after the last."""
    end = now_s + seconds
    while now_s < end - 1e-9:
        now_s += STEP_S
        guard.fetched(now_s - late_s, DELAY_S, now_s, now_s)
    return now_s


def rotations(guard: LatenessGuard, active: int) -> int:
    n = 0
    while guard.take_rotation(active - n):
        n += 1
    return n


def test_a_burst_of_late_fetches_changes_nothing() -> None:
    guard = LatenessGuard(0.05)
    now = run(guard, 100.0, PERSIST_S * 0.9, late_s=0.3)  # a stall, then caught up
    now = run(guard, now, STEP_S, late_s=0.0)
    now = run(guard, now, PERSIST_S * 0.9, late_s=0.3)
    assert not guard.saturated and rotations(guard, 500) == 0
    assert guard.cap == math.inf


def test_small_lateness_is_no_backlog() -> None:
    guard = LatenessGuard(0.05)
    run(guard, 100.0, 3 * PERSIST_S, late_s=MIN_LATE_S * 0.9)
    assert not guard.saturated and rotations(guard, 500) == 0


def test_late_fetches_far_apart_are_no_backlog() -> None:
    guard = LatenessGuard(0.05)
    now = 100.0
    for _ in range(10):
        now += RUN_GAP_S * 1.5
        guard.fetched(now - 0.5, DELAY_S, now, now)
    assert not guard.saturated and rotations(guard, 500) == 0


def test_persistent_lateness_trims_the_excess_and_caps_the_active_set() -> None:
    guard = LatenessGuard(0.05)
    run(guard, 100.0, PERSIST_S * 1.1, late_s=0.4)
    assert guard.saturated
    # 100 fetches a second each 0.4 s late: 40 queues too many; a trim takes half of that.
    trimmed = rotations(guard, 500)
    assert trimmed == pytest.approx(TRIM_GAIN * 100 * 0.4, abs=2)
    assert guard.rotated == trimmed
    assert guard.cap == 500 - trimmed
    assert not guard.may_activate(500 - trimmed, 103.0)
    assert guard.may_activate(500 - trimmed - 1, 103.0)


def test_one_trim_at_a_time() -> None:
    guard = LatenessGuard(0.05)
    now = run(guard, 100.0, PERSIST_S * 1.1, late_s=0.4)
    first = rotations(guard, 500)
    now = run(guard, now, PERSIST_S * 0.5, late_s=0.4)
    assert rotations(guard, 500 - first) == 0  # the first trim's effect is not known yet
    run(guard, now, 2 * DELAY_S, late_s=0.4)
    assert rotations(guard, 500 - first) > 0  # still late: trim again


def test_the_cap_grows_on_demand_once_nothing_is_late() -> None:
    guard = LatenessGuard(0.05)
    now = run(guard, 100.0, PERSIST_S * 1.1, late_s=0.4)
    cap = 500 - rotations(guard, 500)
    assert not guard.may_activate(cap, now)  # fetches were late just now
    now = run(guard, now, CALM_S * 1.1, late_s=0.0)
    assert guard.may_activate(cap, now)  # idle thread, nothing late: one more
    assert guard.cap == cap + 1
    assert not guard.may_activate(cap + 1, now)  # not two at once
    assert guard.may_activate(cap + 1, now + 1.0)


def test_tolerance_zero_is_off() -> None:
    guard = LatenessGuard(0.0)
    run(guard, 100.0, 3 * PERSIST_S, late_s=5.0)
    assert not guard.saturated and rotations(guard, 500) == 0
    assert guard.may_activate(10**6, 200.0)
