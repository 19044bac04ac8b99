"""cpu_affinity: which CPUs crawl processes get, and pinning every thread of a process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from crawler.control import affinity
from crawler.order.errors import OrderError
from crawler.order.loader import load_order

EXAMPLE_ORDER = Path(__file__).resolve().parents[2] / "jobs" / "example" / "order.yaml"

needs_two_cpus = pytest.mark.skipif(
    not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="needs two usable CPUs",
)


def ranked(order: list[int]) -> Callable[[Sequence[int]], list[int]]:
    def rank(cpus: Sequence[int]) -> list[int]:
        assert sorted(cpus) == sorted(order)
        return list(order)

    return rank


def test_none_leaves_processes_free() -> None:
    assert affinity.plan("none", 2, usable=[0, 1, 2]) is None


def test_auto_with_one_cpu_has_nothing_to_choose() -> None:
    assert affinity.plan("auto", 1, usable=[3]) is None


def test_auto_gives_each_worker_its_own_cpu_most_idle_first() -> None:
    plan = affinity.plan("auto", 3, usable=[0, 1], rank=ranked([1, 0]))
    assert plan == [[1], [0], [1]]
    assert affinity.plan("auto", 1, usable=[0, 1, 2], rank=ranked([2, 0, 1])) == [[2]]


def test_a_list_is_the_lone_process_set_or_dealt_to_workers() -> None:
    assert affinity.plan([3, 1], 1, usable=[0, 1, 2, 3]) == [[1, 3]]
    assert affinity.plan([3, 1], 3, usable=[0, 1, 2, 3]) == [[3], [1], [3]]


def test_a_cpu_that_is_not_usable_is_a_clear_error() -> None:
    with pytest.raises(affinity.CpuAffinityError) as info:
        affinity.plan([1, 7], 1, usable=[0, 1])
    text = str(info.value)
    assert "cpu_affinity: CPU 7 is not usable here (got [1, 7])" in text
    assert "usable: 0, 1" in text
    assert isinstance(info.value, OrderError)  # reported by every command as an invalid order


def test_the_most_idle_cpu_ranks_first() -> None:
    samples = iter([{0: 100, 1: 100, 2: 100}, {0: 104, 1: 100, 2: 110}])
    order = affinity.rank_by_idleness(
        [0, 1, 2], read_ticks=lambda: next(samples), sleep=lambda _s: None
    )
    assert order == [2, 0, 1]


def test_idle_ticks_reads_every_cpu() -> None:
    ticks = affinity.idle_ticks()
    if not os.path.exists("/proc/stat"):
        assert ticks == {}
        return
    assert set(affinity.usable_cpus()) <= set(ticks)


def test_order_validates_cpu_affinity() -> None:
    assert load_order(EXAMPLE_ORDER).cpu_affinity == "auto"
    assert load_order(EXAMPLE_ORDER, ["cpu_affinity=[0]"]).cpu_affinity == [0]
    for bad, words in (("[]", "empty CPU list"), ("[-1]", "integers from 0"), ("one", "auto")):
        with pytest.raises(OrderError) as info:
            load_order(EXAMPLE_ORDER, [f"cpu_affinity={bad}"])
        assert "cpu_affinity" in str(info.value) and words in str(info.value)


@needs_two_cpus
def test_pin_process_pins_threads_started_before_and_after() -> None:
    target = max(os.sched_getaffinity(0))
    script = textwrap.dedent(
        f"""
        import json, os, threading
        from crawler.control import affinity
        stop = threading.Event()
        before = threading.Thread(target=stop.wait)
        before.start()
        affinity.pin_process([{target}])
        after = threading.Thread(target=stop.wait)
        after.start()
        masks = {{t: sorted(os.sched_getaffinity(int(t))) for t in os.listdir("/proc/self/task")}}
        stop.set()
        print(json.dumps(masks))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=30
    )
    masks = json.loads(done.stdout)
    assert len(masks) >= 3
    assert all(mask == [target] for mask in masks.values())


@pytest.mark.e2e
def test_crawler_run_refuses_cpus_it_cannot_use(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "crawler", "run", str(EXAMPLE_ORDER), "--run-dir", str(run_dir),
         "--set", "cpu_affinity=[4096]"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "cpu_affinity: CPU 4096 is not usable" in done.stderr
    assert not run_dir.exists()
