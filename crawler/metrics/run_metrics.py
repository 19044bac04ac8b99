"""The console's ``/metrics``: the latest run of every job of its workspace, from ``status.json``.

:class:`WorkspaceCollector` reads, at each scrape, the status document of each job's newest run
(:func:`crawler.reports.status.read_status`, which also tells whether its process is alive) and
yields per-job families labelled ``job`` (one per job: bounded): ``crawler_job_state``,
``crawler_job_alive``, ``crawler_job_uris_total{outcome}``, ``crawler_job_bytes_total``,
``crawler_job_queued``, ``crawler_job_status_age_seconds`` (seconds since the crawl last wrote
its status: a live crawl refreshes it about every second, so a growing age means a stalled one).
Thread-safety: reads files only; any thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from crawler.metrics.crawl_collector import CRAWL_STATES
from crawler.reports.status import read_status


class WorkspaceCollector(Collector):
    """See the module docstring. ``latest_runs()`` returns ``(job, run directory)`` pairs."""

    def __init__(self, latest_runs: Callable[[], Iterable[tuple[str, Path]]]) -> None:
        self._latest_runs = latest_runs

    def collect(self) -> Iterator[Any]:
        now = time.time()
        state = GaugeMetricFamily(
            "crawler_job_state", "1 for the state of each job's latest run", labels=["job", "state"]
        )
        alive = GaugeMetricFamily(
            "crawler_job_alive", "1 while the latest run's process runs", labels=["job"]
        )
        uris = CounterMetricFamily(
            "crawler_job_uris", "URIs finished by the latest run", labels=["job", "outcome"]
        )
        size = CounterMetricFamily(
            "crawler_job_bytes", "bytes fetched by the latest run", labels=["job"]
        )
        queued = GaugeMetricFamily("crawler_job_queued", "URIs queued", labels=["job"])
        age = GaugeMetricFamily(
            "crawler_job_status_age_seconds",
            "seconds since the latest run last published its status",
            labels=["job"],
        )
        for job, run_dir in self._latest_runs():
            doc = read_status(run_dir)
            if doc is None:
                continue
            current = "DIED" if doc.get("died") else str(doc.get("state", "UNKNOWN"))
            for name in (
                *CRAWL_STATES,
                "DIED",
                *(() if current in (*CRAWL_STATES, "DIED") else (current,)),
            ):
                state.add_metric([job, name], 1 if name == current else 0)
            alive.add_metric([job], 1 if doc.get("alive") else 0)
            for outcome, key in (
                ("succeeded", "downloaded"),
                ("failed", "failed"),
                ("disregarded", "disregarded"),
            ):
                uris.add_metric([job, outcome], float(doc.get(key) or 0))
            size.add_metric([job], float(doc.get("bytes") or 0))
            queued.add_metric([job], float(doc.get("queued") or 0))
            age.add_metric([job], max(0.0, now - float(doc.get("updated_s") or 0)))
        yield from (state, alive, uris, size, queued, age)
