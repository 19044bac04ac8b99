"""Prometheus metrics of a running crawl (prometheus-client).

- :class:`~crawler.metrics.crawl_collector.CrawlCollector` turns a crawl's published status (the
  document behind ``status.json``, refreshed about once a second), its per-status counts and its
  processors' counts into metric families at scrape time: nothing is counted on the hot path.
- :class:`~crawler.metrics.metrics_server.MetricsServer` serves ``/metrics`` on the port the order
  names (``metrics.port``, or ``--metrics-port``).
- :mod:`crawler.metrics.run_metrics` reads the runs of a workspace for the console's ``/metrics``.

Every label is bounded: status codes, queue states, chains and processor names of the order, job
names, worker ids. No label is a host.
"""
