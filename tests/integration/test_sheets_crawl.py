"""Sheets in real crawls of one local server playing two hosts, ``127.0.0.1`` and ``localhost``:
a sheet gives one host a politeness delay (the crawl.log fetch starts show it), a sheet dropped
into ``action/`` while the crawl runs slows one host from then on, a sheet lowers one host's
``max_length_bytes`` and hop limit, another sets one host's URI quota.

Timing assertions are lower bounds only (a delay the sheet demands), safe on a loaded machine.
"""

from __future__ import annotations

import itertools
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from support.crawllog_parser import CrawlLogLine, parse_file
from support.route_server import NOT_FOUND, Answer, RouteServer, page

from crawler.control.controller import CrawlController
from crawler.control.steering import action_taken, drop_action
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
DELAY_MS = 300
PAGES = 5

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

NO_POLITENESS = [
    "frontier.politeness.delay_factor=0",
    "frontier.politeness.min_delay_ms=0",
    "frontier.politeness.max_delay_ms=0",
]


def site(host: str, path: str) -> Answer:
    """``/`` links ``/p/1..5`` and ``/big``; ``/p/1`` links ``/deep/1``; ``/big`` is 5000 bytes."""
    if path == "/":
        return page(*(f"/p/{n}" for n in range(1, PAGES + 1)), "/big")
    if path == "/p/1":
        return page("/deep/1")
    if path.startswith(("/p/", "/deep/")):
        return page()
    if path == "/big":
        return 200, {}, b"<html><body>" + b"y" * 5000 + b"</body></html>"
    return NOT_FOUND


def sheet_set(*sheets: dict[str, object]) -> str:
    return "sheets=" + yaml.safe_dump(list(sheets), default_flow_style=True, width=10_000).strip()


def crawl(tmp_path: Path, seeds: list[str], *settings: str) -> tuple[Path, list[CrawlLogLine]]:
    order = load_order(
        EXAMPLE,
        [
            "seeds.file=null",
            f"seeds.urls={seeds}",
            "toe_threads=4",
            "logging.console=false",
            "robots.policy=ignore",
            *NO_POLITENESS,
            *settings,
        ],
    )
    run = tmp_path / "run"
    assert CrawlController(order, run, install_signals=False).run() == 0
    return run, parse_file(run / "logs" / "crawl.log")


def start_ms(line: CrawlLogLine) -> int:
    assert line.timing is not None
    stamp = datetime.strptime(line.timing.split("+")[0], "%Y%m%d%H%M%S%f").replace(tzinfo=UTC)
    return int(stamp.timestamp() * 1000)


def host_starts(lines: list[CrawlLogLine], origin: str) -> list[int]:
    """Fetch starts (ms) of the http URIs of ``origin`` that were fetched, in order."""
    return sorted(
        start_ms(line) for line in lines if line.uri.startswith(origin + "/") and line.status > 0
    )


def gaps(starts: list[int]) -> list[int]:
    return [b - a for a, b in itertools.pairwise(starts)]


def test_a_sheet_gives_one_host_its_politeness_delay(tmp_path: Path) -> None:
    with RouteServer(site) as server:
        slow, fast = server.origin("127.0.0.1"), server.origin("localhost")
        sheet = {
            "name": "slow-ip",
            "hosts": ["127.0.0.1"],
            "settings": {
                "frontier.politeness.min_delay_ms": DELAY_MS,
                "frontier.politeness.max_delay_ms": 2 * DELAY_MS,
            },
        }
        _, lines = crawl(tmp_path, [f"{slow}/", f"{fast}/"], sheet_set(sheet))
    slow_starts, fast_starts = host_starts(lines, slow), host_starts(lines, fast)
    assert len(slow_starts) >= PAGES + 2 and len(fast_starts) >= PAGES + 2
    assert min(gaps(slow_starts)) >= DELAY_MS
    # Both hosts were crawled whole: the sheet changed pace, nothing else.
    assert len(slow_starts) == len(fast_starts)


def chain_site(gate: threading.Event) -> RouteServer:
    """localhost: ``/c0`` → ``/c1`` → … → ``/c8``; ``/c2`` is answered once ``gate`` is set."""

    def route(host: str, path: str) -> Answer:
        if path.startswith("/c"):
            n = int(path[2:])
            if n == 2:
                gate.wait(30)
            return page(f"/c{n + 1}") if n < 8 else page()
        return NOT_FOUND

    return RouteServer(route)


def test_a_sheet_dropped_in_while_the_crawl_runs_slows_one_host_from_then_on(
    tmp_path: Path,
) -> None:
    gate = threading.Event()
    server = chain_site(gate)
    with server:
        origin = server.origin("localhost")
        order = load_order(
            EXAMPLE,
            [
                "seeds.file=null",
                f"seeds.urls=['{origin}/c0']",
                "toe_threads=2",
                "logging.console=false",
                "robots.policy=ignore",
                *NO_POLITENESS,
            ],
        )
        run = tmp_path / "run"
        controller = CrawlController(order, run, install_signals=False)
        result: list[int] = []
        runner = threading.Thread(target=lambda: result.append(controller.run()), daemon=True)
        runner.start()
        try:
            deadline = time.monotonic() + 30
            while server.hits["localhost/c2"] == 0 and time.monotonic() < deadline:
                time.sleep(0.02)
            assert server.hits["localhost/c2"] == 1, "the crawl never reached /c2"
            document = {
                "sheets": [
                    {
                        "name": "slow-localhost",
                        "hosts": ["localhost"],
                        "settings": {
                            "frontier": {
                                "politeness": {"min_delay_ms": DELAY_MS, "max_delay_ms": 1000}
                            }
                        },
                    }
                ]
            }
            name = drop_action(run, "sheets", yaml.safe_dump(document))
            while not action_taken(run, name) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert action_taken(run, name)
        finally:
            gate.set()
        runner.join(60)
    assert result == [0]
    lines = [line for line in parse_file(run / "logs" / "crawl.log") if line.status > 0]
    gated = next(start_ms(line) for line in lines if line.uri == f"{origin}/c2")
    after = [s for s in host_starts(lines, origin) if s >= gated]
    assert len(after) >= 7  # /c2 … /c8
    assert min(gaps(after)) >= DELAY_MS
    kept = yaml.safe_load((run / "sheets.yaml").read_text())
    assert [s["name"] for s in kept["sheets"]] == ["slow-localhost"]


def test_a_sheet_lowers_one_hosts_max_length_and_hop_limit(tmp_path: Path) -> None:
    with RouteServer(site) as server:
        ip, name = server.origin("127.0.0.1"), server.origin("localhost")
        sheet = {
            "name": "small-localhost",
            "hosts": ["localhost"],
            "settings": {
                "chains.fetch.fetch_http.params.max_length_bytes": 1000,
                "scope.TooManyHopsDecideRule.params.max_hops": 1,
            },
        }
        _, lines = crawl(tmp_path, [f"{ip}/", f"{name}/"], sheet_set(sheet))
        hits = dict(server.hits)
    by_uri = {line.uri: line for line in lines}
    assert "lenTrunc" in by_uri[f"{name}/big"].annotations
    assert (by_uri[f"{name}/big"].size or 0) <= 1000
    assert "lenTrunc" not in by_uri[f"{ip}/big"].annotations
    assert (by_uri[f"{ip}/big"].size or 0) > 5000
    # Two hops from the seed: in scope on 127.0.0.1, out of scope (never fetched) on localhost.
    assert by_uri[f"{ip}/deep/1"].status == 200
    assert f"{name}/deep/1" not in by_uri
    assert "localhost/deep/1" not in hits


def test_a_sheet_sets_one_hosts_uri_quota(tmp_path: Path) -> None:
    with RouteServer(site) as server:
        ip, name = server.origin("127.0.0.1"), server.origin("localhost")
        sheet = {
            "name": "quota-ip",
            "hosts": ["127.0.0.1"],
            "settings": {"chains.pre.quota_enforcer.params.host_max_urls": 3},
        }
        _, lines = crawl(tmp_path, [f"{ip}/", f"{name}/"], "toe_threads=1", sheet_set(sheet))
    ip_lines = [line for line in lines if line.uri.startswith(ip + "/")]
    name_lines = [line for line in lines if line.uri.startswith(name + "/")]
    assert len([line for line in ip_lines if line.status > 0]) == 3
    blocked = [line for line in ip_lines if line.status == -5003]
    assert blocked and all(line.annotations == ["Q:host_max_urls"] for line in blocked)
    assert not [line for line in name_lines if line.status == -5003]
    assert len([line for line in name_lines if line.status > 0]) >= PAGES + 3
