"""The politeness delay runs from the end of the fetch (CrawlURI's wall-clock fetch start +
duration), turned into the frontier's monotonic clock: a queue is due at fetch end + delay, at
once if its URI's processing outlasted the delay, and a wall clock that jumps can neither
shorten the wait below "from now" for a fetch that claims to end in the future nor start it
before the URI was handed out."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler.clock import ManualClock
from crawler.curi import CrawlURI
from crawler.frontier import HostnameQueueAssignmentPolicy, MemoryQueueStore, WorkQueueFrontier
from crawler.order.schema import FrontierConfig, PolitenessConfig
from crawler.uniq import MemoryUriUniqFilter


class SkewedClock(ManualClock):
    """A manual clock whose wall time runs ``wall_offset_s`` off its monotonic time."""

    def __init__(self) -> None:
        super().__init__(start=1000.0)
        self.wall_offset_s = 1_700_000_000.0

    def time(self) -> float:
        return super().time() + self.wall_offset_s


class Crawl:
    def __init__(self, tmp: Path) -> None:
        self.clock = SkewedClock()
        self.frontier = WorkQueueFrontier(
            MemoryQueueStore(),
            HostnameQueueAssignmentPolicy(),
            MemoryUriUniqFilter(),
            FrontierConfig(politeness=PolitenessConfig(min_delay_ms=0)),
            clock=self.clock,
        )
        self.frontier.open(tmp)
        for i in range(3):
            self.frontier.schedule(CrawlURI(f"http://a.test/{i}"))

    def fetch(self, start_in_s: float, duration_s: float, processing_s: float) -> CrawlURI:
        """Hand out the next URI, 'fetch' it from ``start_in_s`` after hand-out for
        ``duration_s`` (wall clock), take ``processing_s`` more, then finish it with a 2 s
        politeness delay."""
        curi = self.frontier.next(0)
        assert curi is not None
        clock = self.clock
        curi.fetch_start_ms = int((clock.time() + start_in_s) * 1000)
        curi.fetch_duration_ms = int(duration_s * 1000)
        clock.advance(start_in_s + duration_s + processing_s)
        curi.status = 200
        curi.politeness_delay_ms = 2000
        self.frontier.finished(curi)
        return curi

    def wait_for_next(self, step_s: float = 0.01, limit_s: float = 10.0) -> float:
        """Seconds of the manual clock until the queue hands out its next URI."""
        waited = 0.0
        while self.frontier.next(0) is None:
            assert waited < limit_s
            self.clock.advance(step_s)
            waited += step_s
        return waited


def test_the_delay_runs_from_the_end_of_the_fetch(tmp_path: Path) -> None:
    crawl = Crawl(tmp_path)
    crawl.fetch(start_in_s=0.1, duration_s=0.3, processing_s=0.5)
    # Due 2 s after the fetch ended, 0.5 s of which went on processing.
    assert crawl.wait_for_next() == pytest.approx(1.5, abs=0.015)


def test_processing_that_outlasts_the_delay_leaves_the_queue_due_at_once(tmp_path: Path) -> None:
    crawl = Crawl(tmp_path)
    crawl.fetch(start_in_s=0.0, duration_s=0.2, processing_s=2.5)
    assert crawl.wait_for_next() == 0.0


def test_a_fetch_end_in_the_future_counts_from_now(tmp_path: Path) -> None:
    crawl = Crawl(tmp_path)
    curi = crawl.frontier.next(0)
    assert curi is not None
    crawl.clock.wall_offset_s -= 3600  # the wall clock was set back an hour after the fetch
    curi.fetch_start_ms = int((crawl.clock.time() + 3600) * 1000)
    curi.fetch_duration_ms = 100
    curi.status, curi.politeness_delay_ms = 200, 2000
    crawl.frontier.finished(curi)
    assert crawl.wait_for_next() == pytest.approx(2.0, abs=0.015)


def test_a_fetch_end_before_the_hand_out_counts_from_the_hand_out(tmp_path: Path) -> None:
    crawl = Crawl(tmp_path)
    curi = crawl.frontier.next(0)
    assert curi is not None
    crawl.clock.advance(0.5)
    crawl.clock.wall_offset_s += 3600  # the wall clock jumped an hour ahead during the fetch
    curi.fetch_start_ms = int((crawl.clock.time() - 3600) * 1000)
    curi.fetch_duration_ms = 100
    curi.status, curi.politeness_delay_ms = 200, 2000
    crawl.frontier.finished(curi)
    # Counted from the hand-out 0.5 s ago, not from a fetch "an hour ago".
    assert crawl.wait_for_next() == pytest.approx(1.5, abs=0.015)
