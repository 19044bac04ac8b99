"""Peak memory of a ``crawler run`` subprocess over the whole hostile site.

The site serves 6 MiB of malformed HTML, 3 MiB of robots.txt, three decompression bombs of
1 GiB each and more (see ``crawler.demo.hostile_site``); the crawler must capture all of it
with bounded memory. The child's peak RSS comes from ``os.wait4`` (the rusage of that one
child, unlike ``RUSAGE_CHILDREN``, which mixes in every child the test session reaped).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.crawllog_parser import parse_file

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
        proc = subprocess.Popen(
            [*args, "--no-display"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        assert proc.stdout is not None
        try:
            output = proc.stdout.read()
        finally:
            _, wait_status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(wait_status)
        elapsed_s = time.monotonic() - began
    peak_mb = usage.ru_maxrss / 1024  # KiB on Linux
    print(f"hostile-site crawl: peak RSS {peak_mb:.0f} MB, {elapsed_s:.1f} s")
    assert proc.returncode == 0, output.decode(errors="replace")[-3000:]
    assert peak_mb < MAX_RSS_MB
    lines = parse_file(run_dir / "logs" / "crawl.log")
    by_uri = {line.uri: line for line in lines}
    assert by_uri[site.url("main", "/bomb-gzip2.html")].status == 200
    assert by_uri[site.url("main", "/big.html")].status == 200
    assert by_uri[site.refused_base + "/refused.html"].status == -2  # nobody else's server
    assert "CRAWL ENDED - Finished" in (run_dir / "logs" / "progress-statistics.log").read_text()
