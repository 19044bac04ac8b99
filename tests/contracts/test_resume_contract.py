"""A frontier reopened on a store that persists (LevelDB, Redis, a Redis Cluster) resumes the crawl:
queued URIs, counters, what was already seen, retry attempts; a URI handed out and never
finished comes back (at once on LevelDB; on Redis when its lease runs out); ordinals are never
reused."""

from __future__ import annotations

import pytest
from support.stores import FrontierMaker

from crawler.curi import CrawlURI, FetchStatus, SchedulingDirective

pytestmark = pytest.mark.timeout(60)

LEASE_S = 1.0
"""The Redis lease of the first frontier: how long its unfinished URI stays out."""


def test_queued_uris_and_counters_survive_reopen(persistent_stores: FrontierMaker) -> None:
    first = persistent_stores.frontier("crawl", lease_s=LEASE_S)
    for i in range(5):
        first.add(f"http://a.test/{i}")
    first.add("http://b.test/seed", directive=SchedulingDirective.MEDIUM)
    done = first.take(timeout_s=5.0)  # returns at once when the store answers at once
    assert done is not None
    first.done(done)
    in_flight = first.take(timeout_s=5.0)  # never finished: must come back after reopening
    assert in_flight is not None
    first.close()

    again = persistent_stores.frontier("crawl", lease_s=LEASE_S)
    snap = again.frontier.snapshot()
    assert (snap.discovered, snap.succeeded) == (6, 1)
    assert again.add("http://a.test/3") is False  # still known as seen
    uris = []
    while len(uris) < 5 and (curi := again.take(timeout_s=20.0)) is not None:
        uris.append(curi.uri)
        again.done(curi)
    assert in_flight.uri in uris
    assert sorted(uris) == sorted(
        ({f"http://a.test/{i}" for i in range(5)} | {"http://b.test/seed"}) - {done.uri}
    )
    assert again.frontier.is_empty()
    assert again.frontier.snapshot().succeeded == 6
    new = CrawlURI("http://c.test/")
    assert again.frontier.schedule(new)
    assert new.ordinal > max(c.ordinal for c in again.finals)  # ordinals never reused


def test_retry_attempts_are_persisted(persistent_stores: FrontierMaker) -> None:
    first = persistent_stores.frontier("crawl")
    first.add("http://a.test/")
    curi = first.take()
    assert curi is not None
    assert first.done(curi, FetchStatus.CONNECT_LOST) is False
    first.close()
    again = persistent_stores.frontier("crawl")
    curi = again.take(timeout_s=20.0)
    assert curi is not None and curi.fetch_attempts == 1
