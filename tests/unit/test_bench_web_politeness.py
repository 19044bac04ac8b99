"""The synthetic-web benchmark's politeness analysis: a host's lateness while its queue stays in
rotation is told apart from its return after the queue ran empty and left rotation."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "web"))

import politeness  # noqa: E402

pytestmark = pytest.mark.timeout(10)

T0 = 1_790_000_000_000  # epoch ms


def line(log_ms: int, uri: str, via: str, start_ms: int, duration_ms: int, hops: str = "L") -> str:
    """One crawl.log line in Heritrix's columns."""

    def iso(ms: int) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"

    start17 = (
        time.strftime("%Y%m%d%H%M%S", time.gmtime(start_ms // 1000)) + f"{start_ms % 1000:03d}"
    )
    return (
        f"{iso(log_ms)} {200:>5} {100:>10} {uri} {hops} {via} text/html #001 "
        f"{start17}+{duration_ms} sha1:X - -\n"
    )


def test_a_return_after_the_queue_ran_empty_is_not_lateness_in_rotation(tmp_path: Path) -> None:
    a, b = "https://a.test", "https://b.test"
    log = tmp_path / "crawl.log"
    log.write_text(
        "".join(
            [
                # a.test: its home page finds /1, fetched 1 s (the delay) + 10 ms after it
                line(T0 + 20, f"{a}/", "-", T0, 10),
                line(T0 + 1_030, f"{a}/1", f"{a}/", T0 + 1_020, 5),
                # b.test's page finds /2 on a.test 5 s after a.test's queue ran empty: a.test
                # comes back 3 s after that (its turn in the inactive FIFO)
                line(T0 + 6_000, f"{b}/", "-", T0 + 5_990, 5),
                line(T0 + 9_010, f"{a}/2", f"{b}/", T0 + 9_000, 5),
            ]
        )
    )
    report = politeness.analyse(log, delay_factor=1.0, min_ms=1000, max_ms=3000)
    kept, back = report["in_rotation"], report["returned"]
    assert (kept["gaps"], kept["lateness_ms_p99"]) == (1, 10)
    assert (back["gaps"], back["lateness_ms_p99"]) == (1, 3_000)
    assert back["lateness_share_p99"] == pytest.approx(3.0)
    # the overall figure still counts both, as before
    assert report["politeness"]["gaps"] == 2
    assert report["politeness"]["lateness_ms_max"] == 3_000


def test_a_return_after_a_rotation_out_is_apart_too(tmp_path: Path) -> None:
    a = "https://a.test:8443"
    log = tmp_path / "crawl.log"
    log.write_text(
        "".join(
            [
                line(T0 + 20, f"{a}/", "-", T0, 10),
                line(T0 + 1_030, f"{a}/1", f"{a}/", T0 + 1_020, 5),
                # due at T0 + 2_025, rotated out at T0 + 2_100, back 4,005 ms after it was due
                line(T0 + 6_040, f"{a}/2", f"{a}/", T0 + 6_030, 5),
                line(T0 + 7_050, f"{a}/3", f"{a}/", T0 + 7_040, 5),
            ]
        )
    )
    events = tmp_path / "crawler.jsonl"
    rotated = {
        "event": "queues_rotated_late",
        "rotated": 1,
        "queues": [["a.test#8443", T0 + 2_100]],
    }
    events.write_text(json.dumps(rotated) + '\n{"event": "something_else"}\n')
    rotations = politeness.rotations_of([events])
    assert rotations == {"a.test": [T0 + 2_100]}
    report = politeness.analyse(log, 1.0, 1000, 3000, rotations)
    assert report["rotated"]["gaps"] == 1
    assert report["rotated"]["lateness_ms_p99"] == 4_005
    assert report["in_rotation"]["gaps"] == 2
    assert report["in_rotation"]["lateness_ms_p99"] == 10
    assert report["returned"]["gaps"] == 0
