"""The frontier-scale benchmark's probe: the frontier's work per page and per embed, measured
on a real LevelDB frontier, counts what each part of a page's outlinks did to the crawl."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

from crawler.curi import CrawlURI

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import frontier_scale  # noqa: E402

pytestmark = pytest.mark.timeout(60)

QUEUES = 50


def probe_args(pages: int, embeds: int) -> argparse.Namespace:
    return argparse.Namespace(
        queues=QUEUES,
        probe_pages=pages,
        probe_embeds=embeds,
        probe_seen=7,
        probe_same_host=3,
        probe_new_host=2,
    )


def test_probe_schedules_each_part_as_a_crawl_would_and_reports_cpu(tmp_path: Path) -> None:
    f = frontier_scale.build_frontier(tmp_path)
    try:
        seen = 500
        assert all(
            f.schedule_many([CrawlURI(frontier_scale.uri_of(j, QUEUES)) for j in range(seen)])
        )
        queues_before = f.sched.total_queues()
        ev = frontier_scale.probe(f, probe_args(pages=20, embeds=10), seen, mark=seen)
        assert (ev["pages"], ev["embeds"]) == (20, 10)
        # URIs seen before are refused; new ones on the page's host and on new hosts are queued
        assert ev["queued_by_part"] == {"seen": 0, "same_host": 20 * 3, "new_host": 20 * 2}
        assert f.sched.total_queues() == queues_before + 20 * 2
        assert f.snapshot().queued == seen - 30 + 20 * 5
        for key in (
            "us_page",
            "us_page_next_fin",
            "us_link_seen",
            "us_link_same_host",
            "us_link_new_host",
            "us_embed",
        ):
            assert ev[key] > 0, key
        parts = ("next_fin", "seen", "same_host", "new_host")
        assert ev["us_page"] == pytest.approx(sum(ev[f"us_page_{p}"] for p in parts))
        assert ev["us_link_seen"] == pytest.approx(ev["us_page_seen"] / 7)
        assert "|" in frontier_scale.probe_row(ev)
    finally:
        f.close()


def test_probe_stops_when_the_frontier_runs_dry(tmp_path: Path) -> None:
    f = frontier_scale.build_frontier(tmp_path)
    try:
        f.schedule_many([CrawlURI(frontier_scale.uri_of(j, QUEUES)) for j in range(5)])
        ev = frontier_scale.probe(f, probe_args(pages=3, embeds=0), 5, mark=1)
        assert ev["pages"] == 3
        # 2 left from before + 3 x (3 + 2) new from the pages: the embeds take all that is left
        ev = frontier_scale.probe(f, probe_args(pages=0, embeds=100), 5, mark=2)
        assert ev["embeds"] == 2 + 3 * 5
        assert f.snapshot().queued == 0
    finally:
        f.close()
