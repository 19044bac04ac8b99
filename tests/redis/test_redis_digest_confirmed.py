"""The shared digest index answers repeated payloads from the process and sends a page's entry
before its links only when it still waits: fewer round trips, the same answers across workers."""

from __future__ import annotations

import threading
import uuid

import pytest
from support.digest_entries import sha1
from support.redis_servers import RedisServer

from crawler.continuity import DigestEntry
from crawler.continuity.redis_digest_index import RedisDigestIndex

pytestmark = pytest.mark.timeout(60)


def entry(n: int, uri: str = "http://a.test/") -> DigestEntry:
    """The ``n``-th capture, all in one WARC file."""
    return DigestEntry(
        f"{uri}{n}",
        f"2026-11-27T10:00:{n % 60:02d}Z",
        f"urn:uuid:00000000-0000-4000-8000-{n:012x}",
        "WEB-20261127100000000-00000-1~h.warc.gz",
        n * 1000,
    )


def test_a_repeated_payload_is_answered_without_redis(
    two_workers: tuple[RedisDigestIndex, RedisDigestIndex],
) -> None:
    one, two = two_workers
    logo, css = sha1(b"logo"), sha1(b"site.css")
    assert one.lookup(logo) is None
    one.add_later(logo, entry(1))
    one.flush()  # stored: this worker's HSETNX confirms it
    trips = one.round_trips
    assert [one.lookup(logo) for _ in range(5)] == [entry(1)] * 5
    one.add_later(logo, entry(9, "http://b.test/"))  # stored already: nothing waits
    one.flush()
    assert one.round_trips == trips
    # The other worker learns it once (and the WARC file's name), then answers itself.
    trips = two.round_trips
    assert two.lookup(logo) == entry(1)
    assert two.round_trips == trips + 2
    assert two.lookup(logo) == entry(1)
    assert two.round_trips == trips + 2
    # A digest another worker stored first: this worker's HSETNX loses, its lookup reads
    # the winner's entry from Redis (never its own) and keeps that.
    one.add_later(css, entry(2))
    two.add_later(css, entry(3, "http://b.test/"))
    one.flush()
    two.flush()
    trips = two.round_trips
    assert two.lookup(css) == entry(2)
    assert two.lookup(css) == entry(2)
    assert two.round_trips == trips + 1
    assert dict(two.entries()) == {logo: entry(1), css: entry(2)}


def test_the_kept_entries_are_bounded(redis_server: RedisServer) -> None:
    prefix = f"t{uuid.uuid4().hex[:12]}:"
    writer = RedisDigestIndex.connect(redis_server.url, prefix)
    reader = RedisDigestIndex.connect(redis_server.url, prefix, confirmed_max=2)
    try:
        digests = [sha1(b"b%d" % i) for i in range(3)]
        for i, digest in enumerate(digests):
            writer.add_later(digest, entry(i))
        writer.flush()
        for i, digest in enumerate(digests):
            assert reader.lookup(digest) == entry(i)
        trips = reader.round_trips
        assert reader.lookup(digests[2]) == entry(2)  # kept
        assert reader.lookup(digests[1]) == entry(1)  # kept
        assert reader.round_trips == trips
        assert reader.lookup(digests[0]) == entry(0)  # the least recently used went out
        assert reader.round_trips == trips + 1
    finally:
        writer.close()
        reader.close()


def test_a_pages_flush_sends_only_while_its_entry_waits(
    two_workers: tuple[RedisDigestIndex, RedisDigestIndex],
) -> None:
    one, two = two_workers
    page, other, embed = sha1(b"page"), sha1(b"other"), sha1(b"embed")
    one.add_later(page, entry(1))
    one.add_later(embed, entry(2))
    trips = one.round_trips
    one.flush(page)  # the page's links are about to be scheduled: it goes out, with the embed
    assert one.round_trips == trips + 1
    assert two.lookup(page) == entry(1)
    assert two.lookup(embed) == entry(2)
    one.add_later(other, entry(3))
    assert one.lookup(sha1(b"unknown")) is None  # carries the waiting entry
    one.add_later(sha1(b"next page"), entry(4))  # another thread's page, written meanwhile
    trips = one.round_trips
    one.flush(other)  # rode out already: no round trip
    one.flush(sha1(b"a revisit"))  # nothing of its own waits
    assert one.round_trips == trips
    assert two.lookup(other) == entry(3)
    assert two.lookup(sha1(b"next page")) is None  # still waits for its own page's flush
    one.flush(sha1(b"next page"))
    assert one.round_trips == trips + 1
    assert two.lookup(sha1(b"next page")) == entry(4)


def test_a_pages_flush_waits_for_another_thread_sending_its_entry(
    redis_server: RedisServer,
) -> None:
    prefix = f"t{uuid.uuid4().hex[:12]}:"
    reader = RedisDigestIndex.connect(redis_server.url, prefix)
    index = RedisDigestIndex.connect(redis_server.url, prefix)
    gate, inside = threading.Event(), threading.Event()
    real_call = index._call

    def slow_call(call: object, what: str) -> object:
        if what == "digest lookup":  # the other thread's lookup, carrying the page's entry
            inside.set()
            assert gate.wait(10)
        return real_call(call, what)

    index._call = slow_call  # type: ignore[method-assign]
    try:
        page = sha1(b"page")
        index.add_later(page, entry(1))
        lookup = threading.Thread(target=index.lookup, args=(sha1(b"elsewhere"),))
        lookup.start()
        assert inside.wait(10)
        flushed = threading.Event()
        flusher = threading.Thread(target=lambda: (index.flush(page), flushed.set()))
        flusher.start()
        assert not flushed.wait(0.3)  # the entry is on its way, not stored yet
        gate.set()
        assert flushed.wait(10)
        assert reader.lookup(page) == entry(1)  # stored once the flush returned
        lookup.join(10)
        flusher.join(10)
    finally:
        gate.set()
        index.close()
        reader.close()
