"""A recrawl killed with ``kill -9`` and resumed (``crawler resume``) still reaches every URL of
the first crawl, logs each once, and finds the links of the pages answered 304 after the resume
(the imported history's snapshot is kept in the state directory and reused)."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest
from recrawl_support import crawl_log, not_modified, reached, warc_records
from support.crawl_process import kill_after, logged, start_crawler
from support.sample_crawl import crawl_sample_site

from crawler.demo import SampleSite

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(180)]


def test_a_recrawl_killed_and_resumed_reaches_every_url(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    with SampleSite(pages_per_host=60, validators=True) as site:
        crawl_sample_site(site, first, "toe_threads=4")
        site.latency_s = 0.05  # slow enough to kill it midway on a loaded machine
        total = len(reached(first))
        proc = start_crawler(
            [
                "run", str(EXAMPLE), "--run-dir", str(second),
                "--set", f"seeds.urls={site.base_urls!r}", "--set", "seeds.file=null",
                "--set", "toe_threads=4", "--set", "logging.console=false",
                "--set", f"history.import_from={str(first)!r}",
            ]
        )  # fmt: skip
        killed = kill_after(proc, second, math.ceil(total * 0.4))
        assert killed, "the recrawl ended before the kill: make it slower"
        before_resume = set(logged(second))
        assert len(before_resume) < total
        site.latency_s = 0.0
        resumed = start_crawler(["resume", str(second)])
        _, err = resumed.communicate(timeout=120)
        assert resumed.returncode == 0, err
    lines = Counter(logged(second))
    assert [u for u, n in lines.items() if n > 1] == []  # each URI logged once
    assert reached(second) == reached(first)
    ok = {u for u, line in crawl_log(first).items() if line.status == 200 and "robots" not in u}
    assert not_modified(second) == ok
    # Pages answered 304 after the resume led to their links too.
    assert ok - before_resume
    assert (second / "state" / "history-import" / "0" / "IMPORTED-FROM").is_file()
    kinds = Counter(kind for kind, _ in warc_records(second))
    assert kinds["revisit"] >= len(ok)
