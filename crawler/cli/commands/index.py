"""``crawler index RUN_DIR [--force]``: write the CDXJ index of every WARC not yet indexed
(:func:`crawler.archive.run_index.cmd_index`). Exit codes: :class:`~crawler.exit_code.ExitCode`.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from crawler.cli.arguments import add_run_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``crawler index``'s arguments."""
    add_run_dir(parser)
    parser.add_argument("--force", action="store_true", help="re-index WARCs already indexed")


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Index the run's WARCs."""
    from crawler.archive.run_index import cmd_index
    from crawler.cli.run_dirs import resolve_run_dir

    return cmd_index(resolve_run_dir(args.run_dir), args.force, out, err)
