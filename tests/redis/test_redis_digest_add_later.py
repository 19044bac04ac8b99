"""The shared digest index sends a page's first capture with the next lookup: one round trip
per page instead of two, first writer still winning across workers, nothing lost at close."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

import pytest
from support.digest_entries import sha1
from support.redis_servers import RedisServer

from crawler.continuity import DigestEntry, LayeredDigestIndex, LevelDBDigestIndex
from crawler.continuity.digest_index import add_later
from crawler.continuity.redis_digest_index import PENDING_MAX, RedisDigestIndex

pytestmark = pytest.mark.timeout(60)


def entry(n: int, uri: str = "http://a.test/") -> DigestEntry:
    """The ``n``-th capture, in one of three WARC files."""
    return DigestEntry(
        f"{uri}{n}",
        f"2026-11-27T10:00:{n % 60:02d}Z",
        f"urn:uuid:00000000-0000-4000-8000-{n:012x}",
        f"WEB-20261127100000000-{n % 3:05d}-1~h.warc.gz",
        n * 1000,
    )


def calls(index: RedisDigestIndex) -> dict[str, int]:
    """Calls per command so far (``INFO commandstats`` of a standalone server)."""
    stats = index.client.info("commandstats")
    return {name: int(row["calls"]) for name, row in stats.items()}


def test_a_capture_reaches_the_other_workers_with_the_next_lookup(
    two_workers: tuple[RedisDigestIndex, RedisDigestIndex],
) -> None:
    one, two = two_workers
    page, other = sha1(b"page"), sha1(b"other page")
    one.add_later(page, entry(1))
    assert one.lookup(page) == entry(1)  # answered in the process
    assert two.lookup(page) is None  # not sent yet
    assert one.lookup(other) is None  # this lookup carries it
    assert two.lookup(page) == entry(1)
    two.add_later(page, entry(2, "http://b.test/"))
    two.flush()
    assert one.lookup(page) == entry(1)  # the first capture stays the original
    assert two.lookup(page) == entry(1)


def test_the_first_writer_wins_when_both_send_later(
    two_workers: tuple[RedisDigestIndex, RedisDigestIndex],
) -> None:
    one, two = two_workers
    payloads = [sha1(b"p%d" % i) for i in range(20)]
    for i, digest in enumerate(payloads):
        (one if i % 2 else two).add_later(digest, entry(i))
    one.flush()
    for i, digest in enumerate(payloads):
        (two if i % 2 else one).add_later(digest, entry(100 + i, "http://late.test/"))
    two.flush()
    one.flush()
    assert [two.lookup(d) for d in payloads] == [entry(i) for i in range(20)]
    assert dict(one.entries()) == {d: entry(i) for i, d in enumerate(payloads)}


def test_close_and_a_full_queue_send_what_waits(digest_url_prefix: tuple[str, str]) -> None:
    url, prefix = digest_url_prefix
    reader = RedisDigestIndex.connect(url, prefix)
    writer = RedisDigestIndex.connect(url, prefix)
    try:
        many = [sha1(b"m%d" % i) for i in range(PENDING_MAX)]
        for i, digest in enumerate(many[:-1]):
            writer.add_later(digest, entry(i))
        assert reader.lookup(many[0]) is None
        writer.add_later(many[-1], entry(PENDING_MAX - 1))  # the queue is full: sent now
        assert reader.lookup(many[-1]) == entry(PENDING_MAX - 1)
        writer.add_later(sha1(b"last"), entry(500))
        writer.close()
        assert reader.lookup(sha1(b"last")) == entry(500)
    finally:
        writer.close()
        reader.close()


def test_a_page_costs_one_lookup_and_one_hsetnx_and_no_script(redis_server: RedisServer) -> None:
    index = RedisDigestIndex.connect(redis_server.url, f"t{uuid.uuid4().hex[:12]}:")
    try:
        for n in range(3):  # registers the WARC files' names, once each
            index.add_later(sha1(b"warm %d" % n), entry(n))
        index.flush()
        before, trips = calls(index), index.round_trips
        for i in range(3, 33):  # the write chain: look the payload up, write, remember it
            assert index.lookup(sha1(b"page %d" % i)) is None
            index.add_later(sha1(b"page %d" % i), entry(i))
        index.flush()
        after = calls(index)
        sent = {k: after.get(k, 0) - before.get(k, 0) for k in after}
        assert sent.get("cmdstat_hget") == 30
        assert sent.get("cmdstat_hsetnx") == 30
        assert sent.get("cmdstat_evalsha", 0) == 0
        assert index.round_trips - trips == 31  # a lookup per page, carrying the previous add
    finally:
        index.close()


def test_threads_send_each_entry_once(redis_server: RedisServer) -> None:
    index = RedisDigestIndex.connect(redis_server.url, f"t{uuid.uuid4().hex[:12]}:")
    try:
        for n in range(3):
            index.add_later(sha1(b"warm %d" % n), entry(n))
        index.flush()
        before = calls(index)

        def write_chain(t: int) -> None:
            for i in range(40):
                digest = sha1(b"thread %d page %d" % (t, i))
                assert index.lookup(digest) is None
                index.add_later(digest, entry(t * 100 + i))

        threads = [threading.Thread(target=write_chain, args=(t,)) for t in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        index.flush()
        after = calls(index)
        assert after["cmdstat_hsetnx"] - before["cmdstat_hsetnx"] == 8 * 40
        assert len(dict(index.entries())) == 3 + 8 * 40
    finally:
        index.close()


def test_a_payload_an_earlier_crawl_holds_is_not_added(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    earlier = LevelDBDigestIndex(tmp_path / "job")
    earlier.add(sha1(b"old"), entry(7, "http://old.test/"))
    shared = RedisDigestIndex.connect(redis_server.url, f"t{uuid.uuid4().hex[:12]}:")
    layers = LayeredDigestIndex(shared, [earlier])
    try:
        add_later(layers, sha1(b"old"), entry(8))
        add_later(layers, sha1(b"new"), entry(9))
        shared.flush()
        assert dict(shared.entries()) == {sha1(b"new"): entry(9)}
        assert layers.lookup(sha1(b"old")) == entry(7, "http://old.test/")
    finally:
        layers.close()
