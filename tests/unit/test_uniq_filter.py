"""Uniq filters: each canonical URI is new exactly once."""

from __future__ import annotations

import threading
from pathlib import Path

from crawler.uniq import MemoryUriUniqFilter, fingerprint


def test_memory_filter_add_force_and_count(tmp_path: Path) -> None:
    f = MemoryUriUniqFilter()
    f.open(tmp_path)
    assert f.add("http://a.test/") is True
    assert f.add("http://a.test/") is False
    f.add_force("http://a.test/")
    f.add_force("http://b.test/")
    assert f.add_many(["http://b.test/", "http://c.test/", "http://c.test/"]) == [
        False,
        True,
        False,
    ]
    assert f.count() == 3


def test_fingerprint_groups_a_host_and_separates_uris() -> None:
    a1, a2 = fingerprint("http://a.test/1"), fingerprint("http://a.test/2")
    b1 = fingerprint("http://b.test/1")
    assert len(a1) == 11
    assert a1[:3] == a2[:3] != b1[:3]
    assert a1 != a2
    assert fingerprint("dns:a.test")[:3] == fingerprint("dns:b.test")[:3]


def test_concurrent_adds_report_each_uri_new_once() -> None:
    f = MemoryUriUniqFilter()
    wins: list[int] = []
    lock = threading.Lock()

    def worker() -> None:
        mine = sum(f.add(f"http://a.test/{i}") for i in range(2000))
        with lock:
            wins.append(mine)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sum(wins) == 2000 == f.count()
