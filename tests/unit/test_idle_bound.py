"""IdleBound: the idle pool keeps a connection per host in rotation (the most within the last
keep-alive expiry) plus one per connection in flight; without a rotation count, a fixed bound."""

from __future__ import annotations

import pytest

from processors.fetch.idle_bound import IdleBound

pytestmark = pytest.mark.timeout(10)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Count:
    def __init__(self, hosts: int) -> None:
        self.hosts = hosts

    def __call__(self) -> int:
        return self.hosts


def test_without_a_rotation_count_the_bound_is_fixed() -> None:
    assert IdleBound(4)() == 64
    assert IdleBound(300)() == 1200
    assert not IdleBound(4).learnt


def test_bound_grows_with_the_hosts_in_rotation_at_once() -> None:
    count, clock = Count(10), Clock()
    bound = IdleBound(50, count, window_s=30, clock=clock)
    assert bound.learnt
    assert bound() == 60
    count.hosts = 1500
    assert bound() == 1550


def test_bound_falls_only_once_the_leaving_hosts_connections_would_have_expired() -> None:
    count, clock = Count(1000), Clock()
    bound = IdleBound(10, count, window_s=30, clock=clock)
    assert bound() == 1010
    count.hosts = 100  # 900 hosts left rotation: their connections are still younger than
    clock.now += 20  # those of the hosts still in rotation for a while
    assert bound() == 1010
    clock.now += 20  # a new window: the last one's peak still counts
    assert bound() == 1010
    clock.now += 30  # two windows on: the peak of 1,000 is gone
    assert bound() == 110
    clock.now += 300  # a long pause: no stale peak survives it
    count.hosts = 5
    assert bound() == 15
