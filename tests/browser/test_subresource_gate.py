"""A browser page's sub-resources pass the server gate: the server never sees more requests at
once than ``host_max_connections`` (the page's own server included, without deadlock at 1), a
429 with Retry-After holds and paces the server for the browser's next requests, and a request
the gate does not admit in time is aborted and logged -5005."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_support import crawl, needs_chromium, response_counts
from gate_site import ASSET_HOST, PAGE_HOST, GateSite
from support.crawllog_parser import CrawlLogLine

pytestmark = [pytest.mark.integration, needs_chromium, pytest.mark.timeout(120)]


def gate_crawl(run: Path, site: GateSite, *sets: str) -> dict[str, CrawlLogLine]:
    """Crawl the site's page through the browser; crawl.log lines by URI (each URI once)."""
    lines = crawl(
        run,
        [site.origin(PAGE_HOST) + "/"],
        "browser.enabled=true",
        "browser.all_html=true",
        "fetch.allow_private=[127.0.0.0/8]",  # the asset host, 127.0.0.2, plays a public one
        *sets,
    )
    by_uri = {line.uri: line for line in lines}
    assert len(lines) == len(by_uri)
    return by_uri


@pytest.mark.parametrize("cap", [1, 2])
def test_the_server_never_sees_more_requests_at_once_than_the_cap(tmp_path: Path, cap: int) -> None:
    run = tmp_path / "run"
    with GateSite(assets=12, own_assets=4) as site:
        by_uri = gate_crawl(run, site, f"frontier.politeness.host_max_connections={cap}")
        assets = site.asset_uris()
        peak = dict(site.peak)
        asked = [r.path for r in site.requests(ASSET_HOST, "/a/")]
    # Every image the page asked for was fetched once, with 200, and logged once — at a cap of
    # 1 the page's own images too (they take turns on the slot the page holds).
    for uri in assets:
        line = by_uri[uri]
        assert line.status == 200 and "browser" in line.annotations, uri
    assert sorted(asked) == sorted(f"/a/{n}.png" for n in range(12))
    assert all(response_counts(run)[uri] == 1 for uri in assets)
    assert peak[ASSET_HOST] <= cap
    assert peak[PAGE_HOST] <= cap


def test_a_429_with_retry_after_holds_and_paces_the_server_for_the_browser(
    tmp_path: Path,
) -> None:
    run = tmp_path / "run"
    with GateSite(assets=6, own_assets=0, delay_s=0.02, refuse=1) as site:
        by_uri = gate_crawl(run, site, "frontier.politeness.host_max_connections=1")
        asked = site.requests(ASSET_HOST, "/a/")
        refused_uri = site.origin(ASSET_HOST) + asked[0].path
        server = site.server(ASSET_HOST)
    first, second = asked[0], asked[1]
    assert first.status == 429
    # Retry-After: 1 held the server: the browser's next request to it came a second later.
    assert second.start_s - first.end_s >= 1 - 0.05
    assert all(r.status == 200 for r in asked[1:])
    assert by_uri[refused_uri].status == 429  # the answer the browser got, logged once
    # The refusal fed the server's adaptive pace, as a queued fetch's would.
    report = (run / "reports" / "frontier-summary-report.txt").read_text()
    paced = report.split("PACED SERVERS", 1)[1].split("=====-----", 2)[1]
    assert f" {server} " in paced


def test_a_request_the_gate_does_not_admit_in_time_is_aborted_and_logged(
    tmp_path: Path,
) -> None:
    run = tmp_path / "run"
    with GateSite(assets=4, own_assets=2, delay_s=0.02, refuse=120) as site:
        by_uri = gate_crawl(
            run,
            site,
            "frontier.politeness.host_max_connections=1",
            "browser.subresource_timeout_s=1",
        )
        asked = site.requests(ASSET_HOST, "/a/")
        own = [u for u in site.asset_uris() if "/o/" in u]
        held = [site.origin(ASSET_HOST) + f"/a/{n}.png" for n in range(4)]
    assert [r.status for r in asked] == [429]  # then held for two minutes
    refused = site.origin(ASSET_HOST) + asked[0].path
    for uri in held:
        line = by_uri[uri]
        if uri == refused:
            assert line.status == 429
            continue
        assert line.status == -5005, uri
        assert "serverGateTimeout" in line.annotations and "browser" in line.annotations
        assert line.hops == "E"
    assert all(by_uri[uri].status == 200 for uri in own)
    report = (run / "reports" / "processors-report.txt").read_text()
    assert "no server slot in time (-5005): 3" in report
