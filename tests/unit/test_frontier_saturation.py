"""The active set under saturation: more hosts than the threads can serve on time.

A model crawl on the real WorkQueueFrontier (memory store) with a manual clock and ``threads``
model threads: each holds the URI it is given for its fetch time (a host's first URIs, its DNS
lookup and robots.txt, take 0.1 s; its pages 1 s), then gives it back and asks for the next; a
thread that finds none waits in ``next()`` (the model says so to the frontier as a blocked
thread would). Every fetch is followed by a 1 s politeness delay. 20 threads holding a page
1 s in every 2 s keep 40 hosts on time; there are 100. Heritrix's rule (activate a queue
whenever none is ready) activates every host during the cheap first second and then serves
each one seconds late; the lateness guard learns the 40 and serves those on time, and still
crawls every host to its end, hardly slower.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from crawler.clock import ManualClock
from crawler.curi import CrawlURI
from crawler.frontier import (
    HostnameQueueAssignmentPolicy,
    MemoryQueueStore,
    WorkQueueFrontier,
    frontier_summary_report,
)
from crawler.frontier.frontier_abilities import FrontierAbilities
from crawler.frontier.workqueue import IN_PROCESS, READY, SNOOZED
from crawler.order.schema import FrontierConfig, PolitenessConfig
from crawler.uniq import MemoryUriUniqFilter

pytestmark = pytest.mark.timeout(60)

DELAY_S = 1.0
TICK_S = 0.01
CHEAP_URIS = 3


@dataclass
class ModelCrawl:
    """Drives a frontier with a manual clock and model threads (see the module docstring)."""

    tmp: Path
    tolerance: float
    hosts: int = 100
    per_host: int = 50
    threads: int = 20
    balance: int = 3000
    lateness: list[float] = field(default_factory=list)
    handed: list[str] = field(default_factory=list)
    most_active: int = 0

    def run(self, until_s: float = 1000.0) -> WorkQueueFrontier:
        clock = ManualClock()
        delay_ms = int(DELAY_S * 1000)
        frontier = WorkQueueFrontier(
            MemoryQueueStore(),
            HostnameQueueAssignmentPolicy(),
            MemoryUriUniqFilter(),
            FrontierConfig(
                politeness=PolitenessConfig(
                    delay_factor=0, min_delay_ms=delay_ms, max_delay_ms=delay_ms
                ),
                lateness_tolerance=self.tolerance,
                balance_replenish_amount=self.balance,
            ),
            clock=clock,
        )
        frontier.open(self.tmp)
        for h in range(self.hosts):
            for i in range(self.per_host):
                frontier.schedule(CrawlURI(f"http://h{h}.test/{i}"))
        due: dict[str, float] = {}
        held: list[tuple[float, CrawlURI] | None] = [None] * self.threads
        start = clock.monotonic()
        while not frontier.is_empty() and clock.monotonic() - start < until_s:
            now = clock.monotonic()
            for t, slot in enumerate(held):
                if slot is not None and slot[0] <= now + 1e-9:
                    curi = slot[1]
                    curi.status = 200
                    curi.fetch_duration_ms = round((now - slot[0] + self._cost(curi)) * 1000)
                    curi.politeness_delay_ms = delay_ms
                    frontier.finished(curi)
                    due[curi.uri.split("/")[2]] = now + DELAY_S
                    held[t] = None
            idle = 0
            for t, slot in enumerate(held):
                if slot is not None:
                    continue
                curi = frontier.next(0)
                if curi is None:
                    idle += 1
                    continue
                host = curi.uri.split("/")[2]
                if host in due:
                    self.lateness.append(now - due[host])
                self.handed.append(curi.uri)
                curi.fetch_start_ms = round(clock.time() * 1000)
                held[t] = (now + self._cost(curi), curi)
            frontier.sched.waiting = idle  # the model threads that found nothing wait
            counts = frontier.sched.counts
            active = counts[READY] + counts[IN_PROCESS] + counts[SNOOZED]
            self.most_active = max(self.most_active, active)
            clock.advance(TICK_S)
        self.elapsed_s = clock.monotonic() - start
        return frontier

    @staticmethod
    def _cost(curi: CrawlURI) -> float:
        return 0.1 if int(curi.uri.rsplit("/", 1)[1]) < CHEAP_URIS else 1.0

    def share_later_than(self, seconds: float) -> float:
        return sum(1 for x in self.lateness if x > seconds + TICK_S) / len(self.lateness)

    def percentile(self, q: float) -> float:
        values = sorted(self.lateness)
        return values[int(q * (len(values) - 1))]


def test_heritrix_rule_activates_every_host_and_serves_them_late(tmp_path: Path) -> None:
    crawl = ModelCrawl(tmp_path, tolerance=0.0)
    frontier = crawl.run()
    assert len(crawl.handed) == 5000
    assert crawl.most_active == 100
    assert crawl.percentile(0.5) > 2.0  # every host waits seconds for a thread
    assert frontier.sched.guard.rotated == 0


def test_guard_keeps_the_active_hosts_on_time_and_crawls_every_host(tmp_path: Path) -> None:
    baseline = ModelCrawl(tmp_path / "a", tolerance=0.0)
    baseline.run()
    crawl = ModelCrawl(tmp_path / "b", tolerance=0.05)
    frontier = crawl.run()
    guard = frontier.sched.guard
    assert sorted(crawl.handed) == sorted(baseline.handed)  # every host crawled to its end
    assert guard.rotated > 0
    tolerance_s = 0.05 * DELAY_S
    assert crawl.percentile(0.9) <= tolerance_s
    # Late: the gaps of the first seconds, until the excess hosts are rotated out, and those
    # of rotated hosts coming back (a host's first fetch after its turn in the inactive FIFO).
    assert crawl.share_later_than(tolerance_s) < 0.1
    assert baseline.share_later_than(tolerance_s) > 0.9
    assert 38 <= guard.cap <= 40  # learned: 20 threads x (1 s held + 1 s wait) / 1 s held
    # Slower only by the tail: the hosts crawled last (those rotated out) are too few to keep
    # 20 threads busy (the model's clock, not the machine's).
    assert crawl.elapsed_s < 1.25 * baseline.elapsed_s
    lines = frontier_summary_report(
        FrontierAbilities.of(frontier), "job", 1_700_000_000.0
    ).splitlines()
    assert f" Rotated out late:  {guard.rotated}" in lines
    assert f" Cap:               {int(guard.cap)}" in lines


def test_session_budgets_still_rotate_hosts_under_a_cap(tmp_path: Path) -> None:
    crawl = ModelCrawl(tmp_path, tolerance=0.05, balance=10)
    frontier = crawl.run()
    assert frontier.sched.guard.cap < 100  # the guard capped the active set
    first_half = {uri.split("/")[2] for uri in crawl.handed[: len(crawl.handed) // 2]}
    assert len(first_half) == 100  # every host had turns, none waited for the others' end
    baseline = ModelCrawl(tmp_path / "a", tolerance=0.0, balance=10)
    baseline.run()
    assert crawl.elapsed_s < 1.15 * baseline.elapsed_s  # hosts take turns: no long tail
