"""Prometheus metrics of a running crawl: ``metrics.port`` serves ``/metrics`` while the crawl runs;
a real Prometheus server (Debian's ``prometheus``) scrapes it and answers a query. Without that
package the text format is still parsed and checked."""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from support.route_server import RouteServer

from crawler.control.controller import CrawlController
from crawler.metrics.crawl_collector import CrawlCollector
from crawler.metrics.metrics_server import MetricsPortError, MetricsServer
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
PAGES = 12

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]


def site(host: str, path: str) -> tuple[int, dict[str, str], bytes]:
    if path == "/":
        links = "".join(f'<a href="/p{n}">{n}</a>' for n in range(PAGES))
        return 200, {}, f"<html><body>{links}</body></html>".encode()
    if path.startswith("/p"):
        return 200, {}, b"<html><body>page</body></html>"
    return 404, {}, b"no"


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = urllib.request.urlopen(url, timeout=5).read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(samples: dict[Any, float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), -1.0)


def wait_until(check: Any, timeout_s: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError("timed out")


@pytest.fixture
def running(tmp_path: Path) -> Iterator[tuple[CrawlController, threading.Thread]]:
    with RouteServer(site) as server:
        order = load_order(
            EXAMPLE,
            [
                f"seeds.urls=['{server.origin()}/']",
                "seeds.file=null",
                "logging.console=false",
                "pause_at_start=true",
                "metrics.port=0",
                "frontier.politeness.delay_factor=0",
                "frontier.politeness.min_delay_ms=250",
                "frontier.politeness.max_delay_ms=250",
            ],
        )
        controller = CrawlController(order, tmp_path / "run", install_signals=False)
        thread = threading.Thread(target=controller.run, daemon=True)
        thread.start()
        yield controller, thread
        controller.request_stop()
        thread.join(30)


def test_a_crawl_serves_its_metrics_while_it_runs(
    running: tuple[CrawlController, threading.Thread],
) -> None:
    controller, thread = running
    wait_until(lambda: controller.metrics is not None and controller.state == "PAUSED")
    assert controller.metrics is not None
    url = controller.metrics.url
    paused = wait_until(
        lambda: (s := scrape(url)) and value(s, "crawler_frontier_queued") >= 1 and s
    )
    assert value(paused, "crawler_state", state="PAUSED") == 1
    assert value(paused, "crawler_state", state="RUNNING") == 0
    assert value(paused, "process_resident_memory_bytes") > 10e6
    assert value(paused, "process_cpu_seconds_total") > 0

    controller.unpause()
    busy = wait_until(
        lambda: (
            (s := scrape(url)) and value(s, "crawler_uris_total", outcome="succeeded") >= 4 and s
        )
    )
    assert value(busy, "crawler_state", state="RUNNING") == 1
    assert value(busy, "crawler_uris_by_status_total", status="200") >= 2  # dns: too
    assert value(busy, "crawler_bytes_total") > 0
    assert value(busy, "crawler_processor_uris_total", chain="fetch", processor="fetch_http") >= 2
    assert value(busy, "crawler_threads") == controller.order.toe_threads
    assert value(busy, "crawler_disk_free_bytes") > 0
    assert value(busy, "crawler_held_servers") == 0  # one queue per host: the cap never binds
    assert value(busy, "crawler_parked_queues") == 0
    assert value(busy, "crawler_retries_total") == 0
    assert {labels for name, labels in busy if name == "crawler_queues"} >= {
        (("state", s),) for s in ("ready", "in_process", "snoozed", "inactive")
    }
    # Bounded labels: no label names a host or a URI.
    assert not any("127.0.0.1" in str(labels) for _, labels in busy)

    thread.join(60)
    assert controller.metrics is None  # closed with the crawl
    with pytest.raises(OSError):
        urllib.request.urlopen(url, timeout=2)


def test_a_real_prometheus_scrapes_and_answers_a_query(
    running: tuple[CrawlController, threading.Thread], tmp_path: Path
) -> None:
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.skip("Debian's prometheus package is not installed (make test installs it)")
    controller, _ = running
    wait_until(lambda: controller.metrics is not None)
    assert controller.metrics is not None
    target = f"127.0.0.1:{controller.metrics.port}"
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s}\n"
        f"scrape_configs: [{{job_name: crawl, static_configs: [{{targets: ['{target}']}}]}}]\n"
    )
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [
            binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={tmp_path / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:

        def query() -> Any:
            q = urllib.parse.quote('crawler_state{state="PAUSED"}')
            try:
                body = urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/api/v1/query?query={q}", timeout=2
                ).read()
            except OSError:
                return None
            import json

            result = json.loads(body)["data"]["result"]
            return result or None

        [series] = wait_until(query, timeout_s=45)
        assert series["metric"]["job"] == "crawl"
        assert series["value"][1] == "1"
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_taken_port_is_a_clear_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        server = MetricsServer(CrawlCollector(dict, dict, list), "127.0.0.1", port)
        with pytest.raises(MetricsPortError) as caught:
            server.start()
    assert f"127.0.0.1:{port}" in str(caught.value)
    assert "metrics.port" in str(caught.value)
