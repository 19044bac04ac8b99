"""A crawl in a child process, as the resume tests drive it: ``python -m crawler`` started,
its crawl.log read while it writes it, ``kill -9`` once it logged enough; and waiting for a
condition with a deadline.

:func:`start_crawler` runs the CLI with unbuffered output, stdout discarded and stderr piped (the
caller reads it or lets it go). Not thread-safe; every call is independent.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from support.crawllog_parser import parse_file

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_ORDER = ROOT / "jobs" / "example" / "order.yaml"
"""The example job's order, which the crawl tests run with ``--set`` overrides."""


def start_crawler(args: list[str]) -> subprocess.Popen[str]:
    """``python -m crawler ARGS`` in a child process (stderr piped, text)."""
    return subprocess.Popen(
        [sys.executable, "-m", "crawler", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def logged(run_dir: Path) -> list[str]:
    """URIs of crawl.log's complete lines (the crawl may be writing the next one right now)."""
    return [line.uri for line in parse_file(run_dir / "logs" / "crawl.log", growing=True)]


def kill_after(
    proc: subprocess.Popen[str], run_dir: Path, lines: int, timeout_s: float = 60.0
) -> bool:
    """SIGKILL ``proc`` once crawl.log has ``lines`` lines; False if it finished first."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        if len(logged(run_dir)) >= lines:
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
            return True
        time.sleep(0.005)
    assert proc.poll() is not None, "the crawl did not progress"
    return False


def wait_until(
    check: Callable[[], object], what: str = "", timeout_s: float = 90.0, poll_s: float = 0.05
) -> None:
    """Return once ``check()`` is true; fail the test after ``timeout_s`` naming ``what``."""
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting until {what or check}"
        time.sleep(poll_s)
