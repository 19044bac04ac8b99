"""The TallyStore contract, run over every backend: in memory (LocalTallyStore, reopened through
its saved state) and in Redis (RedisTallyStore on a real redis-server and on a Redis Cluster,
reopened as a new client on the same crawl prefix, as a restarted worker would)."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterator

import pytest
from support.redis_servers import RedisClusterServers, RedisServer

from crawler.tally import LocalTallyStore, TallyStore
from crawler.tally.redis_tally_store import RedisTallyStore

pytestmark = pytest.mark.timeout(60)

_prefixes = itertools.count()


class Backend:
    """Opens stores of one kind: ``open()`` a first one, ``reopen(store)`` what a restarted
    process would see, ``other()`` a second process's store on the same tallies."""

    def __init__(
        self,
        open_: Callable[[], TallyStore],
        reopen: Callable[[TallyStore], TallyStore],
        other: Callable[[TallyStore], TallyStore | None],
    ) -> None:
        self.open, self.reopen, self.other = open_, reopen, other


def _local() -> Backend:
    def reopen(store: TallyStore) -> TallyStore:
        assert isinstance(store, LocalTallyStore)
        fresh = LocalTallyStore()
        fresh.restore(json.loads(json.dumps(store.state())))  # as saved in state/
        return fresh

    return Backend(LocalTallyStore, reopen, lambda store: None)


def _redis(url: str, made: list[TallyStore]) -> Backend:
    prefix = f"t{next(_prefixes)}:"

    def open_() -> TallyStore:
        made.append(RedisTallyStore.connect(url, prefix))
        return made[-1]

    return Backend(open_, lambda store: open_(), lambda store: open_())


@pytest.fixture(params=["local", "redis", "redis_cluster"])
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    made: list[TallyStore] = []
    if request.param == "local":
        yield _local()
    elif request.param == "redis":
        server: RedisServer = request.getfixturevalue("redis_server")
        yield _redis(server.url, made)
    else:
        cluster: RedisClusterServers = request.getfixturevalue("redis_cluster")
        yield _redis(cluster.url, made)
    for store in made:
        store.close()


def test_counts_add_up_per_key_and_survive_a_reopen(backend: Backend) -> None:
    store = backend.open()
    assert store.read(["h:a.test", "d:a.test"]) == [(0, 0), (0, 0)]
    store.add(["h:a.test", "d:a.test"], 1, 1000)
    store.add(["h:a.test"], 1, 24)
    store.add(["h:b.test"], 2)
    assert store.read(["h:a.test", "d:a.test", "h:b.test", "h:c.test"]) == [
        (2, 1024),
        (1, 1000),
        (2, 0),
        (0, 0),
    ]
    again = backend.reopen(store)
    assert again.read(["h:a.test", "h:b.test"]) == [(2, 1024), (2, 0)]
    again.add(["h:a.test"], 1, 1)
    assert again.read(["h:a.test"]) == [(3, 1025)]


def test_a_capped_set_admits_members_until_full_and_members_again(backend: Backend) -> None:
    store = backend.open()
    assert [store.join("s:1", m, 3) for m in (10, 11, 10, 12, 13, -14)] == [
        True,
        True,
        True,
        True,
        False,
        False,
    ]
    assert store.join("s:1", 11, 3)  # a member is let through again when the set is full
    assert store.join("s:2", 13, 3)  # another key has a set of its own
    again = backend.reopen(store)
    assert not again.join("s:1", 99, 3)
    assert again.join("s:1", 12, 3)
    assert again.join("s:1", 99, 4)  # the cap is the caller's: a larger one admits more


def test_texts_are_kept_and_replaced(backend: Backend) -> None:
    store = backend.open()
    assert store.text("login:a.test") is None
    store.put_text("login:a.test", '{"outcome": "failed"}')
    store.put_text("login:a.test", '{"outcome": "ok", "é": 1}')
    assert backend.reopen(store).text("login:a.test") == '{"outcome": "ok", "é": 1}'


def test_two_processes_racing_for_the_last_places_never_exceed_the_cap(backend: Backend) -> None:
    first = backend.open()
    second = backend.other(first) or first  # in memory: one store shared by threads
    admitted: list[int] = []
    lock = threading.Lock()

    def run(store: TallyStore, start: int) -> None:
        for member in range(start, start + 40):
            if store.join("race", member, 25):
                with lock:
                    admitted.append(member)
            store.add(["n"], 1, 2)

    threads = [
        threading.Thread(target=run, args=(store, start))
        for store, start in ((first, 0), (second, 1000), (first, 2000), (second, 3000))
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(admitted) == 25
    assert first.read(["n"]) == [(160, 320)]
    assert second.read(["n"]) == [(160, 320)]


def test_a_bounded_local_store_forgets_the_least_recently_joined_set() -> None:
    store = LocalTallyStore(max_sets=2)
    assert store.join("a", 1, 1) and store.join("b", 1, 1)
    assert store.join("a", 1, 1)  # a is now the most recent
    assert store.join("c", 1, 1)  # b is forgotten
    assert [key for key, _ in store.sets()] == ["a", "c"]
    assert store.join("b", 2, 1)  # b starts empty again
    with pytest.raises(ValueError, match="unusable tally state"):
        store.restore({"counts": {"x": ["many", 0]}})
    assert [key for key, _ in store.sets()] == ["c", "b"]
