"""A recrawl's revisits of the first crawl replay through pywb, both collections in one config.

The sample site is crawled, then recrawled with ``dedup.collections`` naming the first run; one
pywb collection serves both runs' indexes and WARC directories. Asking pywb for the second
crawl's capture of an unchanged page (its own timestamp, ``id_`` for the bytes as archived)
returns the revisit's date with the first crawl's payload, byte for byte as the site sent it.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest
from crawllog_parser import parse_file

from crawler.archive import run_index
from crawler.archive.collection import PywbCollection
from crawler.archive.replay import ReplayError, ReplayServer, find_wayback
from crawler.demo import SampleSite
from tests.e2e.test_dedup_collections import crawl

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]


def both_runs(work: Path, runs: list[Path]) -> PywbCollection:
    """One pywb collection over the runs' indexes (linked into one folder) and WARC folders."""
    indexes = work / "indexes"
    indexes.mkdir(parents=True)
    for n, run in enumerate(runs):
        for index in (run / "indexes").glob("*.cdxj"):
            (indexes / f"{n}-{index.name}").symlink_to(index)
    paths = "".join(f"      - {json.dumps(str(run / 'warcs') + '/')}\n" for run in runs)
    (work / "config.yaml").write_text(
        "collections:\n"
        "  both:\n"
        f"    index_paths: {json.dumps(str(indexes) + '/')}\n"
        "    archive_paths:\n"
        f"{paths}"
    )
    return PywbCollection(work, "both", records=0)


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
    with ReplayServer(both_runs(tmp_path / "pywb", [first, second])) as server:
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
