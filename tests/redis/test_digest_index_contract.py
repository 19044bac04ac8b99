"""The DigestIndex contract, run against every backend: LevelDB (one process), Redis (a
standalone server and a Cluster). First writer wins, also between threads; entries come back as
stored; an index copies into another unchanged."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.digest_entries import entry, sha1
from support.redis_servers import RedisClusterServers, RedisServer

from crawler.continuity import DigestEntry, DigestIndex, LayeredDigestIndex, LevelDBDigestIndex
from crawler.continuity.digest_index import copy_entries
from crawler.continuity.redis_digest_index import RedisDigestIndex

pytestmark = pytest.mark.timeout(60)

BACKENDS = ["leveldb", "redis", "redis-cluster"]


@pytest.fixture
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[DigestIndex]:
    kind = request.param
    made: DigestIndex
    if kind == "leveldb":
        made = LevelDBDigestIndex(tmp_path / "digest-index")
    elif kind == "redis":
        server: RedisServer = request.getfixturevalue("redis_server")
        made = RedisDigestIndex.connect(server.url, "c1:")
    else:
        cluster: RedisClusterServers = request.getfixturevalue("redis_cluster")
        prefix = f"t{uuid.uuid4().hex[:12]}:"  # the session's cluster is shared: a fresh namespace
        made = RedisDigestIndex.connect(cluster.url, prefix)
    try:
        yield made
    finally:
        made.close()


@pytest.mark.parametrize("index", BACKENDS, indirect=True)
def test_the_first_capture_of_a_payload_wins(index: DigestIndex) -> None:
    digest = sha1(b"the payload")
    assert index.lookup(digest) is None
    first, second = entry(1), entry(2, "http://b.test/")
    assert index.add(digest, first) == first
    assert index.add(digest, second) == first  # later captures learn the original
    assert index.lookup(digest) == first
    assert index.lookup(sha1(b"another payload")) is None


@pytest.mark.parametrize("index", BACKENDS, indirect=True)
def test_entries_come_back_as_stored(index: DigestIndex) -> None:
    odd = {
        "sha1:" + "A" * 32: DigestEntry("http://x.test/é?q=1", "2026-01-01T00:00:00.123456Z"),
        "sha256:abcdef": DigestEntry("http://y.test/", "2026-01-01", "<urn:other:id>", None, 0),
        "md5:12345678901234": DigestEntry("https://z.test/" + "p" * 3000, "2026", None, "f", None),
        sha1(b"x"): entry(7),
        sha1(b"ms"): DigestEntry("http://m.test/", "2026-11-27T10:00:00.007Z", None, None, 1),
        sha1(b"old"): DigestEntry("http://o.test/", "1969-12-31T23:59:59Z"),
        sha1(b"leap"): DigestEntry("http://l.test/", "2016-12-31T23:59:60Z"),
        sha1(b"bad"): DigestEntry("http://b.test/", "2026-02-30T00:00:00Z"),
    }
    for digest, one in odd.items():
        assert index.add(digest, one) == one
    for digest, one in odd.items():
        assert index.lookup(digest) == one, digest
    assert dict(index.entries()) == odd


@pytest.mark.parametrize("index", BACKENDS, indirect=True)
def test_threads_racing_for_one_payload_agree_on_one_original(index: DigestIndex) -> None:
    digests = [sha1(str(n).encode()) for n in range(40)]
    results: dict[int, list[DigestEntry]] = {}
    start = threading.Barrier(4)

    def racer(n: int) -> None:
        start.wait(10)
        results[n] = [index.add(d, entry(n * 100 + i)) for i, d in enumerate(digests)]

    threads = [threading.Thread(target=racer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    for i, digest in enumerate(digests):
        winners = {results[n][i] for n in range(4)}
        assert len(winners) == 1, digest
        assert winners == {index.lookup(digest)}


@pytest.mark.parametrize("index", BACKENDS, indirect=True)
def test_an_index_copies_into_another_and_earlier_layers_keep_their_originals(
    index: DigestIndex, tmp_path: Path
) -> None:
    for n in range(5):
        index.add(sha1(str(n).encode()), entry(n))
    with LevelDBDigestIndex(tmp_path / "job") as job:
        job.add(sha1(b"0"), entry(99, "http://earlier.test/"))
        assert copy_entries(index.entries(), job) == 4  # the earlier original stays
        assert job.lookup(sha1(b"0")) == entry(99, "http://earlier.test/")
        assert job.lookup(sha1(b"4")) == entry(4)
        with LevelDBDigestIndex(tmp_path / "run") as run:
            layered = LayeredDigestIndex(run, [job])
            assert layered.add(sha1(b"3"), entry(50)) == entry(3)  # known behind: kept there
            assert layered.add(sha1(b"new"), entry(51)) == entry(51)
            assert dict(layered.entries()) == {sha1(b"new"): entry(51)}


def test_a_second_process_cannot_open_a_leveldb_index(tmp_path: Path) -> None:
    from crawler.continuity.leveldb_digest_index import DigestIndexBusyError

    with LevelDBDigestIndex(tmp_path / "idx"), pytest.raises(DigestIndexBusyError, match="in use"):
        LevelDBDigestIndex(tmp_path / "idx")


def test_workers_sharing_a_redis_index_read_each_others_file_names(
    redis_server: RedisServer,
) -> None:
    # Each worker process has its own client; a file name is stored once, by reference.
    one = RedisDigestIndex.connect(redis_server.url, "c7:")
    two = RedisDigestIndex.connect(redis_server.url, "c7:")
    try:
        for n in range(50):
            one.add(sha1(b"%d" % n), entry(n))
        assert two.lookup(sha1(b"3")) == entry(3)
        assert two.add(sha1(b"4"), entry(99)) == entry(4)
        assert dict(two.entries()) == {sha1(b"%d" % n): entry(n) for n in range(50)}
        files = one.client.hgetall("c7:dgf")  # each name once (99's: its add lost the race)
        assert sorted(v.decode() for v in files.values()) == sorted(
            {str(entry(n).warc_filename) for n in [*range(50), 99]}
        )
        one.delete_all()
        assert one.client.keys("c7:*") == []
    finally:
        one.close()
        two.close()
