"""The server gate for fetches outside the frontier (a browser page's sub-resources) on the
work-queue frontier: slots of the server cap shared with the queues, the page's own slot lent to
its sub-resources, the server's pace and holds, and no per-URI politeness delay."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from crawler.clock import ManualClock
from crawler.curi import CrawlURI
from crawler.frontier import (
    BACKOFF_MS_KEY,
    HostnameQueueAssignmentPolicy,
    InlinePass,
    MemoryQueueStore,
    WorkQueueFrontier,
)
from crawler.order.schema import FrontierConfig, PolitenessConfig
from crawler.uniq import MemoryUriUniqFilter

pytestmark = pytest.mark.timeout(30)

SHORT_S = 0.3
"""How long a test lets a fetch wait for a gate that must not admit it."""


def frontier(tmp: Path, **politeness: Any) -> tuple[WorkQueueFrontier, ManualClock]:
    pol = {"delay_factor": 0, "min_delay_ms": 0, "max_delay_ms": 0} | politeness
    clock = ManualClock()
    f = WorkQueueFrontier(
        MemoryQueueStore(),
        HostnameQueueAssignmentPolicy(),
        MemoryUriUniqFilter(),
        FrontierConfig(politeness=PolitenessConfig(**pol)),
        clock=clock,
    )
    f.open(tmp)
    return f, clock


def page_of(f: WorkQueueFrontier, uri: str) -> CrawlURI:
    f.schedule(CrawlURI(uri))
    page = f.next(0)
    assert page is not None and page.uri == uri
    return page


def answer(
    clock: ManualClock, url: str, status: int = 200, headers: list[tuple[str, str]] | None = None
) -> CrawlURI:
    curi = CrawlURI(url)
    curi.status = curi.http_status = status
    curi.fetch_start_ms = int(clock.time() * 1000)
    curi.fetch_duration_ms = 5
    curi.response_headers = headers or []
    return curi


def soon() -> float:
    return time.monotonic() + SHORT_S


def later() -> float:
    return time.monotonic() + 20


class Entering(threading.Thread):
    """``gate.enter`` on a thread of its own (as the browser's fetch threads call it)."""

    def __init__(self, f: WorkQueueFrontier, visit: Any, url: str) -> None:
        super().__init__(daemon=True)
        self.f, self.visit, self.url = f, visit, url
        self.ticket: InlinePass | None = None

    def run(self) -> None:
        self.ticket = self.f.inline_gate.enter(self.visit, self.url, later())


def test_the_pages_own_slot_is_lent_to_its_subresources_one_at_a_time(tmp_path: Path) -> None:
    f, clock = frontier(tmp_path, host_max_connections=1)
    gate = f.inline_gate
    page = page_of(f, "http://site.test/")
    visit = gate.visit(page)
    assert visit.server == "site.test:80"
    # At a cap of 1 the page's ToeThread holds the only slot: its sub-resources use it.
    first = gate.enter(visit, "http://site.test/app.js", soon())
    assert first is not None and first.own
    # A second one at once would be a second connection: it waits for the first.
    assert gate.enter(visit, "http://site.test/app.css", soon()) is None
    waiting = Entering(f, visit, "http://site.test/app.css")
    waiting.start()
    gate.leave(first, answer(clock, "http://site.test/app.js"))
    waiting.join(10)
    assert waiting.ticket is not None and waiting.ticket.own
    gate.leave(waiting.ticket, answer(clock, "http://site.test/app.css"))
    assert f.gate.active("site.test:80") == 1  # the page's, until it finishes
    page.status = 200
    f.finished(page)
    assert f.gate.active("site.test:80") == 0


def test_subresources_of_another_server_share_its_cap_with_its_queues(tmp_path: Path) -> None:
    f, clock = frontier(tmp_path, host_max_connections=2)
    gate = f.inline_gate
    page = page_of(f, "http://site.test/")
    visit = gate.visit(page)
    one = gate.enter(visit, "http://cdn.test/1.png", soon())
    two = gate.enter(visit, "http://cdn.test/2.png", soon())
    assert one is not None and two is not None and not one.own and not two.own
    assert gate.enter(visit, "http://cdn.test/3.png", soon()) is None  # the cap: 2
    # A queue of that server is parked while the browser holds its slots, and woken when one
    # is given back.
    f.schedule(CrawlURI("http://cdn.test/index.html"))
    assert f.next(0) is None
    gate.leave(one, answer(clock, "http://cdn.test/1.png"))
    queued = f.next(5)
    assert queued is not None and queued.uri == "http://cdn.test/index.html"
    assert gate.enter(visit, "http://cdn.test/3.png", soon()) is None  # the queue took it
    queued.status = 200
    f.finished(queued)
    three = gate.enter(visit, "http://cdn.test/3.png", soon())
    assert three is not None
    for ticket in (two, three):
        gate.leave(ticket, answer(clock, "http://cdn.test/x.png"))
    assert f.gate.active("cdn.test:80") == 0


def test_the_page_finds_its_own_server_busy_when_its_slot_is_lent(tmp_path: Path) -> None:
    f, clock = frontier(tmp_path, host_max_connections=2)
    gate = f.inline_gate
    visit = gate.visit(page_of(f, "http://site.test/"))
    own = gate.enter(visit, "http://site.test/a.js", soon())
    extra = gate.enter(visit, "http://site.test/b.js", soon())
    assert own is not None and own.own and extra is not None and not extra.own
    assert gate.enter(visit, "http://site.test/c.js", soon()) is None  # page + 1 = the cap
    gate.leave(extra, answer(clock, "http://site.test/b.js"))
    gate.leave(own, answer(clock, "http://site.test/a.js"))


def test_no_per_uri_politeness_delay_between_a_pages_subresources(tmp_path: Path) -> None:
    f, clock = frontier(tmp_path, delay_factor=5, min_delay_ms=3000, max_delay_ms=30000)
    gate = f.inline_gate
    visit = gate.visit(page_of(f, "http://site.test/"))
    for n in range(5):  # each admitted at once, though the queue would wait 3 s after each
        ticket = gate.enter(visit, f"http://cdn.test/{n}.png", soon())
        assert ticket is not None
        gate.leave(ticket, answer(clock, f"http://cdn.test/{n}.png"))


def test_a_servers_min_interval_still_applies(tmp_path: Path) -> None:
    f, clock = frontier(tmp_path, host_min_interval_ms=2000)
    gate = f.inline_gate
    visit = gate.visit(page_of(f, "http://site.test/"))
    first = gate.enter(visit, "http://cdn.test/1.png", soon())
    assert first is not None
    gate.leave(first, answer(clock, "http://cdn.test/1.png"))
    assert gate.enter(visit, "http://cdn.test/2.png", soon()) is None
    clock.advance(2)
    assert gate.enter(visit, "http://cdn.test/2.png", soon()) is not None


def test_a_429_with_retry_after_holds_and_paces_the_server_for_every_fetch(
    tmp_path: Path,
) -> None:
    f, clock = frontier(tmp_path)
    gate = f.inline_gate
    visit = gate.visit(page_of(f, "http://site.test/"))
    ticket = gate.enter(visit, "http://cdn.test/1.png", soon())
    assert ticket is not None
    refused = answer(clock, "http://cdn.test/1.png", 429, [("Retry-After", "30")])
    gate.leave(ticket, refused)
    assert [s for s, _ in f.paced_servers()] == ["cdn.test:80"]  # the pace learnt from it
    assert gate.enter(visit, "http://cdn.test/2.png", soon()) is None  # held
    f.schedule(CrawlURI("http://cdn.test/index.html"))
    assert f.next(0) is None  # the queues of that server too
    clock.advance(29)
    assert gate.enter(visit, "http://cdn.test/2.png", soon()) is None
    clock.advance(1.5)
    again = gate.enter(visit, "http://cdn.test/2.png", soon())
    assert again is not None
    gate.leave(again, answer(clock, "http://cdn.test/2.png"))


def test_a_queues_429_holds_the_browser_too(tmp_path: Path) -> None:
    f, clock = frontier(tmp_path)
    gate = f.inline_gate
    visit = gate.visit(page_of(f, "http://site.test/"))
    f.schedule(CrawlURI("http://cdn.test/index.html"))
    queued = f.next(0)
    assert queued is not None
    queued.status = 503
    queued.data[BACKOFF_MS_KEY] = 10_000
    f.finished(queued)
    assert gate.enter(visit, "http://cdn.test/1.png", soon()) is None
    clock.advance(10.5)
    assert gate.enter(visit, "http://cdn.test/1.png", soon()) is not None


def test_closing_the_frontier_releases_waiters(tmp_path: Path) -> None:
    f, _ = frontier(tmp_path, host_max_connections=1)
    gate = f.inline_gate
    visit = gate.visit(page_of(f, "http://site.test/"))
    assert gate.enter(visit, "http://cdn.test/1.png", soon()) is not None
    waiting = Entering(f, visit, "http://cdn.test/2.png")
    waiting.start()
    f.close()
    waiting.join(10)
    assert not waiting.is_alive() and waiting.ticket is None
