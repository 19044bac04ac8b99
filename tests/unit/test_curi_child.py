"""CrawlURI.create_child passes the child's first fields by position: every field of the child is
what building it by keyword gives, and no two children share a mutable field."""

from __future__ import annotations

from dataclasses import fields

import pytest

from crawler import CrawlURI, Hop
from crawler.curi import (
    MAX_HOPS_SHOWN,
    SERIES_ID_KEY,
    SERIES_RUN_KEY,
    VIA_SERIES_ID_KEY,
    VIA_SERIES_RUN_KEY,
)

pytestmark = pytest.mark.timeout(10)


def by_keywords(parent: CrawlURI, uri: str, hop: str, context: str) -> CrawlURI:
    """The child as the documented inheritance makes it, every field given by name."""
    path = parent.hop_path + hop
    dropped = parent.hops_dropped + max(0, len(path) - MAX_HOPS_SHOWN)
    child = CrawlURI(
        uri=uri,
        via=parent.uri,
        hop_path=path[-MAX_HOPS_SHOWN:],
        hops_dropped=dropped,
        source_tag=parent.source_tag,
        via_context=context,
        seed_max_hops=parent.seed_max_hops,
    )
    if parent.data.get(SERIES_RUN_KEY):
        child.data[VIA_SERIES_RUN_KEY] = parent.data[SERIES_RUN_KEY]
        if parent.data.get(SERIES_ID_KEY):
            child.data[VIA_SERIES_ID_KEY] = parent.data[SERIES_ID_KEY]
    return child


def parents() -> list[CrawlURI]:
    seed = CrawlURI("http://a.example/", is_seed=True, source_tag="tag", seed_max_hops=3)
    in_series = CrawlURI("http://a.example/cal/2026/01", via="http://a.example/", hop_path="LL")
    in_series.data.update({SERIES_RUN_KEY: 4, SERIES_ID_KEY: -77, "other": 1})
    run_only = CrawlURI("http://a.example/p2", hop_path="L" * MAX_HOPS_SHOWN, hops_dropped=9)
    run_only.data[SERIES_RUN_KEY] = 2
    worked = CrawlURI("http://a.example/done", hop_path="LE", status=200, force_fetch=True)
    worked.annotations.append("note")
    worked.directive = 1
    return [seed, in_series, run_only, worked]


def test_a_child_has_every_field_building_it_by_keyword_gives() -> None:
    for parent in parents():
        for hop in (Hop.LINK, Hop.EMBED, Hop.REFER):
            child = parent.create_child("http://b.example/x", hop, "a/@href")
            want = by_keywords(parent, "http://b.example/x", hop, "a/@href")
            for f in fields(CrawlURI):
                assert getattr(child, f.name) == getattr(want, f.name), (parent, hop, f.name)
                assert type(getattr(child, f.name)) is type(getattr(want, f.name)), f.name


def test_children_share_no_mutable_field() -> None:
    parent = parents()[1]
    one = parent.create_child("http://b.example/1", Hop.LINK)
    two = parent.create_child("http://b.example/2", Hop.LINK)
    one.data["x"] = 1
    one.annotations.append("a")
    one.outlinks.append(parent.outlinks[0] if parent.outlinks else None)  # type: ignore[arg-type]
    assert "x" not in two.data and not two.annotations and not two.outlinks
    assert "x" not in parent.data and one.data is not parent.data
