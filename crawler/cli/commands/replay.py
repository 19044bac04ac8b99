"""``crawler replay RUN_DIR|JOB_DIR|FILE.wacz``: serve the captures through pywb on loopback and
print the replay prefix until Ctrl-C (:func:`crawler.archive.replay.cmd_replay`). Exit codes:
:class:`~crawler.exit_code.ExitCode`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``crawler replay``'s arguments."""
    parser.add_argument(
        "source",
        type=Path,
        help="a run directory, a job directory (every finished run) or FILE.wacz",
    )
    parser.add_argument("--bind", default="127.0.0.1:8488", metavar="HOST:PORT")
    parser.add_argument(
        "--include",
        type=Path,
        action="append",
        default=[],
        metavar="RUN_DIR",
        help="also this run's captures (runs its history was imported from, or that its "
        "dedup.collections name, are included)",
    )


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Serve the captures until interrupted."""
    from crawler.archive.job_runs import is_job_dir
    from crawler.archive.replay import cmd_replay
    from crawler.cli.run_dirs import resolve_run_dir

    source = args.source
    if not (source.is_file() or is_job_dir(source)):
        source = resolve_run_dir(source)
    return cmd_replay(source, args.bind, out, err, args.include)
