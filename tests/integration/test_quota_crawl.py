"""Quotas in real crawls: a host that reached its URI quota, and a registrable domain that reached
its byte quota, get -5003 (Q:<quota>) for the rest of their URIs, which are never requested;
other hosts and domains are crawled whole.

One toe thread, so that each URI's final disposition is counted before the next is checked (with
more threads a quota may be passed by the URIs in flight, as the QuotaEnforcer documents).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from support.crawllog_parser import CrawlLogLine, parse_file

from crawler.control.controller import CrawlController
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
PAGES = 12
PAGE_BYTES = 1000

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


class Site:
    """Any host name: ``/`` links to ``/p/1.html`` … ``/p/12.html``, each page PAGE_BYTES long.

    Also answers as an HTTP proxy (absolute request targets), so a crawl can reach hosts such as
    ``a.example.com`` without DNS.
    """

    def __init__(self) -> None:
        self.requested: list[str] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urlsplit(self.path)
                host = url.netloc or self.headers.get("Host", "")
                site.requested.append(f"{host}{url.path}")
                if url.path == "/":
                    links = "".join(f'<a href="/p/{n}.html">{n}</a>' for n in range(1, PAGES + 1))
                    body = f"<html><body>{links}</body></html>".encode()
                elif url.path.startswith("/p/"):
                    body = b"<html><body>" + b"x" * (PAGE_BYTES - 26) + b"</body></html>"
                else:
                    body = b""
                self.send_response(200 if body else 404)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def site() -> Iterator[Site]:
    s = Site()
    yield s
    s.close()


def crawl(tmp_path: Path, settings: list[str]) -> list[CrawlLogLine]:
    order = load_order(
        EXAMPLE,
        ["seeds.file=null", "toe_threads=1", "logging.console=false", *settings],
    )
    run = tmp_path / "run"
    controller = CrawlController(order, run, install_signals=False)
    assert controller.run() == 0
    return [line for line in parse_file(run / "logs" / "crawl.log") if line.hops != "P"]


def test_a_host_past_its_uri_quota_is_fetched_no_more(site: Site, tmp_path: Path) -> None:
    lines = crawl(
        tmp_path,
        [
            f"seeds.urls=['{site.base}/']",
            "robots.policy=ignore",
            "chains.pre.quota_enforcer.params.host_max_urls=5",
        ],
    )
    # Successes as Heritrix counts them: any status > 0 (the inferred /favicon.ico's 404 too).
    fetched = [line for line in lines if line.status > 0]
    blocked = [line for line in lines if line.status == -5003]
    assert len(fetched) == 5
    assert len(blocked) == len(lines) - 5 >= PAGES + 1 - 5
    assert all(line.annotations == ["Q:host_max_urls"] for line in blocked)
    host = site.base.removeprefix("http://")
    assert len([r for r in site.requested if r.startswith(host)]) == 5
    report = (tmp_path / "run" / "reports" / "processors-report.txt").read_text()
    assert f"URIs over quota (-5003): {len(blocked)} (host_max_urls {len(blocked)})" in report
    crawl_report = (tmp_path / "run" / "reports" / "crawl-report.txt").read_text()
    assert f"\nURIs over quota: {len(blocked)}\n" in crawl_report


def test_a_domain_past_its_byte_quota_is_fetched_no_more(site: Site, tmp_path: Path) -> None:
    seeds = ["http://a.example.com/", "http://b.example.com/", "http://www.example.org/"]
    lines = crawl(
        tmp_path,
        [
            f"seeds.urls={seeds}",
            "robots.policy=ignore",
            f"chains.fetch.fetch_http.params.proxy_url={site.base}",
            "chains.fetch.fetch_dns.enabled=false",
            "chains.pre.precondition_enforcer.params.dns_prerequisites=false",
            f"chains.pre.quota_enforcer.params.domain_max_bytes={4 * PAGE_BYTES}",
        ],
    )

    def of(domain: str, status: int) -> list[CrawlLogLine]:
        return [
            line
            for line in lines
            if urlsplit(line.uri).hostname.endswith(domain)  # type: ignore[union-attr]
            and line.status == status
        ]

    # example.com's two hosts share one quota: fetching stops once 4000 bytes were fetched (by
    # both hosts together: each alone would have had 13 pages).
    com_bytes = sum(line.size for line in of("example.com", 200))
    assert 4 * PAGE_BYTES <= com_bytes < 5 * PAGE_BYTES + 1000
    blocked = of("example.com", -5003)
    assert len(blocked) >= 5  # at least the rest of the first host's pages
    com = [line for line in lines if ".example.com/" in line.uri]
    assert len(com) == len(of("example.com", 200)) + len(of("example.com", 404)) + len(blocked)
    assert all(line.annotations == ["Q:domain_max_bytes"] for line in blocked)
    requested = {r for r in site.requested if ".example.com" in r}
    assert not requested & {urlsplit(line.uri).netloc + urlsplit(line.uri).path for line in blocked}
    # example.org has a quota of its own: example.com's spending did not touch it.
    org_bytes = sum(line.size for line in of("example.org", 200))
    assert 4 * PAGE_BYTES <= org_bytes < 5 * PAGE_BYTES + 1000
