"""Crawling through a SOCKS5 proxy (``proxy_url: socks5h://...``) on the wire-exact HTTP/1.1
client, with a login, and a proxy for one site only through a sheet."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.crawllog_parser import parse_file
from support.route_server import RouteServer, page
from support.socks5_server import Socks5Server

from crawler.control.controller import CrawlController
from crawler.order.errors import OrderError
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
FETCH = "chains.fetch.fetch_http.params"

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


def site(host: str, path: str) -> tuple[int, dict[str, str], bytes]:
    if path == "/":
        return page("/a", "/b")
    if path in ("/a", "/b"):
        return page()
    return 404, {}, b"no"


def crawl(tmp_path: Path, seeds: list[str], *more: str) -> list[tuple[int, str]]:
    order = load_order(
        EXAMPLE,
        [f"seeds.urls={seeds}", "seeds.file=null", "logging.console=false", *more],
    )
    controller = CrawlController(order, tmp_path / "run", install_signals=False)
    assert controller.run() == 0
    entries = parse_file(tmp_path / "run" / "logs" / "crawl.log")
    return [(e.status, e.uri) for e in entries if not e.uri.startswith("dns:")]


def test_every_fetch_goes_through_the_proxy_with_its_login(tmp_path: Path) -> None:
    with RouteServer(site) as origin, Socks5Server(login=("crawl", "s3cret")) as proxy:
        got = crawl(
            tmp_path,
            [f"{origin.origin()}/"],
            f"{FETCH}.proxy_url={proxy.url(login='crawl:s3cret@')}",
        )
    pages = {uri.rsplit("/", 1)[-1] for status, uri in got if status == 200}
    assert {"", "a", "b"} <= pages
    assert {port for _, port in proxy.connects} == {origin.port}
    assert sum(origin.hits.values()) >= 3  # robots.txt, /, /a, /b all reached via the tunnel


def test_a_wrong_proxy_login_is_a_connect_failure_in_crawl_log(tmp_path: Path) -> None:
    with RouteServer(site) as origin, Socks5Server(login=("crawl", "s3cret")) as proxy:
        got = crawl(
            tmp_path,
            [f"{origin.origin()}/"],
            f"{FETCH}.proxy_url={proxy.url(login='crawl:wrong@')}",
            "frontier.retries.max_retries=0",
        )
        assert proxy.refused_logins >= 1
        assert not origin.hits  # nothing reached the site
    assert got and all(status == -2 for status, _ in got)


def test_a_sheet_sends_one_site_through_the_proxy(tmp_path: Path) -> None:
    with RouteServer(site) as far, RouteServer(site) as near, Socks5Server() as proxy:
        sheet = (
            f"sheets=[{{name: far, hosts: ['127.0.0.1:{far.port}'], "
            f"settings: {{{FETCH}.proxy_url: '{proxy.url('socks5')}'}}}}]"
        )
        got = crawl(tmp_path, [f"{far.origin()}/", f"{near.origin()}/"], sheet)
        assert {port for _, port in proxy.connects} == {far.port}
        assert sum(far.hits.values()) >= 3 and sum(near.hits.values()) >= 3
    assert sum(1 for status, _ in got if status == 200) >= 6


def test_an_unknown_proxy_scheme_is_a_clear_order_error() -> None:
    with pytest.raises(OrderError) as caught:
        load_order(EXAMPLE, [f"{FETCH}.proxy_url=socks4://127.0.0.1:1080"])
    text = str(caught.value)
    assert "proxy_url" in text and "socks5://" in text
