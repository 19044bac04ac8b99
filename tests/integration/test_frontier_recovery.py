"""Crash recovery on real LevelDB: a child process builds frontier state and dies with
``os._exit`` at a chosen point (no close, like kill -9); the test reopens the state."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

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
def crash_after_uniq_write(f):
    real_put = f._uniq._put
    def put_then_crash(fps, count):
        real_put(fps, count)
        os._exit(0)  # the filter recorded the links, the queue never got them
    f._uniq._put = put_then_crash
def crash_before_uniq_write(f):
    def crash_instead(fps, count):
        os._exit(0)  # the write-ahead entry is durable, the filter never recorded the links
    f._uniq._put = crash_instead
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


def store_names(state: Path, prefix: bytes) -> list[bytes]:
    """Metadata names under ``prefix`` in the closed frontier store of ``state``."""
    db = plyvel.DB(str(state / "frontier"))
    try:
        return [k[1:] for k, _ in db.iterator(prefix=b"m" + prefix)]
    finally:
        db.close()


def test_link_lost_between_uniq_add_and_queue_write_is_recovered(tmp_path: Path) -> None:
    crash_run(
        tmp_path,
        """
        f = make()
        f.schedule(CrawlURI("http://a.test/page"))
        f.schedule(CrawlURI("http://a.test/old"))
        f.schedule(CrawlURI("http://b.test/done"))
        page, done = f.next(0), f.next(0)
        assert (page.uri, done.uri) == ("http://a.test/page", "http://b.test/done")
        assert f.next(0) is None  # a.test/old waits: one URI at a time per queue
        done.status = 200
        f.finished(done)
        f.schedule(page.create_child("http://a.test/kept", Hop.LINK))
        crash_after_uniq_write(f)
        f.schedule_many([page.create_child(u, Hop.LINK)
                         for u in ("http://a.test/lost", "http://c.test/lost")])
        raise SystemExit("not reached")
        """,
    )
    f = reopen(tmp_path)
    # The candidates step skips links the frontier surely saw: the lost ones, recorded by the
    # filter but never queued, must not be among them, or no page could queue them again.
    lost = ["http://a.test/lost", "http://c.test/lost"]
    seen = ["http://a.test/kept", "http://b.test/done"]
    assert f.seen_recently([*lost, *seen]) == [False, False, True, True]
    links = {
        "http://a.test/page": [
            "http://a.test/kept",
            "http://a.test/lost",
            "http://a.test/old",
            "http://b.test/done",  # finished before the crash: not fetched again
            "http://c.test/lost",
        ]
    }
    fetched = drain(f, links)
    assert sorted(fetched) == [
        "http://a.test/kept",
        "http://a.test/lost",
        "http://a.test/old",
        "http://a.test/page",
        "http://c.test/lost",
    ]
    # once queued again, a lost link is an ordinary seen one
    assert f.seen_recently(lost) == [True, True]
    assert f.schedule(CrawlURI("http://a.test/lost")) is False
    f.close()
    assert store_names(tmp_path, b"l:") == [] == store_names(tmp_path, b"a:")


def test_link_announced_but_never_recorded_is_queued_once(tmp_path: Path) -> None:
    crash_run(
        tmp_path,
        """
        f = make()
        f.schedule(CrawlURI("http://a.test/page"))
        page = f.next(0)
        crash_before_uniq_write(f)
        f.schedule(page.create_child("http://a.test/next", Hop.LINK))
        raise SystemExit("not reached")
        """,
    )
    assert len(store_names(tmp_path, b"a:")) == 1
    f = reopen(tmp_path)
    first = f.schedule(CrawlURI("http://a.test/next"))
    again = f.schedule(CrawlURI("http://a.test/next"))
    assert (first, again) == (True, False)
    assert sorted(drain(f)) == ["http://a.test/next", "http://a.test/page"]
    f.close()
    assert store_names(tmp_path, b"l:") == [] == store_names(tmp_path, b"a:")


def test_a_lost_link_found_by_many_threads_is_queued_once(tmp_path: Path) -> None:
    crash_run(
        tmp_path,
        """
        f = make()
        f.schedule(CrawlURI("http://a.test/page"))
        page = f.next(0)
        crash_after_uniq_write(f)
        f.schedule_many([page.create_child(f"http://a.test/{i}", Hop.LINK) for i in range(400)])
        raise SystemExit("not reached")
        """,
    )
    f = reopen(tmp_path)
    start = threading.Barrier(6)
    wins: list[int] = []

    def find_them_all(n: int) -> None:
        start.wait(10)
        order = range(400) if n % 2 else range(399, -1, -1)
        for i in range(0, 400, 40):  # page by page, some threads from the other end
            curis = [CrawlURI(f"http://a.test/{j}") for j in list(order)[i : i + 40]]
            wins.append(sum(f.schedule_many(curis)))

    threads = [threading.Thread(target=find_them_all, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sum(wins) == 400
    assert len(drain(f)) == 401  # the page and its 400 links, each once
    f.close()


class PausingUniqFilter(LevelDBUriUniqFilter):
    """The real filter; a call from the thread named ``paused`` waits for ``go`` first."""

    paused = "paused"
    go = threading.Event()
    waiting = threading.Event()

    def add_many_announced(self, canonicals: Any, announce: Any) -> list[bool]:
        if threading.current_thread().name == self.paused:
            self.waiting.set()
            assert self.go.wait(10)
        return super().add_many_announced(canonicals, announce)


def test_a_lost_link_taken_while_another_thread_checks_it_is_queued_once(tmp_path: Path) -> None:
    crash_run(
        tmp_path,
        """
        f = make()
        f.schedule(CrawlURI("http://a.test/page"))
        page = f.next(0)
        crash_after_uniq_write(f)
        f.schedule(page.create_child("http://a.test/lost", Hop.LINK))
        raise SystemExit("not reached")
        """,
    )
    f = WorkQueueFrontier(
        LevelDBQueueStore(),
        HostnameQueueAssignmentPolicy(),
        PausingUniqFilter(),
        NO_DELAY,
        clock=ManualClock(),
    )
    f.open(tmp_path)
    late: list[bool] = []
    slow = threading.Thread(
        target=lambda: late.append(f.schedule(CrawlURI("http://a.test/lost"))),
        name=PausingUniqFilter.paused,
    )
    slow.start()
    assert PausingUniqFilter.waiting.wait(10)  # it found the link possibly lost, then paused
    assert f.schedule(CrawlURI("http://a.test/lost")) is True
    PausingUniqFilter.go.set()
    slow.join(10)
    assert late == [False]
    assert sorted(drain(f)) == ["http://a.test/lost", "http://a.test/page"]
    f.close()


def test_the_store_keeps_nothing_per_url_once_queued(tmp_path: Path) -> None:
    f = reopen(tmp_path)
    f.schedule(CrawlURI("http://a.test/"))
    page = f.next(0)
    assert page is not None
    f.schedule_many([page.create_child(f"http://a.test/{i}", Hop.LINK) for i in range(50)])
    page.status = 200
    f.finished(page)
    assert len(drain(f)) == 50
    f.close()
    db = plyvel.DB(str(tmp_path / "frontier"))
    try:
        names = sorted(k[1:].split(b":")[0] for k, _ in db.iterator(prefix=b"m"))
    finally:
        db.close()
    # queue records, the counters and the sums over the records (the inactive index's sequence
    # too); no write-ahead, lost-link, journal, inactive-queue or rotation entries left
    assert names == [b"frontier", b"iseq", b"q", b"tally"]


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
    db.put(b"mfrontier", b'{"version": 2, "ordinal_reserved": 4096}')
    db.close()
    # version 2 kept a mark per URL ever queued: a state of that format is not read
    with pytest.raises(FrontierStateError, match="format version 2; this crawler reads version 4"):
        reopen(tmp_path)
    # the refused state stays closed: it can be opened again once fixed
    db = plyvel.DB(str(tmp_path / "frontier"))
    db.close()


@pytest.mark.parametrize("read_by", ["rotation index", "full pass"])
def test_corrupt_queue_record_is_a_clear_error(tmp_path: Path, read_by: str) -> None:
    f = reopen(tmp_path)
    f.schedule(CrawlURI("http://a.test/"))
    assert f.next(0) is not None  # in rotation: its record is read on resume
    f.close()
    db = plyvel.DB(str(tmp_path / "frontier"))
    db.put(b"mq:a.test", b"\xff garbage")
    if read_by == "full pass":
        db.delete(b"mtally")
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
