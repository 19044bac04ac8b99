"""Crash recovery on real LevelDB: a child process builds frontier state and dies with
``os._exit`` at a chosen point (no close, like kill -9); the test reopens the state."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import plyvel
import pytest

from crawler.clock import ManualClock
from crawler.curi import CrawlURI, Hop
from crawler.frontier import (
    FrontierStateError,
    HostnameQueueAssignmentPolicy,
    LevelDBQueueStore,
    WorkQueueFrontier,
)
from crawler.order.schema import FrontierConfig, PolitenessConfig
from crawler.uniq import LevelDBUriUniqFilter

pytestmark = pytest.mark.integration

NO_DELAY = FrontierConfig(
    politeness=PolitenessConfig(delay_factor=0, min_delay_ms=0, max_delay_ms=0)
)

PRELUDE = """
import os, sys
from pathlib import Path
from crawler.clock import ManualClock
from crawler.curi import CrawlURI, Hop
from crawler.frontier import HostnameQueueAssignmentPolicy, LevelDBQueueStore, WorkQueueFrontier
from crawler.order.schema import FrontierConfig, PolitenessConfig
from crawler.uniq import LevelDBUriUniqFilter
state = Path(sys.argv[1])
config = FrontierConfig(politeness=PolitenessConfig(delay_factor=0, min_delay_ms=0, max_delay_ms=0))
def crash(*_):
    os._exit(0)
def make(on_final=None):
    f = WorkQueueFrontier(LevelDBQueueStore(), HostnameQueueAssignmentPolicy(),
        LevelDBUriUniqFilter(), config, clock=ManualClock(), on_final=on_final)
    f.open(state)
    return f
"""


def crash_run(state: Path, body: str) -> None:
    code = PRELUDE + textwrap.dedent(body) + "\nos._exit(0)\n"
    done = subprocess.run([sys.executable, "-c", code, str(state)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def reopen(state: Path, finals: list[CrawlURI] | None = None, **kw: object) -> WorkQueueFrontier:
    f = WorkQueueFrontier(
        LevelDBQueueStore(),
        HostnameQueueAssignmentPolicy(),
        LevelDBUriUniqFilter(),
        NO_DELAY,
        clock=ManualClock(),
        on_final=finals.append if finals is not None else None,
        **kw,  # type: ignore[arg-type]
    )
    f.open(state)
    return f


def drain(f: WorkQueueFrontier, children: dict[str, list[str]] | None = None) -> list[str]:
    out = []
    while (curi := f.next(0)) is not None:
        out.append(curi.uri)
        for uri in (children or {}).get(curi.uri, []):
            f.schedule(curi.create_child(uri, Hop.LINK))
        curi.status = 200
        f.finished(curi)
    return out


def test_link_lost_between_uniq_add_and_queue_write_is_recovered(tmp_path: Path) -> None:
    crash_run(
        tmp_path,
        """
        f = make()
        f.schedule(CrawlURI("http://a.test/page"))
        f.schedule(CrawlURI("http://a.test/old"))
        page = f.next(0)
        old = f.next(0)  # nothing: one URI at a time per queue
        f.schedule(page.create_child("http://a.test/kept", Hop.LINK))
        # the crash window: the filter recorded the link, the queue never got it
        f._uniq.add(f._canonicalize("http://a.test/lost"))
        """,
    )
    f = reopen(tmp_path)
    links = {
        "http://a.test/page": ["http://a.test/kept", "http://a.test/lost", "http://a.test/old"]
    }
    fetched = drain(f, links)
    assert sorted(fetched) == sorted(
        ["http://a.test/page", "http://a.test/old", "http://a.test/kept", "http://a.test/lost"]
    )
    # outside recovery a seen link stays seen
    assert f.schedule(CrawlURI("http://a.test/lost")) is False
    f.close()


def test_final_without_crawl_log_line_is_queued_again(tmp_path: Path) -> None:
    state = tmp_path / "state"
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "crawl.log").write_text("")
    crash_run(
        state,
        """
        f = make(on_final=crash)  # dies after the queue write, before crawl.log
        f.schedule(CrawlURI("http://a.test/x"))
        curi = f.next(0)
        curi.status = 200
        f.finished(curi)
        """,
    )
    finals: list[CrawlURI] = []
    f = reopen(state, finals)
    assert f.snapshot().queued == 1 and f.snapshot().succeeded == 0
    assert drain(f) == ["http://a.test/x"]
    assert [c.uri for c in finals] == ["http://a.test/x"]
    f.close()


def test_final_with_its_crawl_log_line_is_not_queued_again(tmp_path: Path) -> None:
    state = tmp_path / "state"
    log = tmp_path / "logs" / "crawl.log"
    log.parent.mkdir()
    crash_run(
        state,
        f"""
        def log_then_crash(curi):
            with open({str(log)!r}, "a") as fh:
                line = "2023-11-14T22:13:20.000Z   200  10 " + curi.uri + " - - text/html #001"
                fh.write(line + "\\n")
            os._exit(0)
        f = make(on_final=log_then_crash)
        f.schedule(CrawlURI("http://a.test/x"))
        f.schedule(CrawlURI("http://a.test/y"))
        curi = f.next(0)
        curi.status = 200
        f.finished(curi)
        """,
    )
    f = reopen(state)
    assert f.snapshot().queued == 1 and f.snapshot().succeeded == 1
    assert drain(f) == ["http://a.test/y"]
    f.close()


def test_in_flight_uri_and_counters_survive_a_crash(tmp_path: Path) -> None:
    crash_run(
        tmp_path,
        """
        f = make()
        for i in range(5):
            f.schedule(CrawlURI(f"http://a.test/{i}"))
        f.schedule(CrawlURI("http://b.test/"))
        first = f.next(0)
        first.status = 200
        f.finished(first)
        f.next(0)  # in flight at the crash
        """,
    )
    f = reopen(tmp_path)
    snap = f.snapshot()
    assert (snap.discovered, snap.queued, snap.succeeded) == (6, 5, 1)
    assert len(drain(f)) == 5
    f.close()


def test_other_format_version_is_refused(tmp_path: Path) -> None:
    f = reopen(tmp_path)
    f.schedule(CrawlURI("http://a.test/"))
    f.close()
    db = plyvel.DB(str(tmp_path / "frontier"))
    db.put(b"mfrontier", b'{"version": 1, "ordinal_reserved": 4096}')
    db.close()
    with pytest.raises(FrontierStateError, match="format version 1"):
        reopen(tmp_path)
    # the refused state stays closed: it can be opened again once fixed
    db = plyvel.DB(str(tmp_path / "frontier"))
    db.close()


def test_corrupt_queue_record_is_a_clear_error(tmp_path: Path) -> None:
    f = reopen(tmp_path)
    f.schedule(CrawlURI("http://a.test/"))
    f.close()
    db = plyvel.DB(str(tmp_path / "frontier"))
    db.put(b"mq:a.test", b"\xff garbage")
    db.close()
    with pytest.raises(FrontierStateError, match="corrupt"):
        reopen(tmp_path)


def test_state_locked_by_another_process_is_a_clear_error(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import plyvel, sys, time; db = plyvel.DB(sys.argv[1], create_if_missing=True);"
            "print('locked', flush=True); time.sleep(30)",
            str(tmp_path / "frontier"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(FrontierStateError, match="in use by another running crawler"):
            reopen(tmp_path)
    finally:
        holder.kill()
        holder.wait()
