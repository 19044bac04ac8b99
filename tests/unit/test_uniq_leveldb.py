"""LevelDBUriUniqFilter on a real LevelDB: what a resumed crawl relies on."""

from __future__ import annotations

from pathlib import Path

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
