"""``crawler console``: the web console and REST API over a jobs directory, which also runs the
jobs' ``schedule:`` unless ``--no-schedule`` (:func:`crawler.console.server.console_main`).
Exit codes: :class:`~crawler.exit_code.ExitCode`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``crawler console``'s arguments."""
    parser.add_argument("--bind", default="127.0.0.1:8443", metavar="HOST:PORT")
    parser.add_argument("--jobs-dir", type=Path, default=Path("jobs"), metavar="DIR")
    parser.add_argument(
        "--run",
        dest="runs",
        action="append",
        type=Path,
        default=[],
        metavar="RUN_DIR",
        help="also show this run directory",
    )
    parser.add_argument(
        "--no-schedule", action="store_true", help="do not run the jobs' schedule: here"
    )


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Serve the console until interrupted."""
    from crawler.console.server import console_main

    return console_main(args.bind, args.jobs_dir, args.runs, out, err, not args.no_schedule)
