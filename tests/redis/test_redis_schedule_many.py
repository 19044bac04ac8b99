"""RedisFrontier.schedule_many against a real redis-server: a page's outlinks in a few round
trips, with the same answers (and crash-safety order) as scheduling them one by one."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import pytest
import redis
from support.redis_servers import RedisServer
from support.redis_worker_frontier import worker_frontier

from crawler.curi import CrawlURI
from crawler.uniq.redis_uniq import RedisUriUniqFilter


class DiesBeforeRecording(RedisUriUniqFilter):
    """A worker process that dies after queueing a batch, before recording it as seen: the
    three steps a Cluster takes (the uniq filter's keys are not in the queues' slots)."""

    def on_server(self, url: str) -> bool:
        return False  # record apart from queueing, as on a Cluster

    def add_many(self, canonicals: Iterable[str]) -> list[bool]:
        raise SystemExit("killed")


class DiesInTheRecordingStep(RedisUriUniqFilter):
    """A worker process whose one-step record-and-queue never reaches Redis."""

    def record_args(self, canonicals: Sequence[str]) -> tuple[list[int], list[str], list[Any]]:
        raise SystemExit("killed")


def _frontier(url: str, wid: str, uniq_class: type[RedisUriUniqFilter] = RedisUriUniqFilter) -> Any:
    return worker_frontier(url, wid, "s1:", uniq_class)


@pytest.fixture
def frontiers(redis_server: RedisServer) -> Iterator[list[Any]]:
    made: list[Any] = []
    yield made
    for f in made:
        f.close()


def _drain(frontier: Any) -> list[str]:
    got = []
    while (curi := frontier.next(0.3)) is not None:
        got.append(curi.uri)
        curi.status = 200
        frontier.finished(curi)
        assert frontier.flush(5.0)
    return got


def _links(*uris: str, **fields: Any) -> list[CrawlURI]:
    return [CrawlURI(u, via="http://a.example/", hop_path="L", **fields) for u in uris]


def test_a_batch_drops_duplicates_and_seen_uris_and_reports_bad_ones(
    redis_server: RedisServer, frontiers: list[Any]
) -> None:
    a = _frontier(redis_server.url, "wa")
    frontiers.append(a)
    assert a.schedule(CrawlURI("http://b.example/seen"))
    links = _links(
        "http://a.example/1",
        "http://www.a.example/1",  # the same canonical URI as the first
        "http://b.example/seen",
        "http:///no-host",
        "http://b.example/2",
    )
    assert a.schedule_many(links) == [True, False, False, False, True]
    assert a.errors == ["http:///no-host"]
    assert sorted(_drain(a)) == [
        "http://a.example/1",
        "http://b.example/2",
        "http://b.example/seen",
    ]
    assert a.is_empty()


def test_force_fetch_queues_a_seen_uri_again(
    redis_server: RedisServer, frontiers: list[Any]
) -> None:
    a = _frontier(redis_server.url, "wa")
    frontiers.append(a)
    assert a.schedule_many(_links("http://a.example/x")) == [True]
    assert _drain(a) == ["http://a.example/x"]
    assert a.schedule_many(_links("http://a.example/x")) == [False]
    assert a.schedule_many(_links("http://a.example/x", force_fetch=True)) == [True]
    assert _drain(a) == ["http://a.example/x"]


def test_a_page_of_links_costs_a_few_round_trips(
    redis_server: RedisServer, frontiers: list[Any]
) -> None:
    a = _frontier(redis_server.url, "wa")
    frontiers.append(a)
    client = redis.Redis(port=redis_server.port)

    def script_calls() -> int:
        stats = client.info("commandstats")
        return sum(int(stats.get(f"cmdstat_{c}", {}).get("calls", 0)) for c in ("evalsha", "eval"))

    assert a.schedule_many(_links("http://warm.example/")) == [True]  # scripts loaded
    before = script_calls()
    links = _links(*(f"http://h{i % 7}.example/p{i}" for i in range(60)))
    assert all(a.schedule_many(links))
    assert script_calls() - before <= 3  # contains, schedule (all shards), record
    before = script_calls()
    assert not any(a.schedule_many(_links(*(c.uri for c in links))))
    assert script_calls() - before == 0  # all known here: answered from the recent-keys cache
    client.close()
    assert len(_drain(a)) == 61


def test_a_worker_killed_between_queueing_and_recording_loses_nothing(
    redis_server: RedisServer, frontiers: list[Any]
) -> None:
    dying = _frontier(redis_server.url, "dead", DiesBeforeRecording)
    frontiers.append(dying)
    with pytest.raises(SystemExit):
        dying.schedule_many(_links("http://a.example/1", "http://b.example/2"))
    live = _frontier(redis_server.url, "live")
    frontiers.append(live)
    # Not recorded as seen, so offered again it is queued again: a duplicate, never a loss.
    assert live.schedule_many(_links("http://a.example/1")) == [True]
    assert sorted(_drain(live)) == [
        "http://a.example/1",
        "http://a.example/1",
        "http://b.example/2",
    ]


def test_on_one_server_a_uri_is_recorded_and_queued_in_one_step(
    redis_server: RedisServer, frontiers: list[Any]
) -> None:
    dying = _frontier(redis_server.url, "dead", DiesInTheRecordingStep)
    frontiers.append(dying)
    with pytest.raises(SystemExit):
        dying.schedule_many(_links("http://a.example/1", "http://b.example/2"))
    live = _frontier(redis_server.url, "live")
    frontiers.append(live)
    # Neither recorded nor queued: offered again, each is queued once.
    assert live.schedule_many(_links("http://a.example/1", "http://b.example/2")) == [True, True]
    forced = _links("http://a.example/1", "http://c.example/3")
    forced[0].force_fetch = True
    assert live.schedule_many(forced) == [True, True]  # forced: queued though recorded
    assert live.schedule_many(_links("http://c.example/3")) == [False]
    assert sorted(_drain(live)) == [
        "http://a.example/1",
        "http://a.example/1",
        "http://b.example/2",
        "http://c.example/3",
    ]
