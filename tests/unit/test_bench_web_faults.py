"""The synthetic-web benchmark's page faults and system CPU: read from /proc, and per minute."""

from __future__ import annotations

import os
import sys
import threading
import time
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


def sample(
    t_s: float, lines: int, minflt: int, sys_s: float, cpu_s: float, vcsw: int = 0, nvcsw: int = 0
) -> dict[str, float]:
    return {
        "t_s": t_s,
        "crawl_log_lines": lines,
        "minflt": minflt,
        "sys_cpu_s": sys_s,
        "cpu_s": cpu_s,
        "vcsw": vcsw,
        "nvcsw": nvcsw,
    }


def test_faults_per_uri_by_minute() -> None:
    result = {
        "samples": [
            sample(0.0, 0, 1_000, 0.0, 0.0, 500, 10),
            sample(30.0, 3_000, 100_000, 0.5, 6.0, 60_000, 910),
            sample(60.0, 6_000, 301_000, 1.2, 15.0, 240_500, 1_210),
            sample(90.0, 9_000, 310_000, 1.5, 20.0, 300_500, 2_710),
        ]
    }
    rows = report_web.faults_markdown(result).splitlines()
    assert rows[2] == "| 0.0-1.0 | 100.0 | 50.0 | 0.20 | 2.50 | 40.0 / 0.2 |"
    # the run's last half minute
    assert rows[3] == "| 1.0-1.5 | 100.0 | 3.0 | 0.10 | 1.67 | 20.0 / 0.5 |"
    assert len(rows) == 4


def test_proc_switches_count_a_thread_that_blocks() -> None:
    def blocker() -> None:
        for _ in range(200):
            time.sleep(0.0005)  # each sleep blocks: one voluntary switch

    before, _ = run_web.proc_switches(os.getpid())
    thread = threading.Thread(target=blocker)
    thread.start()
    while thread.is_alive():
        after, _ = run_web.proc_switches(os.getpid())  # counted while the thread lives
        time.sleep(0.01)
    thread.join()
    assert after - before >= 100
    assert run_web.proc_switches(2**22 + 1) == (0, 0)  # no such process


def test_runs_without_switch_samples_show_a_dash() -> None:
    older = {
        "samples": [
            {"t_s": 0.0, "crawl_log_lines": 0, "minflt": 0, "sys_cpu_s": 0.0, "cpu_s": 0.0},
            {"t_s": 60.0, "crawl_log_lines": 600, "minflt": 60, "sys_cpu_s": 0.1, "cpu_s": 1.2},
        ]
    }
    assert report_web.faults_markdown(older).splitlines()[2].endswith("| 2.00 | - |")


def test_runs_without_fault_samples_say_so() -> None:
    old = {"samples": [{"t_s": 0.0, "crawl_log_lines": 0, "cpu_s": 0.0}]}
    assert report_web.faults_markdown(old) == "(no page-fault samples in this run)"
