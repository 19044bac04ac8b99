"""``crawler status RUN_DIR [--json]``: state, counts, rates and errors of a crawl; for a
scheduled job, its next run. A single-process run's status is read from its files
(:func:`crawler.cli.operations.cmd_status`), a distributed run's from Redis
(:func:`crawler.distributed.cmd_status`). Exit codes: :class:`~crawler.exit_code.ExitCode`.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from crawler.cli.arguments import add_run_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``crawler status``'s arguments."""
    add_run_dir(parser)
    parser.add_argument("--json", action="store_true", help="print status.json (for scripts)")


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Print the crawl's status."""
    from crawler.cli.run_dirs import is_distributed, resolve_run_dir

    run_dir = resolve_run_dir(args.run_dir)
    if is_distributed(run_dir):  # status of every worker, through Redis
        from crawler import distributed

        return distributed.cmd_status(run_dir, args.json, out, err)
    from crawler.cli import operations

    return operations.cmd_status(args.run_dir, args.json, out, err)
