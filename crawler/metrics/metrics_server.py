"""MetricsServer: ``/metrics`` of one crawl process on its own port (prometheus-client's server).

:meth:`MetricsServer.start` binds ``address:port`` (port 0: any free port; :attr:`port` tells which)
and serves a registry holding the crawl's :class:`~crawler.metrics.crawl_collector.CrawlCollector`
and the process collector (``process_resident_memory_bytes``, ``process_cpu_seconds_total``, open
files). A port already in use is a :class:`MetricsPortError` naming it. :meth:`close` stops it.
Thread-safety: start and close from one thread; scrapes are served on the server's threads.
"""

from __future__ import annotations

import threading
from typing import Any

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.process_collector import ProcessCollector

from crawler.crawler_error import CrawlerError
from crawler.metrics.crawl_collector import CrawlCollector


class MetricsPortError(CrawlerError):
    """The metrics port cannot be bound; ``str()`` names it and the fix."""


class MetricsServer:
    """See the module docstring."""

    def __init__(
        self, collector: CrawlCollector, address: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.collector = collector
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(collector)
        ProcessCollector(registry=self.registry)
        self.address = address
        self.port = port
        self._server: Any = None
        self._thread: threading.Thread | None = None

    def start(self) -> int:
        """Serve ``/metrics``; returns the port."""
        try:
            server, thread = start_http_server(self.port, self.address, self.registry)
        except OSError as exc:
            raise MetricsPortError(
                f"metrics: cannot listen on {self.address}:{self.port} ({exc.strerror or exc}); "
                "choose another metrics.port (or --metrics-port), or 0 for any free port"
            ) from None
        self._server, self._thread = server, thread
        self.port = int(server.server_address[1])
        return self.port

    @property
    def url(self) -> str:
        """Where Prometheus scrapes."""
        return f"http://{self.address}:{self.port}/metrics"

    def close(self) -> None:
        """Stop serving. Idempotent."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None
