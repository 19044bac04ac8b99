"""``crawler wacz RUN_DIR -o FILE.wacz``: package a run's WARCs, indexes and pages as a WACZ
file; ``--runs all`` packages every finished run of a job directory
(:func:`crawler.archive.wacz.cmd_wacz`). Exit codes: :class:`~crawler.exit_code.ExitCode`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from crawler.cli.arguments import add_run_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``crawler wacz``'s arguments."""
    add_run_dir(parser)
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="FILE.wacz")
    parser.add_argument(
        "--runs",
        choices=("latest", "all"),
        default=None,
        help="of a job directory: its latest run (default) or every finished run in one package",
    )


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Write the package."""
    from crawler.archive.wacz import cmd_wacz
    from crawler.cli.run_dirs import resolve_run_dir

    source = args.run_dir if args.runs == "all" else resolve_run_dir(args.run_dir)
    return cmd_wacz(source, args.output, out, err, args.runs)
