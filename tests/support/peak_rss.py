"""Run a command and measure its own peak resident set size, free of the caller's.

On Linux, a child started from a large process reports that process's resident size as its
``ru_maxrss``: ``subprocess`` starts children with ``vfork``, and ``exec`` records the address
space it leaves (the caller's) in the child's high-water mark. A pytest worker that has run a
few hundred tests is 300-500 MB, so ``os.wait4`` on a crawl it started says "444 MB" for a crawl
that never passed 100. :func:`run_with_peak_rss` puts a small launcher process in between: the
command starts from the launcher's few MiB, so the figure is the command's own peak (or the
launcher's, whichever is larger). Thread-safe (no shared state).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

_LAUNCHER = """
import json, os, subprocess, sys
proc = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(proc.pid, 0)
with open(sys.argv[1], "w") as out:
    json.dump({"maxrss_kib": usage.ru_maxrss}, out)
sys.exit(os.waitstatus_to_exitcode(status))
"""


@dataclass(frozen=True)
class MeasuredRun:
    """What :func:`run_with_peak_rss` saw: exit code, stdout+stderr, the command's peak RSS."""

    returncode: int
    output: bytes
    peak_rss_mb: float


def run_with_peak_rss(args: list[str], *, cwd: Path, timeout_s: float) -> MeasuredRun:
    """Run ``args`` to its end (stderr merged into stdout) and return its own peak RSS in MB.

    Raises ``subprocess.TimeoutExpired`` after ``timeout_s`` (the launcher and the command are
    killed first: they run in a session of their own).
    """
    with tempfile.TemporaryDirectory(prefix="peak-rss-") as tmp:
        report = Path(tmp) / "rusage.json"
        with subprocess.Popen(
            [sys.executable, "-c", _LAUNCHER, str(report), *args],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        ) as launcher:
            try:
                output, _ = launcher.communicate(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(launcher.pid, signal.SIGKILL)
                launcher.communicate()
                raise
        if not report.exists():  # the launcher itself failed
            raise RuntimeError(f"no peak RSS measured: {output.decode(errors='replace')[-2000:]}")
        maxrss_kib = json.loads(report.read_text())["maxrss_kib"]
    return MeasuredRun(launcher.returncode, output, maxrss_kib / 1024)  # KiB on Linux
