"""``crawler report RUN_DIR [--plot]``: write ``reports/`` now (also while the crawl runs) and
print the crawl report (:func:`crawler.cli.operations.cmd_report`); of a distributed run, the
crawl-wide reports over every worker, ``--include`` adding workers' directories copied from other
machines (:func:`crawler.distributed.cmd_report`). Exit codes:
:class:`~crawler.exit_code.ExitCode`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from crawler.cli.arguments import add_run_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``crawler report``'s arguments."""
    add_run_dir(parser)
    parser.add_argument("--plot", action="store_true", help="also write reports/progress.png")
    parser.add_argument("--wait-s", type=float, default=30.0)
    parser.add_argument(
        "--include",
        type=Path,
        nargs="+",
        default=[],
        metavar="DIR",
        help="distributed crawl: also the run directories of workers that ran elsewhere",
    )


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Write the reports; print the crawl report."""
    from crawler.cli.run_dirs import is_distributed, resolve_run_dir

    run_dir = resolve_run_dir(args.run_dir)
    if is_distributed(run_dir):  # reports over every worker
        from crawler import distributed

        return distributed.cmd_report(run_dir, args.include, out, err)
    from crawler.cli import operations

    return operations.cmd_report(args.run_dir, args.plot, args.wait_s, out, err)
