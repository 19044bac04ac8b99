"""``crawler schedule JOBS_DIR``: run the jobs' ``schedule:`` until interrupted.

:func:`schedule` runs a :class:`~crawler.schedule.background_scheduler.BackgroundScheduler`
over the jobs directory: one scheduler per directory (a ``crawler console`` on it holds the same
lock), its log in ``JOBS_DIR/.scheduler/logs/`` (events also on stderr), each due run launched
as a detached ``crawler run`` (the console's launcher: output in ``RUN/launch.log``). SIGINT or
SIGTERM stop the scheduler; runs it started go on. Exit codes
(:class:`~crawler.exit_code.ExitCode`): 0 stopped, 1 another scheduler holds the lock, 2 no
such jobs directory.
"""

from __future__ import annotations

import argparse
import signal
import threading
from pathlib import Path
from types import FrameType
from typing import TextIO

from crawler.exit_code import ExitCode


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``crawler schedule``'s arguments."""
    parser.add_argument("jobs_dir", type=Path, metavar="JOBS_DIR", help="e.g. jobs/")


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run the jobs' schedules until interrupted."""
    return schedule(args.jobs_dir, out, err)


def schedule(jobs_dir: Path, out: TextIO, err: TextIO) -> int:
    """Run the scheduler over ``jobs_dir`` until SIGINT/SIGTERM."""
    from crawler.console.launcher import Launcher
    from crawler.schedule.background_scheduler import BackgroundScheduler

    if not jobs_dir.is_dir():
        print(f"{jobs_dir}: no such jobs directory (it holds <job>/order.yaml)", file=err)
        return ExitCode.USAGE
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    service = BackgroundScheduler(jobs_dir, Launcher())
    try:
        problem = service.start()
        if problem is not None:
            print(problem, file=err)
            return ExitCode.FAILED
        print(f"scheduling the jobs of {jobs_dir.resolve()}", file=out)
        print(f"log: {service.logs_dir / 'crawler.jsonl'}", file=out, flush=True)
        while not stop.wait(1.0):
            if not service.running:
                print("the scheduler stopped unexpectedly (see its log)", file=err)
                return ExitCode.FAILED
    finally:
        service.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return ExitCode.OK
