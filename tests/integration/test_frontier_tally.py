"""Resume from the ``tally`` record and the ``r:`` rotation index, on real LevelDB.

A child process crawls a synthetic frontier (successes, failures after a retry, disregarded URIs,
queues deactivated by their session budget, retired by their total budget, read back after being
dropped from RAM) and dies with ``os._exit`` right after its k-th write to the store (like
kill -9); each copy of that state is then resumed once from the tally and once by reading every
queue record (the tally deleted), and both must show the same frontier and hand out the same URIs
in the same order. A state written without the tally (an older crawler) is read in full once,
then from the tally.
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import plyvel
import pytest

from crawler.clock import ManualClock
from crawler.frontier import (
    HostnameQueueAssignmentPolicy,
    LevelDBQueueStore,
    WorkQueueFrontier,
)
from crawler.order.schema import FrontierConfig
from crawler.uniq import LevelDBUriUniqFilter

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

CONFIG = {
    "politeness": {"delay_factor": 0, "min_delay_ms": 0, "max_delay_ms": 0},
    "retries": {"max_retries": 1, "retry_delay_s": 0},
    "balance_replenish_amount": 2,
    "queue_total_budget": 7,
    "queue_precedence_policy": "highest_uri",
    "uri_precedence_policy": "hops",
    "cached_queues": 3,
}

CHILD = """
import json, os, sys
from pathlib import Path
from crawler.clock import ManualClock
from crawler.curi import CrawlURI, Hop
from crawler.frontier import HostnameQueueAssignmentPolicy, LevelDBQueueStore, WorkQueueFrontier
from crawler.frontier.store.leveldb_store import LevelDBQueueStore as Store
from crawler.order.schema import FrontierConfig
from crawler.uniq import LevelDBUriUniqFilter
state, crash_at = Path(sys.argv[1]), int(sys.argv[2])
writes = 0
real = Store._write_many
def counted(self, batches):
    global writes
    real(self, batches)
    writes += 1
    if writes == crash_at:
        os._exit(0)
Store._write_many = counted
config = FrontierConfig.model_validate(json.loads(sys.argv[3]))
f = WorkQueueFrontier(LevelDBQueueStore(), HostnameQueueAssignmentPolicy(),
    LevelDBUriUniqFilter(), config, clock=ManualClock())
f.open(state)
for h in range(8):
    f.schedule(CrawlURI(f"http://h{h}.test/"))
statuses = [200, 404, -2, 200, -5000, 200, -2]
i = 0
for _ in range(200):
    out = [c for c in (f.next(0) for _ in range(3)) if c is not None]
    if not out:
        break
    for curi in out:  # up to three queues in process at once
        i += 1
        curi.status = statuses[i % len(statuses)]
        if curi.status == 200:
            links = [f"http://h{(i * 7 + j) % 11}.test/p{i}-{j}" for j in range(3)]
            f.schedule_many([curi.create_child(u, Hop.LINK if j else Hop.EMBED)
                             for j, u in enumerate(links)])
        f.finished(curi)
os._exit(0)
"""


class Events:
    """A logger that keeps the frontier's events."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def info(self, event: str, **kw: Any) -> None:
        self.events.append((event, kw))

    warning = exception = info

    def reopened(self) -> dict[str, Any]:
        return next(kw for e, kw in self.events if e == "frontier_reopened")


def crawl_then_crash(state: Path, crash_at: int) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent(CHILD),
            str(state),
            str(crash_at),
            json.dumps(CONFIG),
        ],
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert done.returncode == 0, done.stderr


def resume(state: Path) -> tuple[WorkQueueFrontier, Events]:
    events = Events()
    f = WorkQueueFrontier(
        LevelDBQueueStore(),
        HostnameQueueAssignmentPolicy(),
        LevelDBUriUniqFilter(),
        FrontierConfig.model_validate(CONFIG),
        clock=ManualClock(),
        logger=events,
    )
    f.open(state)
    return f, events


def seen(f: WorkQueueFrontier) -> tuple[Any, ...]:
    """What a user sees of the frontier: its snapshot, then the URIs it hands out, in order."""
    snap = f.snapshot()
    out = []
    while (curi := f.next(0)) is not None:
        out.append(curi.uri)
        curi.status = 200
        f.finished(curi)
    after = f.snapshot()
    f.close()
    return (
        snap.queued,
        snap.succeeded,
        snap.failed,
        snap.disregarded,
        snap.queues,
        snap.total_queues,
        snap.inactive_by_precedence,
        snap.ineligible,
        snap.max_depth,
        snap.longest,
        out,
        after.queues,
        after.succeeded,
    )


def edit_store(state: Path, puts: dict[bytes, bytes], deletes: list[bytes]) -> None:
    db = plyvel.DB(str(state / "frontier"))
    try:
        for key in deletes:
            db.delete(key)
        for key, value in puts.items():
            db.put(key, value)
    finally:
        db.close()


def rotation_rows(state: Path) -> list[bytes]:
    db = plyvel.DB(str(state / "frontier"))
    try:
        return [k for k, _ in db.iterator(prefix=b"mr:")]
    finally:
        db.close()


@pytest.mark.parametrize("crash_at", [6, 23, 61, 10_000])
def test_a_crash_anywhere_resumes_as_a_full_pass_does(tmp_path: Path, crash_at: int) -> None:
    crawl_then_crash(tmp_path / "crashed", crash_at)
    shutil.copytree(tmp_path / "crashed", tmp_path / "full")
    edit_store(tmp_path / "full", {}, [b"mtally"])

    fast, fast_events = resume(tmp_path / "crashed")
    assert fast_events.reopened()["queue_records_read"] == 0
    from_tally = seen(fast)
    full, full_events = resume(tmp_path / "full")
    assert full_events.reopened()["queue_records_read"] == from_tally[5]  # every record read
    assert seen(full) == from_tally
    queued, succeeded, failed, disregarded, queues, _, by_precedence = from_tally[:7]
    if crash_at == 61:  # the workload has left all of these by then
        assert queued and succeeded and failed and disregarded and len(by_precedence) > 1
        assert all(queues[s] for s in ("ready", "inactive", "retired", "exhausted"))


def test_a_state_without_the_tally_is_read_in_full_once(tmp_path: Path) -> None:
    state = tmp_path / "state"
    crawl_then_crash(state, 40)
    reference = tmp_path / "reference"
    shutil.copytree(state, reference)
    f, _ = resume(reference)
    expected = seen(f)

    # As a crawler that keeps no tally leaves it: no "tally" in the frontier record, the tally
    # record of an earlier run stale, a rotation row of a queue not in rotation any more.
    db = plyvel.DB(str(state / "frontier"))
    saved = json.loads(db.get(b"mfrontier"))
    db.close()
    del saved["tally"]
    stale = struct.pack("<9q", 1, 0, 0, 0, 1, 0, 0, 0, 0)
    edit_store(
        state,
        {b"mfrontier": json.dumps(saved).encode(), b"mtally": stale, b"mr:nosuch.test": b""},
        [],
    )
    f, events = resume(state)
    assert events.reopened()["queue_records_read"] > 0
    f.close()
    assert b"mr:nosuch.test" not in rotation_rows(state)
    f, events = resume(state)
    assert events.reopened()["queue_records_read"] == 0
    assert seen(f) == expected


def test_a_rotation_index_that_disagrees_with_the_tally_is_not_trusted(tmp_path: Path) -> None:
    crawl_then_crash(tmp_path / "crashed", 61)
    rows = rotation_rows(tmp_path / "crashed")
    assert rows  # a queue was in rotation at the crash
    shutil.copytree(tmp_path / "crashed", tmp_path / "broken")
    edit_store(tmp_path / "broken", {}, [rows[0]])

    f, _ = resume(tmp_path / "crashed")
    expected = seen(f)
    f, events = resume(tmp_path / "broken")
    assert events.reopened()["queue_records_read"] > 0  # read in full, the row written again
    assert seen(f) == expected
    assert rotation_rows(tmp_path / "broken") == rotation_rows(tmp_path / "crashed")
