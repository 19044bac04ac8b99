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
def test_without_the_filters_cache_nothing_is_known_cheaply(tmp_path: Path) -> None:
    f = frontier(tmp_path / "state", cache_size=0)
    try:
        page_links(f, ["http://a.example/x"])
        assert f.seen_recently(["http://a.example/x", "http://a.example/x"]) == [False, False]
        assert page_links(f, ["http://a.example/x"]) == [False]  # the filter still knows it
    finally:
        f.close()
