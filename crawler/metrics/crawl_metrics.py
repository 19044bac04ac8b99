"""start_crawl_metrics: the metrics server of one crawl process, as its order's ``metrics`` says.

``metrics.port`` null (the default) serves nothing; 0 takes any free port (the URL is logged as
``metrics_serving``). The collector reads the crawl's last published status, its per-status
counts and its processors' :meth:`~crawler.processor.Processor.counts` at each scrape.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from crawler.metrics.crawl_collector import CrawlCollector
from crawler.metrics.metrics_server import MetricsPortError, MetricsServer

if TYPE_CHECKING:
    from crawler.chain import ProcessorChains
    from crawler.order.schema import MetricsConfig
    from crawler.stats import CrawlStats


def start_crawl_metrics(
    cfg: MetricsConfig,
    status: Callable[[], Mapping[str, Any] | None],
    stats: CrawlStats,
    chains: ProcessorChains,
    logger: Any,
) -> MetricsServer | None:
    """A started :class:`MetricsServer` for this crawl, or None when ``cfg.port`` is null.
    A port that is taken is an :class:`~crawler.order.errors.OrderError` at ``metrics.port``."""
    if cfg.port is None:
        return None

    def processors() -> Iterator[tuple[str, str, Mapping[str, int]]]:
        for chain in chains.chains:
            for proc in chain:
                yield chain.name, proc.name, proc.counts()

    collector = CrawlCollector(status, stats.status_counts, processors)
    server = MetricsServer(collector, cfg.address, cfg.port)
    try:
        server.start()
    except MetricsPortError as exc:
        from crawler.order.errors import OrderError, OrderIssue

        raise OrderError([OrderIssue("metrics.port", str(exc), cfg.port)]) from None
    logger.info("metrics_serving", url=server.url)
    return server
