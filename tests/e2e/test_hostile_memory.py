"""Peak memory of a ``crawler run`` subprocess over the whole hostile site.

The site serves 6 MiB of malformed HTML, 3 MiB of robots.txt, three decompression bombs of
1 GiB each and more (see ``crawler.demo.hostile_site``); the crawler must capture all of it
with bounded memory. The crawl's own peak RSS comes from :func:`support.peak_rss.run_with_peak_rss`
(a launcher in between: started straight from a pytest worker of several hundred MB, the crawl's
``ru_maxrss`` would report the worker's size, not its own).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from support.crawllog_parser import parse_file
from support.peak_rss import run_with_peak_rss

from crawler.demo.hostile_order import crawl_settings
from crawler.demo.hostile_site import HostileSite

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
MAX_RSS_MB = 400

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(120)]


def test_cli_crawl_of_the_hostile_site_has_bounded_memory(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    with HostileSite() as site:
        args = [sys.executable, "-m", "crawler", "run", str(EXAMPLE), "--run-dir", str(run_dir)]
        for setting in crawl_settings(site):
            args += ["--set", setting]
        began = time.monotonic()
        run = run_with_peak_rss([*args, "--no-display"], cwd=ROOT, timeout_s=110)
        elapsed_s = time.monotonic() - began
    print(f"hostile-site crawl: peak RSS {run.peak_rss_mb:.0f} MB, {elapsed_s:.1f} s")
    assert run.returncode == 0, run.output.decode(errors="replace")[-3000:]
    assert run.peak_rss_mb < MAX_RSS_MB
    lines = parse_file(run_dir / "logs" / "crawl.log")
    by_uri = {line.uri: line for line in lines}
    assert by_uri[site.url("main", "/bomb-gzip2.html")].status == 200
    assert by_uri[site.url("main", "/big.html")].status == 200
    assert by_uri[site.refused_base + "/refused.html"].status == -2  # nobody else's server
    assert "CRAWL ENDED - Finished" in (run_dir / "logs" / "progress-statistics.log").read_text()
