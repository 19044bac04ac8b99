"""CrawlCollector: a crawl's metrics, built at scrape time from what the crawl publishes.

The collector holds callables, not numbers: ``status()`` returns the latest status document (see
:mod:`crawler.reports.status`; refreshed about once a second by the controller's thread),
``status_counts()`` finished URIs per status code, ``processors()`` the order's processors. Extra
sources (a Redis worker's view of the other workers) are added with :meth:`add_source`. A source
that raises is skipped for that scrape (``crawler_metrics_source_errors_total`` counts it).

Metric names follow Prometheus conventions: ``_total`` counters, ``_bytes`` and ``_seconds``
units. Process RSS and CPU come from prometheus-client's process collector, registered beside.

Thread-safety: ``collect`` runs on the metrics server's threads; every source it calls must be
safe to call from any thread (the crawl's are).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

Source = Callable[[], Iterable[Any]]
"""A callable returning prometheus-client metric families."""

QUEUE_STATES = ("ready", "in_process", "snoozed", "inactive", "retired", "exhausted")
CRAWL_STATES = ("PREPARING", "RUNNING", "PAUSING", "PAUSED", "STOPPING", "FINISHED")


class CrawlCollector(Collector):
    """See the module docstring."""

    def __init__(
        self,
        status: Callable[[], Mapping[str, Any] | None],
        status_counts: Callable[[], Mapping[int, int]],
        processors: Callable[[], Iterable[tuple[str, str, Mapping[str, int]]]],
    ) -> None:
        self._status = status
        self._status_counts = status_counts
        self._processors = processors
        self._sources: list[Source] = []
        self._lock = threading.Lock()
        self._errors = 0

    def add_source(self, source: Source) -> None:
        """Add metric families that ``source()`` returns at each scrape."""
        with self._lock:
            self._sources.append(source)

    def collect(self) -> Iterator[Any]:
        """The metric families of this moment (prometheus-client calls it per scrape)."""
        doc = self._safe(self._status)
        if doc:
            yield from crawl_families(doc)
        codes = self._safe(self._status_counts)
        if codes is not None:
            by_status = CounterMetricFamily(
                "crawler_uris_by_status",
                "URIs finished, by final status code (crawl.log's second column)",
                labels=["status"],
            )
            for code, count in sorted(codes.items()):
                by_status.add_metric([str(code)], count)
            yield by_status
        procs = self._safe(lambda: list(self._processors()))
        if procs is not None:
            yield from processor_families(procs)
        with self._lock:
            sources = list(self._sources)
        for source in sources:
            families = self._safe(_listing(source))
            if families:
                yield from families
        errors = CounterMetricFamily(
            "crawler_metrics_source_errors", "metric sources that failed at a scrape"
        )
        errors.add_metric([], self._errors)
        yield errors

    def _safe(self, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except Exception:  # noqa: BLE001 - a failing source must not fail the scrape
            with self._lock:
                self._errors += 1
            return None


def _listing(source: Source) -> Callable[[], list[Any]]:
    return lambda: list(source())


def crawl_families(doc: Mapping[str, Any]) -> Iterator[Any]:
    """The families read from one status document (``crawler status --json``)."""
    state = str(doc.get("state", ""))
    states = GaugeMetricFamily("crawler_state", "1 for the crawl's current state", labels=["state"])
    for name in (*CRAWL_STATES, *(() if state in CRAWL_STATES else (state,))):
        states.add_metric([name], 1 if name == state else 0)
    yield states

    uris = CounterMetricFamily(
        "crawler_uris", "URIs finished, by outcome (crawl.log lines)", labels=["outcome"]
    )
    for outcome, key in (
        ("succeeded", "downloaded"),
        ("failed", "failed"),
        ("disregarded", "disregarded"),
    ):
        uris.add_metric([outcome], _num(doc.get(key)))
    yield uris

    fetched = CounterMetricFamily(
        "crawler_fetched_bytes", "bytes of successful fetches, by kind", labels=["kind"]
    )
    for kind, key in (("novel", "novel_bytes"), ("duplicate", "dup_bytes")):
        fetched.add_metric([kind], _num(doc.get(key)))
    fetched.add_metric(["not_modified"], _num(doc.get("notmod_bytes")))
    yield fetched
    yield _counter("crawler_bytes", "bytes of every successful fetch", doc.get("bytes"))

    threads = doc.get("threads") or {}
    yield _gauge("crawler_fetches_in_flight", "URIs in process (threads busy)", threads.get("busy"))
    yield _gauge("crawler_threads", "toe threads", threads.get("total"))

    frontier = doc.get("frontier") or {}
    queues = GaugeMetricFamily("crawler_queues", "frontier queues by state", labels=["state"])
    by_state = frontier.get("queues") or {}
    for name in (*QUEUE_STATES, *(k for k in by_state if k not in QUEUE_STATES)):
        queues.add_metric([name], _num(by_state.get(name)))
    yield queues
    yield _gauge("crawler_frontier_queued", "URIs queued in the frontier", doc.get("queued"))
    yield _gauge("crawler_frontier_discovered", "URIs the frontier has seen", doc.get("discovered"))
    yield _gauge(
        "crawler_paced_servers",
        "servers whose adaptive pace slows them now (counted up to the number listed)",
        doc.get("paced_servers_count", len(doc.get("paced_servers") or [])),
    )
    if "held_servers" in doc:
        yield _gauge(
            "crawler_held_servers",
            "servers the server cap holds: every connection taken, queues parked on them",
            doc.get("held_servers"),
        )
        yield _gauge(
            "crawler_parked_queues",
            "queues parked on a held server, waiting for a free connection",
            doc.get("parked_queues"),
        )
    retrying = doc.get("retrying") or {}
    yield _gauge("crawler_retries_waiting", "URIs waiting for a retry", retrying.get("uris"))
    yield _counter(
        "crawler_retries",
        "failed tries sent back for another (this process, since it started)",
        retrying.get("total"),
    )

    disk = doc.get("disk") or {}
    if disk.get("free_mb") is not None:
        yield _gauge(
            "crawler_disk_free_bytes",
            "free space on the fullest disk the run writes to",
            _num(disk.get("free_mb")) * 1024 * 1024,
        )
    low = 1 if disk.get("low") else 0
    yield _gauge("crawler_disk_low", "1 while the disk guard holds the crawl", low)
    yield _gauge("crawler_elapsed_seconds", "time the crawl has run", doc.get("elapsed_s"))
    yield _gauge(
        "crawler_status_updated_seconds",
        "Unix time of the status these metrics come from",
        doc.get("updated_s"),
    )


def processor_families(
    procs: Iterable[tuple[str, str, Mapping[str, int]]],
) -> Iterator[Any]:
    """``crawler_processor_uris_total{chain, processor}`` and the other counts each processor
    reports (``crawler_processor_count_total{processor, count}``); browser pages also as
    ``crawler_browser_pages_total``."""
    handled = CounterMetricFamily(
        "crawler_processor_uris", "URIs each processor handled", labels=["chain", "processor"]
    )
    other = CounterMetricFamily(
        "crawler_processor_count",
        "other counts processors report",
        labels=["chain", "processor", "count"],
    )
    pages = 0
    for chain, name, counts in procs:
        for key, value in counts.items():
            if key == "uris":
                handled.add_metric([chain, name], value)
            else:
                other.add_metric([chain, name, key], value)
            if key == "browser_pages":
                pages += value
    yield handled
    yield other
    yield _counter("crawler_browser_pages", "pages rendered in the browser", pages)


def _num(value: Any) -> float:
    try:
        return float(value) if value is not None else 0.0
    except (TypeError, ValueError):
        return 0.0


def _gauge(name: str, doc: str, value: Any) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, value=_num(value))


def _counter(name: str, doc: str, value: Any) -> CounterMetricFamily:
    return CounterMetricFamily(name, doc, value=_num(value))
