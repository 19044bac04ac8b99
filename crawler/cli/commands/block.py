"""``crawler block RUN_DIR REGEX``: queued URIs matching REGEX end -5001, new ones are refused
(:func:`crawler.cli.operations.cmd_block`). Exit codes: :class:`~crawler.exit_code.ExitCode`.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from crawler.cli.arguments import add_run_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``crawler block``'s arguments."""
    add_run_dir(parser)
    parser.add_argument("regex", help="Python regular expression, searched anywhere in the URI")
    parser.add_argument("--wait-s", type=float, default=10.0)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Send the block rule; wait until the crawl took it in."""
    from crawler.cli import operations

    return operations.cmd_block(args.run_dir, args.regex, args.wait_s, out, err)
