"""Running one crawl.

:mod:`crawler.control.controller` (CrawlController) is the crawl's state machine; its
collaborators wire the crawl from its order (:mod:`crawler.control.crawl_builder`), show it
while it runs (:mod:`crawler.control.crawl_reporter`: progress-statistics.log, status.json,
reports), run its worker threads (:mod:`crawler.control.toepool`), take in what the operator
drops into the action directory and the block rules (:mod:`crawler.control.steering`), the
stop signals (:mod:`crawler.control.stop_signals`) and pin the process's CPUs
(:mod:`crawler.control.affinity`). This package imports nothing itself, so the operator's
commands that only need :mod:`crawler.control.steering` do not load the crawl.
"""
