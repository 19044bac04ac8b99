"""LatenessGuard: rotates late queues out and caps the active set only when every due queue has
been late for a while (the threads cannot keep up), not for a burst of late ones; lets the cap
grow again after a calm spell."""

from __future__ import annotations

import math

from crawler.frontier.lateness_guard import (
    CALM_DELAYS,
    MIN_LATE_S,
    PERSIST_S,
    RUN_GAP_S,
    LatenessGuard,
)

DELAY_S = 1.0
ON_TIME_S = 0.01  # under half the tolerance (5% of 1 s = 50 ms)
LATE_S = 0.04  # over half of it
STEP_S = 0.01


def serve(guard: LatenessGuard, now_s: float, late_s: float, active: int = 50) -> bool:
    return guard.served(now_s - late_s, DELAY_S, now_s, active)


def late_run(guard: LatenessGuard, now_s: float, seconds: float) -> tuple[float, list[bool]]:
    rotate = []
    end = now_s + seconds
    while now_s < end:
        now_s += STEP_S
        rotate.append(serve(guard, now_s, LATE_S))
    return now_s, rotate


def test_a_burst_of_late_queues_changes_nothing() -> None:
    guard = LatenessGuard(0.05)
    now, rotate = late_run(guard, 100.0, PERSIST_S * 0.9)  # a stall, then caught up
    assert not any(rotate)
    assert serve(guard, now + STEP_S, ON_TIME_S) is False
    now, rotate = late_run(guard, now + STEP_S, PERSIST_S * 0.9)
    assert not any(rotate)
    assert guard.cap == math.inf and guard.rotated == 0 and not guard.saturated


def test_lateness_within_half_the_tolerance_is_on_time() -> None:
    guard = LatenessGuard(0.05)
    now = 100.0
    for _ in range(int(3 * PERSIST_S / STEP_S)):
        now += STEP_S
        assert serve(guard, now, 0.024) is False
    assert not guard.saturated


def test_short_delays_count_from_a_floor() -> None:
    guard = LatenessGuard(0.05)
    now = 100.0
    for _ in range(int(3 * PERSIST_S / STEP_S)):
        now += STEP_S
        assert guard.served(now - MIN_LATE_S * 0.9, 0.1, now, 10) is False


def test_late_queues_far_apart_are_no_backlog() -> None:
    guard = LatenessGuard(0.05)
    now = 100.0
    for _ in range(10):
        now += RUN_GAP_S * 1.5
        assert serve(guard, now, LATE_S) is False
    assert not guard.saturated


def test_persistent_lateness_rotates_late_queues_and_caps_the_active_set() -> None:
    guard = LatenessGuard(0.05)
    now, rotate = late_run(guard, 100.0, PERSIST_S * 1.5)
    assert not rotate[0] and rotate[-1]  # rotated once every queue was late for a while
    assert guard.saturated
    guard.rotated_out(49)
    guard.rotated_out(48)
    assert guard.cap == 48 and guard.rotated == 2
    assert not guard.may_activate(48) and guard.may_activate(47)
    # The backlog is gone: the next due queue is on time, which ends the saturation.
    assert serve(guard, now + STEP_S, ON_TIME_S, active=48) is False
    assert not guard.saturated
    assert serve(guard, now + 2 * STEP_S, LATE_S, active=48) is False


def test_the_cap_grows_after_a_calm_spell() -> None:
    guard = LatenessGuard(0.05)
    now, _ = late_run(guard, 100.0, PERSIST_S * 1.5)
    guard.rotated_out(40)
    calm_until = now + CALM_DELAYS * DELAY_S + 5.0
    while now < calm_until:
        now += 0.1
        serve(guard, now, ON_TIME_S, active=40)
    assert guard.cap == 41
    calm_until = now + CALM_DELAYS * DELAY_S + 5.0
    while now < calm_until:  # as long again, far under the cap: it does not grow
        now += 0.1
        serve(guard, now, ON_TIME_S, active=30)
    assert guard.cap == 41


def test_tolerance_zero_is_off() -> None:
    guard = LatenessGuard(0.0)
    now = 100.0
    for _ in range(int(3 * PERSIST_S / STEP_S)):
        now += STEP_S
        assert serve(guard, now, 5.0) is False
    assert guard.cap == math.inf and not guard.saturated
