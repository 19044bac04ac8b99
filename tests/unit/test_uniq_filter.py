"""Uniq filters: each canonical URI is new exactly once, whichever filter the order selects."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.uniq import (
    BloomUriUniqFilter,
    BloomUriUniqFilterParams,
    LevelDBUriUniqFilter,
    LevelDBUriUniqFilterParams,
    MemoryUriUniqFilter,
    UriUniqFilter,
    fingerprint,
)


@pytest.fixture(params=["memory", "leveldb", "leveldb-nocache", "bloom", "bloom-md5"])
def uniq(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[UriUniqFilter[Any]]:
    kind = request.param
    f: UriUniqFilter[Any]
    if kind == "memory":
        f = MemoryUriUniqFilter()
    elif kind.startswith("leveldb"):
        cache = 0 if kind.endswith("nocache") else 1000
        f = LevelDBUriUniqFilter(LevelDBUriUniqFilterParams(cache_size=cache))
    else:
        function = "md5" if kind.endswith("md5") else "mmh3"
        f = BloomUriUniqFilter(
            BloomUriUniqFilterParams(
                expected_items=100_000, false_positive_rate=1e-9, fingerprint=function
            )
        )
    f.open(tmp_path)
    yield f
    f.close()


def test_add_force_add_many_and_count(uniq: UriUniqFilter[Any]) -> None:
    assert uniq.add("http://a.test/") is True
    assert uniq.add("http://a.test/") is False
    uniq.add_force("http://a.test/")
    uniq.add_force("http://b.test/")
    assert uniq.add_many(["http://b.test/", "http://c.test/", "http://c.test/"]) == [
        False,
        True,
        False,
    ]
    assert uniq.add_many([]) == []
    assert uniq.count() == 3


def test_recorded_answers_exactly_and_records_nothing(uniq: UriUniqFilter[Any]) -> None:
    old = [f"http://a.test/{i}" for i in range(300)]  # more than a RecentKeys of 0 holds
    uniq.add_many(old)
    new = ["http://a.test/new", "http://b.test/"]
    assert uniq.recorded([*old, *new, old[0]]) == [True] * 300 + [False, False, True]
    assert uniq.recorded([]) == []
    assert uniq.add_many(new) == [True, True]  # asking recorded nothing
    assert uniq.recorded(new) == [True, True]
    assert uniq.count() == 302


def test_the_default_recorded_answers_from_the_fast_path_alone() -> None:
    class CheapOnly(MemoryUriUniqFilter):
        """A filter that knows one URI without I/O, and does not override recorded."""

        recorded = UriUniqFilter.recorded

        def maybe_new(self, canonicals: list[str]) -> list[bool]:
            return [c != "http://a.test/cheap" for c in canonicals]

    f = CheapOnly()
    f.add_many(["http://a.test/cheap", "http://a.test/other"])
    # a shared filter's exact answer is a round trip: the default does not make it
    assert f.recorded(["http://a.test/cheap", "http://a.test/other"]) == [True, False]


def test_concurrent_adds_report_each_uri_new_once(uniq: UriUniqFilter[Any]) -> None:
    wins: list[int] = []
    lock = threading.Lock()

    def worker(n: int) -> None:
        if n % 2:
            mine = sum(uniq.add(f"http://a.test/{i}") for i in range(2000))
        else:
            mine = sum(uniq.add_many([f"http://a.test/{i}" for i in range(2000)]))
        with lock:
            wins.append(mine)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sum(wins) == 2000 == uniq.count()


def test_odd_uris_are_recorded_not_crashed_on(uniq: UriUniqFilter[Any]) -> None:
    odd = "http://a.test/\udc80\ud800"
    assert uniq.add(odd) is True
    assert uniq.add(odd) is False
    assert uniq.add("http://\u00e9t\u00e9.test/") is True


def test_fingerprint_groups_a_host_and_separates_uris() -> None:
    a1, a2 = fingerprint("http://a.test/1"), fingerprint("http://a.test/2")
    b1 = fingerprint("http://b.test/1")
    assert len(a1) == 11
    assert a1[:3] == a2[:3] != b1[:3]
    assert a1 != a2
    assert fingerprint("dns:a.test")[:3] == fingerprint("dns:b.test")[:3]
    m1 = fingerprint("http://a.test/1", "md5")
    assert len(m1) == 11 and m1 != a1
    assert m1[:3] == fingerprint("http://a.test/2", "md5")[:3]


def test_add_many_announced_names_exactly_the_new_ones_before_recording(
    uniq: UriUniqFilter[Any],
) -> None:
    uniq.add("http://a.test/old")
    calls: list[list[str]] = []
    batch = ["http://a.test/old", "http://a.test/x", "http://a.test/x", "http://a.test/y"]
    assert uniq.add_many_announced(batch, calls.append) == [False, True, False, True]
    assert [sorted(c) for c in calls] == [["http://a.test/x", "http://a.test/y"]]
    assert uniq.add_many_announced(batch, calls.append) == [False] * 4
    assert len(calls) == 1  # nothing new: not called


def test_a_failing_announcement_records_nothing(uniq: UriUniqFilter[Any]) -> None:
    def refuse(new: list[str]) -> None:
        raise OSError("write-ahead failed")

    with pytest.raises(OSError):
        uniq.add_many_announced(["http://a.test/1", "http://a.test/2"], refuse)
    assert uniq.count() == 0
    assert uniq.add_many(["http://a.test/1", "http://a.test/2"]) == [True, True]


def test_the_default_announcement_covers_the_new_ones(tmp_path: Path) -> None:
    class PlainFilter(MemoryUriUniqFilter):
        """A filter that does not override add_many_announced."""

        add_many_announced = UriUniqFilter.add_many_announced

    f = PlainFilter()
    f.add("http://a.test/old")
    calls: list[list[str]] = []
    assert f.add_many_announced(["http://a.test/old", "http://a.test/n"], calls.append) == [
        False,
        True,
    ]
    # a superset: without a cheap "seen" answer the default announces every one
    assert calls == [["http://a.test/old", "http://a.test/n"]]


def test_recent_keys_remember_a_batch_and_turn_over_after_it() -> None:
    from crawler.uniq.recent_keys import RecentKeys

    recent: RecentKeys[int] = RecentKeys(4)
    recent.remember_many(range(3))
    assert recent.unknown([0, 1, 2, 3]) == [False, False, False, True]
    recent.remember_many(range(3, 9))  # young set past capacity: it becomes the old one, whole
    assert recent.unknown(list(range(10))) == [False] * 9 + [True]
    assert not recent.dropped  # every key remembered is still held
    recent.remember_many(range(9, 13))  # and again: the first batches are forgotten
    assert recent.unknown([0, 8, 9, 12]) == [True, True, False, False]
    assert recent.dropped
    off: RecentKeys[int] = RecentKeys(0)
    off.remember_many([1, 2])
    assert len(off) == 0 and 1 not in off


def test_fingerprint64_is_the_whole_uri_part_of_the_fingerprint() -> None:
    # The shared (Redis) filter's members: recorded crawls stay readable only if it never moves.
    from crawler.uniq.uniq_filter import fingerprint, fingerprint64

    for function in ("mmh3", "md5"):
        for uri in (
            "http://example.com/",
            "https://a.example:8443/p?q=1",
            "dns:x",
            "http://\udcff/",
        ):
            want = int.from_bytes(fingerprint(uri, function)[3:], "big")
            assert fingerprint64(uri, function) == want
