"""A page's digest entry rides with the frontier: before a worker queues a page's links, the
entries its WARC writer left waiting go first in the round trip the frontier makes anyway (the
already-seen check), so another worker fetching a link finds the page's payload, and the digest
index spends no round trip of its own. On a Cluster they are sent alone, still before the
links are queued; with nothing to queue they wait for the next lookup."""

from __future__ import annotations

import contextlib
import hashlib
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.digest_entries import sha1
from support.redis_servers import RedisServer

from crawler.continuity import DigestEntry
from crawler.continuity.redis_digest_index import RedisDigestIndex
from crawler.curi import CrawlURI
from crawler.frontier.assignment import HostnameQueueAssignmentPolicy
from crawler.frontier.redis import redis_scripts
from crawler.frontier.redis.redis_frontier import RedisFrontier
from crawler.frontier.redis.redis_ride import Ride
from crawler.frontier.redis.redis_store import RedisQueueStore, RedisQueueStoreParams
from crawler.order.schema import FrontierConfig, PolitenessConfig
from crawler.uniq import redis_uniq
from crawler.uniq.redis_uniq import RedisUriUniqFilter, RedisUriUniqFilterParams

pytestmark = pytest.mark.timeout(60)

PAGE = sha1(b"the page's payload")
ENTRY = DigestEntry(
    "http://a.example/page",
    "2026-11-27T10:00:00Z",
    "urn:uuid:00000000-0000-4000-8000-000000000001",
    "WEB-20261127100000000-00000-1~h.warc.gz",
    1000,
)


class Worker:
    """One worker's frontier and digest index, the index carried by the frontier (as the
    controller wires them)."""

    def __init__(self, url: str, prefix: str, uniq_url: str = "") -> None:
        pol = PolitenessConfig(delay_factor=0, min_delay_ms=0, max_delay_ms=0)
        self.frontier = RedisFrontier(
            RedisQueueStore(RedisQueueStoreParams(url=url, namespace=prefix, worker_id="w1")),
            HostnameQueueAssignmentPolicy(),
            RedisUriUniqFilter(RedisUriUniqFilterParams(url=uniq_url or url, namespace=prefix)),
            FrontierConfig(politeness=pol),
        )
        self.frontier.open(Path("."))
        self.index = RedisDigestIndex.connect(url, prefix)
        self.frontier.carry_before_queueing(self.index.carried_by_frontier())

    def write_page(self) -> None:
        """The WARC writer's part for a new payload: look it up, write, remember it."""
        assert self.index.lookup(PAGE) is None
        self.index.add_later(PAGE, ENTRY)
        self.index.flush(PAGE)  # the candidates step's call: the frontier carries it instead

    def close(self) -> None:
        self.frontier.close()
        self.index.close()


@pytest.fixture
def worker_and_reader(
    digest_url_prefix: tuple[str, str],
) -> Iterator[tuple[Worker, RedisDigestIndex]]:
    url, prefix = digest_url_prefix
    worker = Worker(url, prefix)
    reader = RedisDigestIndex.connect(url, prefix)  # another worker's index
    try:
        yield worker, reader
    finally:
        worker.close()
        reader.close()


def links(*paths: str) -> list[CrawlURI]:
    return [CrawlURI(f"http://b.example{p}", via=ENTRY.uri, hop_path="L") for p in paths]


def test_the_page_entry_is_stored_before_its_links_are_queued(
    worker_and_reader: tuple[Worker, RedisDigestIndex],
) -> None:
    worker, reader = worker_and_reader
    worker.write_page()
    trips = worker.index.round_trips
    assert reader.lookup(PAGE) is None  # still waiting in the worker
    assert worker.frontier.schedule_many(links("/1", "/2")) == [True, True]
    found = reader.lookup(PAGE)
    assert found is not None and found.uri == ENTRY.uri
    cluster = _is_cluster(worker)
    # One redis-server: it rode in the frontier's round trip; a Cluster: sent alone.
    assert worker.index.round_trips - trips == (1 if cluster else 0)


def test_with_nothing_to_queue_the_entry_waits_for_the_next_lookup(
    worker_and_reader: tuple[Worker, RedisDigestIndex],
) -> None:
    worker, reader = worker_and_reader
    assert worker.frontier.schedule_many(links("/seen")) == [True]
    worker.write_page()
    trips = worker.index.round_trips
    assert worker.frontier.schedule_many(links("/seen")) == [False]
    assert worker.index.round_trips == trips
    assert reader.lookup(PAGE) is None  # nothing queued: nothing needed it yet
    assert worker.index.lookup(sha1(b"the next page")) is None  # carries the waiting entry
    found = reader.lookup(PAGE)
    assert found is not None and found.uri == ENTRY.uri


def test_the_entry_goes_first_in_the_already_seen_round_trip(
    redis_server: RedisServer,
) -> None:
    worker = Worker(redis_server.url, f"t{uuid.uuid4().hex[:12]}:")
    monitor = Monitor(redis_server.port)
    try:
        worker.write_page()
        monitor.start()
        assert worker.frontier.schedule_many(links("/1")) == [True]
        commands = monitor.until("RECORD_SCHEDULE")  # the seen set is on this server
    finally:
        monitor.stop()
        worker.close()
    names = [name for _, name in commands]
    first = names.index("HSETNX dg:")
    assert names[first + 1] == "CONTAINS", names  # written together on one connection
    assert commands[first][0] == commands[first + 1][0], commands
    assert first < names.index("RECORD_SCHEDULE")


def test_with_the_seen_set_on_another_server_the_entry_rides_with_the_schedule(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    other = RedisServer(tmp_path / "uniq").start()
    prefix = f"t{uuid.uuid4().hex[:12]}:"
    worker = Worker(redis_server.url, prefix, uniq_url=other.url)
    reader = RedisDigestIndex.connect(redis_server.url, prefix)
    monitor = Monitor(redis_server.port)
    try:
        worker.write_page()
        trips = worker.index.round_trips
        monitor.start()
        assert worker.frontier.schedule_many(links("/1")) == [True]
        commands = monitor.until("SCHEDULE")
        assert worker.index.round_trips == trips
        found = reader.lookup(PAGE)
        assert found is not None and found.uri == ENTRY.uri
    finally:
        monitor.stop()
        reader.close()
        worker.close()
        other.stop()
    names = [name for _, name in commands]
    first = names.index("HSETNX dg:")
    assert names[first + 1] == "SCHEDULE", names
    assert commands[first][0] == commands[first + 1][0], commands


def test_an_entry_another_thread_gave_back_unsent_is_sent_before_this_thread_queues(
    two_workers: tuple[RedisDigestIndex, RedisDigestIndex],
) -> None:
    index, reader = two_workers
    index.carried_by_frontier()
    index.add_later(PAGE, ENTRY)  # this thread wrote the page
    rides: list[Ride | None] = []
    taker = threading.Thread(target=lambda: rides.append(index.ride()))
    taker.start()  # thread 1 takes the waiting entry for its already-seen check
    taker.join(5)
    first = rides[0]
    second = index.ride()  # this page's candidates find the page's entry being sent
    assert first is not None and second is not None
    done = threading.Event()
    waiter = threading.Thread(
        target=lambda: (second.ready_for(reader.client), done.set()), daemon=True
    )
    waiter.start()
    assert not done.wait(0.2)  # waits for thread 1's round trip
    first.close()  # thread 1 had nothing to queue: the entry goes back, unsent
    waiter.join(5)
    assert done.is_set()
    second.close()
    found = reader.lookup(PAGE)  # thread 2 may queue the page's links now: the entry is stored
    assert found is not None and found.uri == ENTRY.uri


def _is_cluster(worker: Worker) -> bool:
    return "Cluster" in type(worker.index.client).__name__


class Monitor:
    """The commands clients send a redis-server (MONITOR): (client address, name), EVALSHA by
    the frontier's or the uniq filter's script name."""

    def __init__(self, port: int) -> None:
        scripts = {
            "CONTAINS": redis_uniq._CONTAINS_SCRIPT,
            "SCHEDULE": redis_scripts.SCHEDULE,
            "RECORD_SCHEDULE": redis_scripts.RECORD_SCHEDULE,
        }
        self.names = {hashlib.sha1(t.encode()).hexdigest(): n for n, t in scripts.items()}
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.sendall(b"MONITOR\r\n")
        self.sock.recv(5)  # +OK\r\n
        self.seen: list[tuple[str, str]] = []
        self.thread = threading.Thread(target=self._read, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _read(self) -> None:
        # stop() shuts the socket down under the read; the server may reset it first
        with contextlib.suppress(OSError, ValueError), self.sock.makefile("rb") as stream:
            for raw in stream:
                line = raw.decode("utf-8", "replace")
                if " lua] " in line or not line.startswith("+"):
                    continue
                parts = line.split('"')
                if len(parts) < 3:
                    continue
                name = parts[1].upper()
                if name == "EVALSHA" and len(parts) > 3:
                    name = self.names.get(parts[3], "EVALSHA")
                elif name == "HSETNX" and len(parts) > 3 and "dg:" in parts[3]:
                    name = "HSETNX dg:"  # into a digest bucket (not the files' names)
                self.seen.append((parts[0].partition("[")[2], name))

    def until(self, name: str, timeout_s: float = 5.0) -> list[tuple[str, str]]:
        """The commands seen once ``name`` was (waits at most ``timeout_s``)."""
        deadline = time.monotonic() + timeout_s
        while not any(n == name for _, n in self.seen) and time.monotonic() < deadline:
            time.sleep(0.01)
        return list(self.seen)

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        if self.thread.is_alive():
            self.thread.join(5)


def test_a_thread_does_not_wait_for_the_entries_of_other_pages_in_flight(
    two_workers: tuple[RedisDigestIndex, RedisDigestIndex],
) -> None:
    """Another page's entry, taken by a third thread's round trip still under way, does not hold
    back this page's links: only this thread's own entries are waited for."""
    index, reader = two_workers
    index.carried_by_frontier()
    other_page = sha1(b"another page's payload")
    rides: list[Ride | None] = []

    def other_thread() -> None:
        index.add_later(other_page, ENTRY)  # another toe thread wrote another page
        rides.append(index.ride())  # ... and its round trip is under way

    taker = threading.Thread(target=other_thread)
    taker.start()
    taker.join(5)
    first = rides[0]
    assert first is not None
    index.add_later(PAGE, ENTRY)  # this thread's page
    second = index.ride()
    assert second is not None
    done = threading.Event()
    waiter = threading.Thread(
        target=lambda: (second.ready_for(reader.client), done.set()), daemon=True
    )
    waiter.start()
    try:
        assert done.wait(2.0)  # not held back by the other page's round trip
    finally:
        first.close()
        waiter.join(5)
        second.close()  # carried by no call here: back to those waiting
    index.flush()
    assert reader.lookup(PAGE) is not None and reader.lookup(other_page) is not None
