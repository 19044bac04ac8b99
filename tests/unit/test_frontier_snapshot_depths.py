"""The snapshot's longest queues and max depth, kept as queues change, are what a walk of the
queues in RAM gives (largest first, equal sizes in the order the queues entered RAM), through a
crawl that grows, shrinks, exhausts, retires and drops queues from RAM and reads them back."""

from __future__ import annotations

import heapq
import random
from pathlib import Path

import pytest

from crawler.clock import ManualClock
from crawler.curi import CrawlURI, Hop
from crawler.frontier import HostnameQueueAssignmentPolicy, MemoryQueueStore, WorkQueueFrontier
from crawler.frontier.store.queue_depths import GROWN_HELD
from crawler.frontier.workqueue import EXHAUSTED, RETIRED
from crawler.order.schema import FrontierConfig
from crawler.uniq import MemoryUriUniqFilter

pytestmark = pytest.mark.timeout(60)


def frontier(tmp_path: Path, cached_queues: int) -> WorkQueueFrontier:
    config = FrontierConfig.model_validate(
        {
            "politeness": {"delay_factor": 0, "min_delay_ms": 0, "max_delay_ms": 0},
            "retries": {"max_retries": 1, "retry_delay_s": 0},
            "balance_replenish_amount": 3,
            "queue_total_budget": 40,
            "cached_queues": cached_queues,
        }
    )
    f = WorkQueueFrontier(
        MemoryQueueStore(),
        HostnameQueueAssignmentPolicy(),
        MemoryUriUniqFilter(),
        config,
        clock=ManualClock(),
    )
    f.open(tmp_path)
    return f


def walked(f: WorkQueueFrontier) -> tuple[int, tuple[tuple[str, int], ...]]:
    """What a walk of every queue in RAM gives."""
    depths = [
        (q.key, q.size) for q in f.sched.queues.values() if q.state not in (EXHAUSTED, RETIRED)
    ]
    longest = tuple(heapq.nlargest(10, depths, key=lambda kv: kv[1]))
    return max((size for _, size in depths), default=-1), longest


@pytest.mark.parametrize(("cached_queues", "hosts"), [(4, 60), (2000, 80)])
def test_longest_queues_match_a_walk_of_the_queues_in_ram(
    tmp_path: Path, cached_queues: int, hosts: int
) -> None:
    rnd = random.Random(cached_queues)
    f = frontier(tmp_path, cached_queues)
    assert (f.snapshot().max_depth, f.snapshot().longest) == (-1, ())
    out = []
    checked = 0
    for step in range(1500):
        r = rnd.random()
        if r < 0.45:
            links = [
                f"http://h{rnd.randrange(hosts)}.test/{step}-{j}" for j in range(rnd.randint(1, 6))
            ]
            f.schedule_many([CrawlURI(u) for u in links])
        elif r < 0.75 and (curi := f.next(0)) is not None:
            out.append(curi)
        elif out:
            curi = out.pop(rnd.randrange(len(out)))
            curi.status = rnd.choice([200, 200, 404, -5000])
            if curi.status == 200:
                curi_links = [f"http://h{rnd.randrange(hosts)}.test/c{step}"]
                f.schedule_many([curi.create_child(u, Hop.LINK) for u in curi_links])
            f.finished(curi)
        if rnd.random() < 0.3:
            snap = f.snapshot()
            assert (snap.max_depth, snap.longest) == walked(f), step
            checked += 1
    for curi in out:
        curi.status = 200
        f.finished(curi)
    while (curi := f.next(0)) is not None:  # the queues run empty
        curi.status = 200
        f.finished(curi)
        snap = f.snapshot()
        assert (snap.max_depth, snap.longest) == walked(f)
    assert checked > 300
    assert f.snapshot().queues[RETIRED] and f.snapshot().queues[EXHAUSTED]
    f.close()


def test_many_changes_between_two_snapshots_still_match(tmp_path: Path) -> None:
    """More queues grow between two snapshots than are held back: the next one reads them all."""
    f = frontier(tmp_path, 100_000)
    f.snapshot()
    f.schedule_many([CrawlURI(f"http://h{i}.test/") for i in range(GROWN_HELD + 500)])
    f.schedule_many([CrawlURI(f"http://h{i}.test/{i}") for i in range(0, 3000, 7)])
    snap = f.snapshot()
    assert (snap.max_depth, snap.longest) == walked(f)
    assert snap.max_depth == 2 and snap.longest[0] == ("h0.test", 2)
    f.close()
