"""The synthetic-web benchmark's yardstick of the machine: two workloads timed in a fresh
interpreter, and the table that sets each run's CPU per fetch beside them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "web"))

import report_web  # noqa: E402
import yardstick  # noqa: E402


def test_the_workloads_run_in_a_fresh_interpreter_and_take_cpu_time() -> None:
    figures = yardstick.measure()
    assert set(figures) == {"loop_ms", "walk_ms"}
    # 3,000,000 loop turns and 400,000 objects visited out of order: tens to thousands of
    # CPU-ms on any machine this runs on, never nothing.
    assert 5 < figures["loop_ms"] < 5_000
    assert 20 < figures["walk_ms"] < 20_000


def test_an_interpreter_that_cannot_run_them_is_an_error() -> None:
    with pytest.raises(subprocess.CalledProcessError):
        yardstick.measure("/bin/false")


def result(
    label: str, crawler: float, nginx: float, machine: dict[str, Any] | None = None
) -> dict[str, Any]:
    r: dict[str, Any] = {
        "label": label,
        "cpu_ms_per_fetch": crawler,
        "nginx_cpu_ms_per_fetch": nginx,
    }
    if machine is not None:
        r["yardstick"] = machine
    return r


def test_the_table_sets_each_run_beside_the_machine_of_its_time() -> None:
    new = result(
        "new",
        4.4,
        0.4,
        {
            "before": {"loop_ms": 83.4, "walk_ms": 612.0},
            "after": {"loop_ms": 90.0, "walk_ms": 655.5},
        },
    )
    old = result("old", 2.6, 0.0)  # recorded before the yardstick, and no nginx figure
    lines = report_web.machine_markdown([new, old]).splitlines()
    assert lines[2] == "| new | 4.40 | 0.40 | 11.0 | 83 / 90 | 612 / 656 |"
    assert lines[3] == "| old | 2.60 | 0.00 | - | - | - |"
    assert yardstick.per_nginx(result("r", 2.14, 0.2)) == 10.7
