"""LevelDBUriUniqFilter on a real LevelDB: what a resumed crawl relies on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from crawler.uniq import LevelDBUriUniqFilter, LevelDBUriUniqFilterParams, UniqStateError

pytestmark = pytest.mark.integration


def test_seen_set_and_count_survive_a_reopen(tmp_path: Path) -> None:
    first = LevelDBUriUniqFilter(LevelDBUriUniqFilterParams(cache_size=10))
    first.open(tmp_path)
    assert first.add_many([f"http://a.test/{i}" for i in range(100)]) == [True] * 100
    first.close()
    first.close()
    again = LevelDBUriUniqFilter(LevelDBUriUniqFilterParams(cache_size=10))
    again.open(tmp_path)
    assert again.count() == 100
    assert again.add("http://a.test/42") is False  # from LevelDB, not the (empty) cache
    assert again.add("http://a.test/100") is True
    assert again.count() == 101
    again.close()


class CountingDB:
    """The filter's plyvel handle, counting the gets made through it."""

    def __init__(self, db: Any) -> None:
        self.db = db
        self.gets = 0

    def get(self, key: bytes) -> bytes | None:
        self.gets += 1
        value: bytes | None = self.db.get(key)
        return value

    def __getattr__(self, name: str) -> Any:
        return getattr(self.db, name)


def test_recorded_reads_leveldb_only_once_the_cache_may_miss_a_key(tmp_path: Path) -> None:
    uniq = LevelDBUriUniqFilter(LevelDBUriUniqFilterParams(cache_size=50))
    uniq.open(tmp_path)
    counting = CountingDB(uniq._db)
    uniq._db = counting
    first = [f"http://a.test/{i}" for i in range(40)]
    uniq.add_many(first)
    gets = counting.gets
    # A young crawl: the cache holds every key recorded since the filter was opened empty.
    assert uniq.recorded([first[0], "http://a.test/new"]) == [True, False]
    assert counting.gets == gets
    uniq.add_many([f"http://b.test/{i}" for i in range(60)])  # a turn-over: all still held
    gets = counting.gets
    assert uniq.recorded([first[0], "http://a.test/new"]) == [True, False]
    assert counting.gets == gets
    uniq.add_many([f"http://c.test/{i}" for i in range(60)])  # the first keys drop out
    gets = counting.gets
    assert uniq.recorded([first[0], "http://a.test/new"]) == [True, False]
    assert counting.gets == gets + 2
    uniq._db = counting.db
    uniq.close()
    # Reopened with keys in LevelDB: the (empty) cache cannot answer for them.
    again = LevelDBUriUniqFilter(LevelDBUriUniqFilterParams(cache_size=50))
    again.open(tmp_path)
    assert again.recorded([first[1], "http://a.test/new"]) == [True, False]
    again.close()


def test_a_second_opener_gets_a_clear_error(tmp_path: Path) -> None:
    first = LevelDBUriUniqFilter()
    first.open(tmp_path)
    try:
        with pytest.raises(UniqStateError, match="another crawl"):
            LevelDBUriUniqFilter().open(tmp_path)
    finally:
        first.close()


def test_changing_the_fingerprint_function_is_refused(tmp_path: Path) -> None:
    mmh3_filter = LevelDBUriUniqFilter()
    mmh3_filter.open(tmp_path)
    mmh3_filter.add("http://a.test/")
    mmh3_filter.close()
    md5_filter = LevelDBUriUniqFilter(LevelDBUriUniqFilterParams(fingerprint="md5"))
    with pytest.raises(UniqStateError, match=r"'mmh3'.*'md5'"):
        md5_filter.open(tmp_path)
    md5_filter.open(tmp_path / "other")
    assert md5_filter.add("http://a.test/") is True
    md5_filter.close()


def test_using_a_closed_filter_is_an_error(tmp_path: Path) -> None:
    f = LevelDBUriUniqFilter()
    with pytest.raises(RuntimeError, match="not open"):
        f.add("http://a.test/")


def test_memory_bytes_counts_what_leveldb_holds(tmp_path: Path) -> None:
    f = LevelDBUriUniqFilter()
    f.open(tmp_path)
    empty = f.memory_bytes()
    f.add_many([f"http://a.test/{i}" for i in range(20_000)])
    assert f.memory_bytes() > empty + 20_000 * 11  # the new keys sit in the memtable
    f.close()
    assert f.memory_bytes() == 0


def test_a_reopened_filter_answers_a_mixed_batch_in_the_callers_order(tmp_path: Path) -> None:
    """Look-ups go in key order, but the answers and the announced URIs keep the batch's order."""
    first = LevelDBUriUniqFilter(LevelDBUriUniqFilterParams(cache_size=1))
    first.open(tmp_path)
    old = [f"http://h{h}.test/old/{i}" for h in range(20) for i in range(10)]
    first.add_many(old)
    first.close()
    again = LevelDBUriUniqFilter(LevelDBUriUniqFilterParams(cache_size=1))
    again.open(tmp_path)
    batch = [
        "http://h7.test/new/z",
        "http://h3.test/old/4",
        "http://h19.test/new/a",
        "http://h7.test/new/z",  # the same new URI twice: new once
        "http://h0.test/old/9",
        "http://h12.test/new/m",
        "http://h19.test/old/0",
    ]
    announced: list[list[str]] = []
    assert again.add_many_announced(batch, announced.append) == [
        True, False, True, False, False, True, False,
    ]  # fmt: skip
    assert announced == [["http://h7.test/new/z", "http://h19.test/new/a", "http://h12.test/new/m"]]
    assert again.count() == 203
    assert again.add_many(batch) == [False] * len(batch)
    again.close()
