"""One crawl of the bundled sample site with the example job, politeness off: what the e2e,
archive and dedup tests start from."""

from __future__ import annotations

from pathlib import Path

from crawler.control.controller import CrawlController
from crawler.demo import SampleSite
from crawler.order.loader import load_order

EXAMPLE = Path(__file__).resolve().parents[2] / "jobs" / "example" / "order.yaml"


def crawl_sample_site(site: SampleSite, run_dir: Path, *extra: str) -> CrawlController:
    """Crawl ``site`` into ``run_dir`` (10 threads; ``extra`` --set overrides come last, so they
    win) and assert the crawl finished; the controller, for its stats."""
    order = load_order(
        EXAMPLE,
        [
            f"seeds.urls={site.base_urls!r}",
            "seeds.file=null",
            "frontier.politeness.delay_factor=0",
            "frontier.politeness.min_delay_ms=0",
            "frontier.politeness.max_delay_ms=0",
            "toe_threads=10",
            "logging.console=false",
            *extra,
        ],
    )
    controller = CrawlController(order, run_dir, install_signals=False)
    assert controller.run() == 0
    return controller
