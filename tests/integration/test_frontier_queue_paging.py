"""Work queues beyond the frontier's RAM cache (``frontier.cached_queues``) live in the store:
served in Heritrix's order all the same, and reopened after a kill -9 as they were."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from crawler.clock import ManualClock
from crawler.curi import CrawlURI
from crawler.frontier import (
    HostnameQueueAssignmentPolicy,
    LevelDBQueueStore,
    MemoryQueueStore,
    WorkQueueFrontier,
)
from crawler.frontier.store.queue_store import QueueStore
from crawler.order.schema import FrontierConfig, PolitenessConfig
from crawler.uniq import LevelDBUriUniqFilter

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

CACHED = 8
CONFIG = FrontierConfig(
    politeness=PolitenessConfig(delay_factor=0, min_delay_ms=0, max_delay_ms=0),
    cached_queues=CACHED,
)


def hosts(n: int) -> list[str]:
    """Host names in an order that is not their key order (the FIFO must not be key order)."""
    names = [f"h{i:04d}.test" for i in range(n)]
    random.Random(7).shuffle(names)
    return names


def frontier(store: QueueStore, state: Path) -> WorkQueueFrontier:
    f = WorkQueueFrontier(
        store, HostnameQueueAssignmentPolicy(), LevelDBUriUniqFilter(), CONFIG, clock=ManualClock()
    )
    f.open(state)
    return f


def drain(f: WorkQueueFrontier, most_in_ram: int) -> list[str]:
    """Fetch everything, one URI at a time; RAM never holds more than ``most_in_ram`` queues."""
    out = []
    while (curi := f.next(0)) is not None:
        assert len(f.sched.queues) <= most_in_ram
        out.append(curi.uri)
        curi.status = 200
        f.finished(curi)
    return out


@pytest.mark.parametrize("store", [LevelDBQueueStore, MemoryQueueStore])
def test_queues_out_of_ram_are_served_in_fifo_order(
    tmp_path: Path, store: type[LevelDBQueueStore] | type[MemoryQueueStore]
) -> None:
    names = hosts(400)
    f = frontier(store(), tmp_path)
    for page in (0, 1):
        f.schedule_many([CrawlURI(f"http://{h}/{page}") for h in names])
    snap = f.snapshot()
    assert (snap.total_queues, snap.queued, snap.queues["inactive"]) == (400, 800, 400)
    assert len(f.sched.queues) <= CACHED
    # Heritrix's order: each queue in the order it became inactive, its URIs one after another
    assert drain(f, CACHED + 1) == [f"http://{h}/{page}" for h in names for page in (0, 1)]
    assert f.sched.queues.loads >= 400 - CACHED  # read back from the store, not kept
    snap = f.snapshot()
    assert (snap.queued, snap.succeeded, snap.queues["exhausted"]) == (0, 800, 400)
    f.close()


def test_kill_9_reopens_the_queues_out_of_ram_as_they_were(tmp_path: Path) -> None:
    names = hosts(300)
    child = f"""
        import os, sys
        from pathlib import Path
        from crawler.clock import ManualClock
        from crawler.curi import CrawlURI
        from crawler.frontier import HostnameQueueAssignmentPolicy, LevelDBQueueStore
        from crawler.frontier import WorkQueueFrontier
        from crawler.order.schema import FrontierConfig, PolitenessConfig
        from crawler.uniq import LevelDBUriUniqFilter
        config = FrontierConfig(
            politeness=PolitenessConfig(delay_factor=0, min_delay_ms=0, max_delay_ms=0),
            cached_queues={CACHED},
        )
        f = WorkQueueFrontier(LevelDBQueueStore(), HostnameQueueAssignmentPolicy(),
            LevelDBUriUniqFilter(), config, clock=ManualClock())
        f.open(Path(sys.argv[1]))
        names = {names!r}
        for page in (0, 1):
            f.schedule_many([CrawlURI(f"http://{{h}}/{{page}}") for h in names])
        for _ in range(5):
            curi = f.next(0)
            curi.status = 200
            f.finished(curi)
        assert f.next(0).uri == f"http://{{names[2]}}/1"
        os._exit(0)  # like kill -9: the URI out is lost with the process
    """
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(child), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert done.returncode == 0, done.stderr
    f = frontier(LevelDBQueueStore(), tmp_path)
    snap = f.snapshot()
    assert (snap.total_queues, snap.queued, snap.succeeded) == (300, 595, 5)
    assert (snap.queues["inactive"], snap.queues["exhausted"]) == (297, 2)
    # the URI that was out comes back first, then the inactive queues in their FIFO order
    rest = [f"http://{h}/{page}" for h in names[3:] for page in (0, 1)]
    assert drain(f, CACHED + 1) == [f"http://{names[2]}/1", *rest]
    f.close()
