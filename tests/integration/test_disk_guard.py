"""DiskGuard on real file systems: the threshold, the resume margin, the check interval, and a
run directory whose warcs/ is a symlink to another (small, filling) file system.

Skipped, with the reason, where a tmpfs cannot be mounted (it needs root; CI runs as root).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.processor_context import make_context
from support.small_fs import MIB, Ballast, small_fs

from crawler.disk import DiskGuard, is_disk_full
from processors.write.warc_writer import WARCWriterParams, WARCWriterProcessor

pytestmark = [pytest.mark.integration, pytest.mark.timeout(30)]


@pytest.fixture
def fs(tmp_path: Path) -> Iterator[Path]:
    with small_fs(tmp_path / "fs", 16) as mount:
        yield mount


def guard(paths: list[Path], interval_s: float = 1.0) -> DiskGuard:
    return DiskGuard(paths, min_free_mb=4, resume_margin_mb=2, check_interval_s=interval_s)


def test_pause_below_the_threshold_resume_only_past_the_margin(fs: Path) -> None:
    g = guard([fs], interval_s=0.0)
    ballast = Ballast(fs / "ballast")
    assert g.check(0.0) is None and not g.low
    ballast.fill(leave_bytes=3 * MIB)
    assert g.check(1.0) == "pause" and g.low
    assert g.check(2.0) == "pause"  # each reading while low (an operator may have unpaused)
    ballast.remove()
    Ballast(fs / "ballast2").fill(leave_bytes=5 * MIB)  # above 4, below 4 + 2: still low
    assert g.check(3.0) is None and g.low
    (fs / "ballast2").unlink()
    assert g.check(4.0) == "resume" and not g.low
    assert g.check(5.0) is None
    assert g.pauses == 1
    status = g.status()
    assert status["min_free_mb"] == 4 and status["resume_free_mb"] == 6
    assert status["free_mb"] == pytest.approx(16, abs=0.1)


def test_the_disk_is_read_once_per_interval(fs: Path) -> None:
    g = guard([fs], interval_s=5.0)
    assert g.check(10.0) is None
    Ballast(fs / "ballast").fill(leave_bytes=MIB)
    assert g.check(14.9) is None  # not due yet
    assert g.check(15.0) == "pause"
    assert g.check(15.1, force=True) == "pause"


def test_the_fullest_file_system_counts_even_behind_a_symlink(tmp_path: Path, fs: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "warcs").symlink_to(fs, target_is_directory=True)
    g = guard([run_dir, run_dir / "warcs", run_dir / "state"])  # state/ missing: skipped
    Ballast(fs / "ballast").fill(leave_bytes=MIB)
    assert g.check(0.0) == "pause"
    assert g.last is not None and g.last.path == run_dir / "warcs"
    assert "disk space low on" in g.reason() and "warcs" in g.reason()


def test_a_zero_threshold_turns_the_guard_off(fs: Path) -> None:
    g = DiskGuard([fs], min_free_mb=0, resume_margin_mb=2, check_interval_s=0.0)
    Ballast(fs / "ballast").fill(leave_bytes=0)
    assert not g.enabled
    assert g.check(0.0) is None and g.last is None


def test_full_disk_errors_are_recognised_from_python_and_from_leveldb(fs: Path) -> None:
    Ballast(fs / "ballast").fill(leave_bytes=0)
    with pytest.raises(OSError) as raised:
        (fs / "more").write_bytes(b"x" * 65536)
    assert is_disk_full(raised.value)
    assert is_disk_full(OSError("IO error: /x/000004.log: No space left on device"))
    assert not is_disk_full(OSError("IO error: /x/LOCK: Resource temporarily unavailable"))


def test_a_warc_directory_outside_the_run_directory_is_watched(tmp_path: Path, fs: Path) -> None:
    run_dir = tmp_path / "run"
    g = guard([run_dir])
    ctx = dataclasses.replace(make_context(run_dir), watch_disk=g.watch)
    writer = WARCWriterProcessor("warc", WARCWriterParams(directory=str(fs / "warcs")))
    writer.start(ctx)
    try:
        Ballast(fs / "ballast").fill(leave_bytes=MIB)
        assert g.check(0.0) == "pause"
        assert g.last is not None and g.last.path == fs / "warcs"
    finally:
        writer.stop()
