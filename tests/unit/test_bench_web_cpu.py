"""The synthetic-web benchmark's CPU by kind: probes in the chains of a real crawl of the sample
site, their tallies against crawl.log, and the per-minute tables."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest
from support.crawllog_parser import parse_file
from support.sample_crawl import crawl_sample_site

from crawler.demo import SampleSite

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "web"))

import cpu_by_kind  # noqa: E402
import run_web  # noqa: E402

pytestmark = pytest.mark.timeout(60)


def _kind(mime: str, status: int, uri: str, hops: str) -> str:
    if uri.startswith("dns:"):
        return "dns"
    if uri.endswith("/robots.txt"):
        return "robots"
    if 200 <= status < 300 and mime == "text/html":
        return "page"
    return "embed" if hops.endswith("E") else "other"


def test_probes_charge_every_logged_page_and_embed_to_its_kind(tmp_path: Path) -> None:
    chains = run_web.probe_chains(ROOT)
    assert [p["name"] for p in chains["post"]][-1] == "cpu_probe_end"
    with SampleSite(pages_per_host=30) as site:
        run_dir = tmp_path / "run"
        crawl_sample_site(
            site, run_dir, *(f"chains.{name}={json.dumps(procs)}" for name, procs in chains.items())
        )
    data = json.loads((run_dir / "logs" / "cpu-by-kind.json").read_text())
    ended: Counter[str] = Counter()
    stages: Counter[str] = Counter()
    for row in data["buckets"].values():
        for kind, k in row["kinds"].items():
            ended[kind] += k["uris"]
            for stage, seconds in k["cpu_s"].items():
                stages[f"{kind}/{stage}"] += seconds
    logged = Counter(
        _kind(line.mime, line.status, line.uri, line.hops)
        for line in parse_file(run_dir / "logs" / "crawl.log")
    )
    # every fetched page, embed and robots.txt went through the chains once and was charged
    # (the sample site is reached by IP address: no dns: lookups)
    for kind in ("robots", "page", "embed"):
        assert logged[kind] > 0, (kind, logged)
        assert ended[kind] == logged[kind], (kind, ended, logged)
    assert stages["page/fetch"] > 0 and stages["page/extract"] > 0
    assert stages["page/post"] > 0 and stages["embed/write"] > 0

    rows = cpu_by_kind.summarize([data], window_s=60.0)
    assert sum(r["uris"] for r in rows) == sum(ended.values())
    page = rows[0]["kinds"]["page"]
    assert page["cpu_ms"] == pytest.approx(sum(page["stages"].values()), abs=0.01)
    table = cpu_by_kind.markdown(rows)
    assert "| 0 | page |" in table
