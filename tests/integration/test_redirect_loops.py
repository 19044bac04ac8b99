"""A real crawl ends redirect loops after following them once, and still follows real chains."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from support.crawllog_parser import parse_file
from support.route_server import NOT_FOUND, Answer, RouteServer, page, redirect

from crawler.control.controller import CrawlController
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

_sessions = itertools.count(10**31)


def route(host: str, path: str) -> Answer:
    if path == "/":
        return page("/self", "/ab-a", "/sess", "/q", "/chain-1")
    if path == "/self":
        return redirect("/self")
    if path == "/ab-a":
        return redirect("/ab-b")
    if path == "/ab-b":
        return redirect("/ab-a")
    if path.startswith("/sess"):
        # A new session id each time: a different URI, the same canonical one.
        return redirect(f"/sess?PHPSESSID={next(_sessions)}")
    if path == "/q":
        return redirect("/q?x=1")
    if path == "/q?x=1":
        return redirect("/q")
    if path.startswith("/chain-"):
        n = int(path.removeprefix("/chain-"))
        return redirect(f"/chain-{n + 1}" if n < 3 else "/end", 301)
    if path == "/end":
        return page()
    return NOT_FOUND


def test_redirect_loops_end_after_one_round_and_chains_are_followed(tmp_path: Path) -> None:
    with RouteServer(route) as server:
        origin = server.origin()
        order = load_order(
            EXAMPLE,
            [f"seeds.urls=['{origin}/']", "seeds.file=null", "toe_threads=3"],
        )
        assert CrawlController(order, tmp_path / "run", install_signals=False).run() == 0
        hits = dict(server.hits)
    lines = [
        line
        for line in parse_file(tmp_path / "run" / "logs" / "crawl.log")
        if line.uri.startswith(origin)
    ]
    fetched: dict[str, list[str]] = {}
    for line in lines:
        fetched.setdefault(line.uri.removeprefix(origin), []).append(line.hops)
    host = "127.0.0.1"
    # A → A: fetched twice, the second time its redirect is not followed.
    assert hits[host + "/self"] == 2
    assert fetched["/self"] == ["L", "LR"]
    last = [line for line in lines if line.uri == origin + "/self"][-1]
    assert last.status == 302 and "redirectLoop" in last.annotations
    # A → B → A: A once more, then the loop ends at A.
    assert (hits[host + "/ab-a"], hits[host + "/ab-b"]) == (2, 1)
    assert fetched["/ab-a"] == ["L", "LRR"]
    # A → A?PHPSESSID=… (the same canonical URI), every time with another id: two fetches.
    assert sum(n for path, n in hits.items() if path.startswith(host + "/sess")) == 2
    # A → A?x=1 → A: two different URIs, then back to the first once.
    assert (hits[host + "/q"], hits[host + "/q?x=1"]) == (2, 1)
    # A chain of three redirects to a page is followed to its end.
    assert [fetched[f"/chain-{n}"] for n in (1, 2, 3)] == [["L"], ["LR"], ["LRR"]]
    assert fetched["/end"] == ["LRRR"]
    loops = [line.uri for line in lines if "redirectLoop" in line.annotations]
    assert len(loops) == 4
