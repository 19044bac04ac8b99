"""WorkQueueFrontier.seen_recently over LevelDB: which of a page's links the frontier surely saw."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler.curi import CrawlURI
from crawler.frontier import LevelDBQueueStore, WorkQueueFrontier
from crawler.frontier.assignment import HostnameQueueAssignmentPolicy
from crawler.order.schema import FrontierConfig
from crawler.uniq import LevelDBUriUniqFilter, LevelDBUriUniqFilterParams


def frontier(state: Path, cache_size: int = 1000) -> WorkQueueFrontier:
    uniq = LevelDBUriUniqFilter(LevelDBUriUniqFilterParams(cache_size=cache_size))
    f = WorkQueueFrontier(
        LevelDBQueueStore(), HostnameQueueAssignmentPolicy(), uniq, FrontierConfig()
    )
    f.open(state)
    return f


def page_links(f: WorkQueueFrontier, uris: list[str]) -> list[bool]:
    parent = CrawlURI("http://a.example/", hop_path="")
    return f.schedule_many([parent.create_child(u, "L") for u in uris])


@pytest.mark.timeout(20)
def test_scheduled_links_are_seen_the_next_time_and_new_ones_are_not(tmp_path: Path) -> None:
    f = frontier(tmp_path / "state")
    try:
        nav = [f"http://a.example/nav{i}" for i in range(5)]
        assert page_links(f, nav) == [True] * 5
        asked = [*nav, "http://a.example/new", "HTTP://WWW.A.example/nav1", "nohost", "http:///x"]
        expected = [True] * 5 + [False, True, False, False]  # www. and case: one canonical key
        for _ in range(3):  # the same answers once the seen links are remembered as they are
            assert f.seen_recently(asked) == expected
        # a link that was seen when asked the first time
        page_links(f, ["http://a.example/later"])
        assert f.seen_recently(["http://a.example/later", "http://a.example/new"]) == [True, False]
    finally:
        f.close()


@pytest.mark.timeout(20)
def test_links_seen_long_ago_are_known_from_the_filters_database(tmp_path: Path) -> None:
    # A cache of 2 keys: what a page links to fell out of it long ago, as in a crawl of many
    # more URIs than the cache holds; and after a restart the cache is empty.
    f = frontier(tmp_path / "state", cache_size=2)
    try:
        old = [f"http://a.example/old{i}" for i in range(50)]
        assert page_links(f, old) == [True] * 50
        assert f.seen_recently([old[0], old[1], "http://a.example/new"]) == [True, True, False]
    finally:
        f.close()
    f = frontier(tmp_path / "state", cache_size=0)
    try:
        assert f.seen_recently([old[0], old[49], "http://a.example/new"]) == [True, True, False]
        assert page_links(f, [old[0], "http://a.example/new"]) == [False, True]
    finally:
        f.close()
