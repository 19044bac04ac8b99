"""The adaptive pace against every shape of rate limiter, on a simulated clock: the limiters of
the demo server refuse what they should, and a crawl paced by the real ServerGate/ServerPace
gets at least 85% of the allowed rate with at most 1% of its requests refused, whatever the
shape, Retry-After and number of queues."""

from __future__ import annotations

import pytest

from crawler.demo.pace_simulation import simulate
from crawler.demo.rate_limited_server import (
    SHAPES,
    FixedWindow,
    SlidingWindow,
    TokenBucket,
    make_limiter,
    retry_after_value,
)
from crawler.order.schema import PaceConfig

pytestmark = pytest.mark.timeout(60)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_token_bucket_allows_its_burst_then_its_rate() -> None:
    clock = FakeClock()
    bucket = TokenBucket(10.0, 3, clock)
    assert [bucket.take() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take() == pytest.approx(0.1)
    clock.now += 0.1
    assert bucket.take() == 0.0
    assert bucket.take() > 0


def test_a_fixed_window_counts_per_whole_second() -> None:
    clock = FakeClock()
    clock.now = 1000.5
    window = FixedWindow(3.0, clock)
    assert [window.take() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert window.take() == pytest.approx(0.5)  # until the next second
    clock.now = 1001.0
    assert window.take() == 0.0  # a new second: the count starts again


def test_a_sliding_window_counts_refused_requests_too() -> None:
    clock = FakeClock()
    window = SlidingWindow(2.0, clock)
    assert window.take() == 0.0
    clock.now += 0.5
    assert window.take() == 0.0
    clock.now += 0.25
    assert window.take() > 0  # two in the last second
    clock.now += 0.3  # the first has left the window, but the refused one still counts
    assert window.take() > 0
    clock.now += 1.0
    assert window.take() == 0.0


def test_retry_after_is_absent_fixed_or_the_wait_in_whole_seconds() -> None:
    assert retry_after_value(None, 0.3) is None
    assert retry_after_value("0", 0.3) == "0"
    assert retry_after_value("auto", 0.3) == "1"
    assert retry_after_value("auto", 2.2) == "3"


def test_an_unknown_shape_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown limiter shape 'leaky'"):
        make_limiter("leaky", 10.0)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("retry_after", [None, "1", "0"])
@pytest.mark.parametrize("queues", [1, 4])
def test_the_pace_gets_most_of_the_rate_with_few_refusals(
    shape: str, retry_after: str | None, queues: int
) -> None:
    for seed in (1, 2):
        run = simulate(shape, 25.0, retry_after=retry_after, queues=queues, seconds=60, seed=seed)
        assert run.ok_share >= 0.85, (run, seed)
        assert run.refused_share <= 0.01, (run, seed)


def test_without_the_pace_a_window_limiter_refuses_most_requests() -> None:
    """The simulation can fail: unpaced, the crawler's natural speed is far above the rate."""
    run = simulate("fixed", 25.0, config=PaceConfig(enabled=False), seconds=10)
    assert run.refused_share > 0.5
