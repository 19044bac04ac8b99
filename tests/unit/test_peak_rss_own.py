"""A process's peak RSS is its own, not that of the large process that started it.

Linux's ``ru_maxrss`` for a child started with ``vfork``+``exec`` from a large process reports
the large process's size. The crawler's ``peak_rss_kb`` (progress-statistics, ``crawler status``)
and the tests' :func:`support.peak_rss.run_with_peak_rss` must both report the child's own.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.peak_rss import run_with_peak_rss

PARENT_MB = 300
CHILD_MB = 40
# A child that touches CHILD_MB and prints what the crawler's progress log would report.
CHILD = f"""
from crawler.logs.progress import peak_rss_kb
block = bytearray({CHILD_MB} * 2**20)
for i in range(0, len(block), 4096):
    block[i] = 1
print(peak_rss_kb() // 1024)
"""
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def large_parent() -> Iterator[None]:
    """This process holds PARENT_MB resident while the test runs."""
    ballast = bytearray(PARENT_MB * 2**20)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    yield
    del ballast


@pytest.mark.usefixtures("large_parent")
def test_the_crawlers_peak_rss_is_its_own() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, check=True, timeout=60
    )
    assert CHILD_MB <= int(done.stdout.split()[-1]) < PARENT_MB * 0.6


@pytest.mark.usefixtures("large_parent")
def test_run_with_peak_rss_measures_the_command_alone() -> None:
    run = run_with_peak_rss([sys.executable, "-c", CHILD], cwd=ROOT, timeout_s=60)
    assert run.returncode == 0, run.output.decode(errors="replace")
    assert CHILD_MB <= run.peak_rss_mb < PARENT_MB * 0.6
