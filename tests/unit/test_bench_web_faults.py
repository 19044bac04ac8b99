"""The synthetic-web benchmark's page faults and system CPU: read from /proc, and per minute."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "web"))

import report_web  # noqa: E402
import run_web  # noqa: E402


def test_proc_faults_count_the_pages_a_process_touches() -> None:
    before, _ = run_web.proc_faults_sys(os.getpid())
    block = bytearray(64 << 20)  # 16,384 pages, zeroed by the kernel as they are touched
    after, sys_s = run_web.proc_faults_sys(os.getpid())
    del block
    assert after - before > 8_000
    assert sys_s > 0
    assert run_web.proc_faults_sys(2**22 + 1) == (0, 0.0)  # no such process


def sample(t_s: float, lines: int, minflt: int, sys_s: float, cpu_s: float) -> dict[str, float]:
    return {
        "t_s": t_s,
        "crawl_log_lines": lines,
        "minflt": minflt,
        "sys_cpu_s": sys_s,
        "cpu_s": cpu_s,
    }


def test_faults_per_uri_by_minute() -> None:
    result = {
        "samples": [
            sample(0.0, 0, 1_000, 0.0, 0.0),
            sample(30.0, 3_000, 100_000, 0.5, 6.0),
            sample(60.0, 6_000, 301_000, 1.2, 15.0),
            sample(90.0, 9_000, 310_000, 1.5, 20.0),
        ]
    }
    rows = report_web.faults_markdown(result).splitlines()
    assert rows[2] == "| 0.0-1.0 | 100.0 | 50.0 | 0.20 | 2.50 |"
    assert rows[3] == "| 1.0-1.5 | 100.0 | 3.0 | 0.10 | 1.67 |"  # the run's last half minute
    assert len(rows) == 4


def test_runs_without_fault_samples_say_so() -> None:
    old = {"samples": [{"t_s": 0.0, "crawl_log_lines": 0, "cpu_s": 0.0}]}
    assert report_web.faults_markdown(old) == "(no page-fault samples in this run)"
