"""LatenessGuard learns the hosts in rotation the threads can serve on time: threads x (hold +
wait) / hold (Little's law) from what it measures, follows the fetch times as they change, and
corrects by the share of late fetch starts (a fake clock: every time is given)."""

from __future__ import annotations

import math

import pytest

from crawler.frontier.policy.lateness_guard import (
    GROWTH,
    LATE_SHARE,
    WINDOW_URIS,
    LatenessGuard,
)

pytestmark = pytest.mark.timeout(10)

DELAY_S = 1.0


class Clock:
    """A fake clock that the simulated fetches move forward."""

    def __init__(self) -> None:
        self.now = 100.0


def serve(
    guard: LatenessGuard,
    clock: Clock,
    uris: int,
    *,
    threads: int,
    hold_s: float,
    wait_s: float = DELAY_S,
    late_s: float = 0.0,
    late_every: int = 0,
    active: int = 1000,
    idle: int = 0,
) -> None:
    """``uris`` URIs given back by ``threads`` busy threads (and ``idle`` ones waiting), each
    held ``hold_s``, its queue then waiting ``wait_s``; every ``late_every``-th fetch (0: none)
    starts ``late_s`` late."""
    step = hold_s / threads
    for i in range(uris):
        clock.now += step
        late = late_s if late_every and i % late_every == 0 else 0.0
        started = clock.now - hold_s
        guard.fetched(started - late, wait_s, started, clock.now)
        guard.served(hold_s, wait_s, threads + idle, idle, active, clock.now)


def test_learns_threads_times_cycle_over_hold() -> None:
    guard, clock = LatenessGuard(0.05), Clock()
    assert guard.cap == math.inf  # nothing measured yet
    serve(guard, clock, 1, threads=20, hold_s=0.5, wait_s=1.5)
    assert guard.cap == 40  # slow start: twice the threads until a window closed
    serve(guard, clock, 2 * WINDOW_URIS, threads=20, hold_s=0.5, wait_s=1.5)
    # each queue holds a thread 0.5 s in every 2 s: 20 threads keep 80 queues on time
    assert guard.model == pytest.approx(80)
    assert guard.cap == 80
    assert not guard.saturated and guard.rotated == 0


def test_follows_the_fetch_times_as_they_change() -> None:
    guard, clock = LatenessGuard(0.05), Clock()
    serve(guard, clock, 3 * WINDOW_URIS, threads=20, hold_s=0.5, wait_s=1.5)
    assert guard.cap == 80
    serve(guard, clock, 10 * WINDOW_URIS, threads=20, hold_s=1.5, wait_s=1.5)  # slower fetches
    assert guard.cap == 40
    serve(guard, clock, 10 * WINDOW_URIS, threads=20, hold_s=0.25, wait_s=1.5)  # faster
    assert guard.cap == pytest.approx(140, abs=2)
    serve(guard, clock, 20 * WINDOW_URIS, threads=40, hold_s=0.25, wait_s=1.5)  # more threads
    assert guard.cap == pytest.approx(280, abs=2)


def test_the_cap_at_most_doubles_what_is_active_per_window() -> None:
    guard, clock = LatenessGuard(0.05), Clock()
    serve(guard, clock, WINDOW_URIS, threads=20, hold_s=0.05, wait_s=1.5, active=30)
    # cheap first fetches: the model says 620 hosts, but only 30 were active
    assert guard.model == pytest.approx(620) and guard.cap == 60
    caps = []
    for _ in range(6):  # a window lasts a cycle (1.55 s): 620 URIs and more
        windows = guard.windows
        serve(guard, clock, 640, threads=20, hold_s=0.05, wait_s=1.5, active=int(guard.cap))
        assert guard.windows == windows + 1
        caps.append(guard.cap)
    assert caps[:3] == [120, 240, 480]
    assert caps[3:] == [pytest.approx(620, abs=1)] * 3


def test_a_window_lasts_a_cycle_at_least() -> None:
    guard, clock = LatenessGuard(0.05), Clock()
    serve(guard, clock, WINDOW_URIS, threads=100, hold_s=1.0, wait_s=9.0)
    assert guard.windows == 1  # the first one: 100 URIs
    # 100 threads give back 100 URIs a second; a cycle is 10 s: the next window needs 10 s
    serve(guard, clock, 5 * WINDOW_URIS, threads=100, hold_s=1.0, wait_s=9.0)
    assert guard.windows == 1
    serve(guard, clock, 6 * WINDOW_URIS, threads=100, hold_s=1.0, wait_s=9.0)
    assert guard.windows == 2


def test_late_starts_lower_the_share_and_hold_activations_back() -> None:
    guard, clock = LatenessGuard(0.05), Clock()
    serve(guard, clock, WINDOW_URIS, threads=20, hold_s=0.5, wait_s=1.5, active=80)
    assert guard.cap == 80
    # one fetch in ten starts 0.2 s late (past half the tolerance of a 1.5 s delay)
    serve(guard, clock, WINDOW_URIS, threads=20, hold_s=0.5, wait_s=1.5, late_s=0.2,
          late_every=10, active=80)  # fmt: skip
    assert guard.saturated
    assert guard.cap == math.floor(80 * (1 - 0.1))  # the active share, less the late share
    assert not guard.may_activate(int(guard.cap))
    assert guard.may_activate(int(guard.cap) - 1)
    assert not guard.take_rotation(80)  # a small excess leaves as hosts do: no long gaps


def test_a_gross_excess_is_rotated_out() -> None:
    guard, clock = LatenessGuard(0.05), Clock()
    serve(guard, clock, WINDOW_URIS, threads=20, hold_s=0.5, wait_s=1.5, active=80)
    # the fetches got three times slower: the model falls to 40 (averaged: 60), all late
    serve(guard, clock, WINDOW_URIS, threads=20, hold_s=1.5, wait_s=1.5, late_s=1.0,
          late_every=1, active=200)  # fmt: skip
    assert guard.saturated and guard.cap == 60  # more were active than the cap: share kept
    rotated = 0
    while guard.take_rotation(200 - rotated):
        rotated += 1
    assert rotated == 200 - 2 * 60 and guard.rotated == rotated  # down to twice the cap


def test_lateness_under_the_share_is_tolerated() -> None:
    guard, clock = LatenessGuard(0.05), Clock()
    every = int(1 / LATE_SHARE) + 1  # just under 1% late
    serve(guard, clock, 5 * WINDOW_URIS, threads=20, hold_s=0.5, wait_s=1.5, late_s=1.0,
          late_every=every, active=80)  # fmt: skip
    assert not guard.saturated and guard.cap == 80 and guard.rotated == 0


def test_lateness_while_threads_wait_is_not_the_hosts_fault() -> None:
    guard, clock = LatenessGuard(0.05), Clock()
    serve(guard, clock, WINDOW_URIS, threads=20, hold_s=0.5, wait_s=1.5, active=80)
    # every fetch late while two threads wait for a URI: fewer hosts would not help
    serve(guard, clock, WINDOW_URIS, threads=20, hold_s=0.5, wait_s=1.5, late_s=0.2,
          late_every=1, active=80, idle=2)  # fmt: skip
    assert guard.saturated
    # the model counts the idle threads too (the mean of 80 and 88), the share stays whole
    assert guard.cap == 84 and not guard.take_rotation(80)


def test_small_lateness_is_not_late() -> None:
    guard, clock = LatenessGuard(0.05), Clock()
    # every fetch 30 ms late: under half of 5% of a 1.5 s delay (37.5 ms)
    serve(guard, clock, 5 * WINDOW_URIS, threads=20, hold_s=0.5, wait_s=1.5, late_s=0.03,
          late_every=1, active=80)  # fmt: skip
    assert not guard.saturated and guard.cap == 80
    assert guard.late_s == pytest.approx(0.03)


def test_the_share_grows_back_when_calm_and_held_back_never_past_the_model() -> None:
    guard, clock = LatenessGuard(0.05), Clock()
    serve(guard, clock, WINDOW_URIS, threads=20, hold_s=0.5, wait_s=1.5, active=80)
    serve(guard, clock, WINDOW_URIS, threads=20, hold_s=0.5, wait_s=1.5, late_s=0.2,
          late_every=2, active=80)  # fmt: skip
    low = guard.cap
    assert low == 60  # half late: a quarter off at most
    serve(guard, clock, WINDOW_URIS, threads=20, hold_s=0.5, wait_s=1.5, active=40)
    assert guard.cap == low  # calm, but nothing asked for more: no growth
    grown = []
    for _ in range(30):
        assert not guard.may_activate(int(guard.cap))  # a thread held back
        serve(guard, clock, WINDOW_URIS, threads=20, hold_s=0.5, wait_s=1.5, active=40)
        grown.append(guard.cap)
    assert grown[0] == math.floor(80 * (0.75 + GROWTH * 0.25))  # half-way back to the model
    assert grown == sorted(grown) and 79 <= grown[-1] <= 80  # back to the model, not past it


def test_off_at_zero_tolerance() -> None:
    guard, clock = LatenessGuard(0.0), Clock()
    serve(guard, clock, 5 * WINDOW_URIS, threads=20, hold_s=0.5, late_s=2.0, late_every=1,
          active=500)  # fmt: skip
    assert guard.cap == math.inf and not guard.saturated and not guard.take_rotation(500)


def test_workers_sharing_a_frontier_trim_their_share_of_the_excess() -> None:
    guard, clock = LatenessGuard(0.05), Clock()
    serve(guard, clock, WINDOW_URIS, threads=20, hold_s=0.5, wait_s=1.5, active=160)
    guard.crawl_cap = 160.0  # two workers of 80 each, as the store sums them
    assert guard.cap == 160
    serve(guard, clock, WINDOW_URIS, threads=20, hold_s=0.5, wait_s=1.5, late_s=0.2,
          late_every=10, active=160)  # fmt: skip
    assert guard.capacity == 72  # this worker's share of the model, less the late share
    guard.crawl_cap = 144.0  # the other worker's guard saw the same
    assert not guard.take_rotation(160)  # a small excess: activations held back only
    serve(guard, clock, WINDOW_URIS, threads=20, hold_s=0.5, wait_s=1.5, late_s=0.2,
          late_every=5, active=400)  # fmt: skip
    rotated = 0
    while guard.take_rotation(400):
        rotated += 1
    assert rotated == 56  # half of the 112 beyond twice the cap: the other worker trims the rest


def test_rotation_out_needs_a_late_count_chance_cannot_explain() -> None:
    # at the goal (1% late) 9 late fetches of 100 come by chance about once in a million
    # windows, 10 once in ten million: only from 10 is a gross excess rotated out
    for late, rotates in ((9, False), (10, True)):
        guard, clock = LatenessGuard(0.05), Clock()
        serve(guard, clock, WINDOW_URIS, threads=20, hold_s=0.5, wait_s=1.5, active=80)
        serve(guard, clock, WINDOW_URIS, threads=20, hold_s=0.5, wait_s=1.5, late_s=1.0,
              late_every=WINDOW_URIS // late + (WINDOW_URIS % late > 0), active=400)  # fmt: skip
        assert guard.saturated
        assert guard.take_rotation(400) is rotates, late


def test_one_late_fetch_per_window_is_the_goal_itself() -> None:
    guard, clock = LatenessGuard(0.05), Clock()
    serve(guard, clock, 5 * WINDOW_URIS, threads=20, hold_s=0.5, wait_s=1.5, late_s=1.0,
          late_every=WINDOW_URIS, active=80)  # fmt: skip
    assert guard.windows == 5 and not guard.saturated and guard.cap == 80
    serve(guard, clock, WINDOW_URIS, threads=20, hold_s=0.5, wait_s=1.5, late_s=1.0,
          late_every=WINDOW_URIS // 2, active=80)  # fmt: skip
    assert guard.saturated and guard.cap == math.floor(80 * (1 - 2 / WINDOW_URIS))


def test_queues_rotated_out_are_named_for_the_log() -> None:
    guard, clock = LatenessGuard(0.05), Clock()
    serve(guard, clock, WINDOW_URIS, threads=20, hold_s=0.5, wait_s=1.5, active=80)
    serve(guard, clock, WINDOW_URIS, threads=20, hold_s=1.5, wait_s=1.5, late_s=1.0,
          late_every=1, active=200)  # fmt: skip
    assert guard.take_rotation(200, "a.test#443", 7.5)
    assert guard.take_rotation(199)  # unnamed: counted, not listed
    assert guard.take_rotated_out() == [("a.test#443", 7.5)]
    assert guard.take_rotated_out() == [] and guard.rotated == 2
