"""The politeness delay counts from the end of a host's fetch, not from the end of the URI's
processing: a server that records when it answered sees the configured delay between one answer
and the next request, not the delay plus the time the crawler spent extracting and writing."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest
from support.politeness_site import TimingSite, order_sets

from crawler.control.controller import CrawlController
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]


@pytest.mark.parametrize(
    ("delay_s", "processing_s"),
    [(0.8, 0.5), (0.4, 0.8)],
    ids=["processing-within-the-delay", "processing-outlasts-the-delay"],
)
def test_gap_between_a_hosts_fetches_is_the_delay_not_delay_plus_processing(
    tmp_path: Path, delay_s: float, processing_s: float
) -> None:
    with TimingSite(pages=4) as site:
        order = load_order(EXAMPLE, order_sets(site, delay_s, processing_s))
        controller = CrawlController(order, tmp_path / "run", install_signals=False)
        assert controller.run() == 0
    assert site.paths() == ["/", "/p1", "/p2", "/p3", "/p4"]
    for gap in site.gaps(after_write=False):
        assert gap >= delay_s  # never shorter than configured
        assert gap >= processing_s  # the next page is found by this one's extraction
    # The processing ran during the delay, not before it: counted from the end of the
    # processing, every gap would be at least delay + processing. (The median: one gap
    # lengthened by a stall of this busy process is no failure.)
    assert statistics.median(site.gaps(after_write=True)) < delay_s + processing_s
