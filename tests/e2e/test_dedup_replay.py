"""A recrawl's revisits of the first crawl replay through pywb, both collections in one config.

The sample site is crawled, then recrawled with ``dedup.collections`` naming the first run; the
collection ``crawler replay`` makes for the recrawl serves both runs' indexes and WARC directories
(the run named in ``dedup.collections`` joins it). Asking pywb for the second
crawl's capture of an unchanged page (its own timestamp, ``id_`` for the bytes as archived)
returns the revisit's date with the first crawl's payload, byte for byte as the site sent it.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest
from support.crawllog_parser import parse_file

from crawler.archive import run_index
from crawler.archive.collection import collection_from_run, earlier_runs
from crawler.archive.replay import ReplayError, ReplayServer, find_wayback
from crawler.demo import SampleSite
from tests.e2e.test_dedup_collections import crawl

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]


def test_revisits_of_the_first_crawl_replay_as_its_payloads(tmp_path: Path) -> None:
    try:
        find_wayback()
    except ReplayError as exc:
        pytest.fail(f"pywb is part of the set-up (make install): {exc}")
    with SampleSite(ports=(0,), pages_per_host=20) as site:
        first, second = tmp_path / "first", tmp_path / "second"
        crawl(site, first)
        run_index.index_run(first)
        crawl(site, second, f"dedup.collections=[{{cdxj: {json.dumps(str(first))}}}]")
        run_index.index_run(second)
        origin = site.content.origins[0]
        bodies = {origin + path: res.body for path, res in site.content.hosts[origin].items()}
    revisits = {
        line.uri: line
        for line in parse_file(second / "logs" / "crawl.log")
        if "duplicate:digest" in line.annotations and line.status == 200
    }
    assert len(revisits) >= 10
    # crawler replay's collection of the recrawl: the run its dedup.collections names joins it
    assert earlier_runs(second) == [first.resolve()]
    collection = collection_from_run(second, tmp_path / "pywb")
    assert str(first.resolve() / "warcs") in collection.config.read_text()
    with ReplayServer(collection) as server:
        for uri, line in sorted(revisits.items()):
            stamp = str(line.timing)[:14]  # the revisit's own capture time (fetch start)
            url = f"{server.prefix}{stamp}id_/{uri}"
            with urllib.request.urlopen(url, timeout=30) as response:
                body = response.read()
                memento = response.headers["Memento-Datetime"]
            assert body == bodies[uri], uri
            assert memento is not None
            assert memento.endswith(stamp_as_http_date(stamp)), (uri, memento, stamp)


def stamp_as_http_date(stamp: str) -> str:
    """``20261124110225`` -> ``2026 11:02:25 GMT`` (the tail of an HTTP date)."""
    return f"{stamp[0:4]} {stamp[8:10]}:{stamp[10:12]}:{stamp[12:14]} GMT"
