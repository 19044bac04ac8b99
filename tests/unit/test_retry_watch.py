"""A failed try shows where an operator looks: the frontier's retries_waiting, status.json and
``crawler status`` (last error, when it is tried again, an ETA not shorter than that), and the
frontier-summary-report."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler.cli.display import format_status
from crawler.clock import ManualClock
from crawler.curi import CrawlURI, FetchStatus
from crawler.frontier import (
    HostnameQueueAssignmentPolicy,
    MemoryQueueStore,
    WorkQueueFrontier,
    frontier_summary_report,
    note_protocol_error,
)
from crawler.frontier.frontier_abilities import FrontierAbilities
from crawler.order.schema import FrontierConfig, PolitenessConfig, RetriesConfig
from crawler.reports.status import StatusPublisher
from crawler.stats import StatsCounts
from crawler.uniq import MemoryUriUniqFilter

pytestmark = pytest.mark.timeout(10)

BAD_STATUS = "RemoteProtocolError: malformed status line 'HTTP/1.1 OK'"


def frontier(tmp_path: Path, clock: ManualClock) -> WorkQueueFrontier:
    config = FrontierConfig(
        politeness=PolitenessConfig(delay_factor=0, min_delay_ms=0, max_delay_ms=0),
        retries=RetriesConfig(retry_delay_s=900, protocol_retry_delay_s=60),
    )
    f = WorkQueueFrontier(
        MemoryQueueStore(),
        HostnameQueueAssignmentPolicy(),
        MemoryUriUniqFilter(),
        config,
        clock=clock,
    )
    f.open(tmp_path)
    return f


def fail(f: WorkQueueFrontier, uri: str, status: int, delay_s: float, error: str = "") -> None:
    curi = f.next(0)
    assert curi is not None and curi.uri == uri
    curi.status = status
    curi.retry_delay_s = delay_s
    if error:
        curi.annotate("err=RemoteProtocolError")
        note_protocol_error(curi, error)
    else:
        curi.annotate("err=ConnectError")
    assert f.finished(curi) is False


def test_each_failed_try_shows_its_error_and_when_it_comes_back(tmp_path: Path) -> None:
    clock = ManualClock()
    f = frontier(tmp_path, clock)
    f.schedule(CrawlURI("http://a.test/broken"))
    f.schedule(CrawlURI("http://b.test/down"))
    fail(f, "http://a.test/broken", FetchStatus.CONNECT_LOST, 60, BAD_STATUS)
    fail(f, "http://b.test/down", FetchStatus.CONNECT_FAILED, 900)

    waiting = f.retries_waiting()
    assert waiting.count == 2
    assert waiting.last_due_s == clock.time() + 900
    first, second = waiting.soonest
    assert (first.uri, first.status, first.error, first.attempts) == (
        "http://a.test/broken",
        -3,
        BAD_STATUS,
        1,
    )
    assert first.due_s == clock.time() + 60
    assert (second.uri, second.error) == ("http://b.test/down", "ConnectError")

    report = frontier_summary_report(FrontierAbilities.of(f), "job", clock.time())
    assert " URIs waiting: 2" in report
    assert f" 1m -3 1t http://a.test/broken {BAD_STATUS}" in report
    assert " 15m -2 1t http://b.test/down ConnectError" in report

    # A status a minute later: the ETA covers the retry still to come, not the empty queues.
    clock.advance(60)
    pub = StatusPublisher(tmp_path, "job")
    doc = pub.document(
        state="RUNNING",
        exit_status="",
        now_s=clock.time(),
        mono_s=clock.monotonic(),
        started_s=clock.time() - 60,
        elapsed_s=60.0,
        counts=StatsCounts(finished=0, succeeded=0),
        snap=f.snapshot(),
        busy_threads=0,
        total_threads=2,
        thread_steps={},
        busiest=[],
        block_rules=[],
        seeds=2,
        processors=[],
        retrying=f.retries_waiting(),
    )
    assert doc["eta_s"] == 840
    assert doc["retrying"]["uris"] == 1  # the first is due now: no longer waiting
    assert doc["retrying"]["soonest"][0]["error"] == "ConnectError"
    text = format_status(doc)
    assert "the last retry in 0:14:00" in text
    assert "1 URI waiting for a retry" in text
    assert "http://b.test/down  ConnectError" in text

    # Its last try ends it: it no longer waits.
    clock.advance(900)
    f.next(0)  # a.test's retry
    curi = f.next(0)
    assert curi is not None and curi.uri == "http://b.test/down"
    curi.status = 200
    assert f.finished(curi)
    assert f.retries_waiting().count == 0


def test_a_deferral_is_not_a_failed_try(tmp_path: Path) -> None:
    clock = ManualClock()
    f = frontier(tmp_path, clock)
    f.schedule(CrawlURI("http://a.test/"))
    curi = f.next(0)
    assert curi is not None
    curi.status = FetchStatus.DEFERRED
    curi.prerequisite = curi.create_child("http://a.test/robots.txt", "P")
    assert f.finished(curi) is False
    assert f.retries_waiting().count == 0
