"""What ``crawler pause``, ``unpause`` and ``terminate`` share: their arguments, and steering a
single-process crawl (through its ``action/`` directory, :func:`crawler.cli.operations.cmd_control`)
or a distributed one (through Redis, :func:`crawler.distributed.cmd_control`) alike.

Imports the steering code only when a verb runs. Stateless; thread-safe.
"""

from __future__ import annotations

import argparse
from typing import Literal, TextIO

from crawler.cli.arguments import add_run_dir

ControlKind = Literal["pause", "unpause", "terminate"]


def add_control_arguments(parser: argparse.ArgumentParser) -> None:
    """``RUN_DIR [--wait-s S]``."""
    add_run_dir(parser)
    parser.add_argument("--wait-s", type=float, default=60.0, help="how long to wait for it")


def run_control(kind: ControlKind, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Ask the crawl in ``args.run_dir`` to ``kind``; wait up to ``args.wait_s`` until it did."""
    from crawler.cli.run_dirs import is_distributed, resolve_run_dir

    run_dir = resolve_run_dir(args.run_dir)
    if is_distributed(run_dir):  # workers steered through Redis
        from crawler import distributed

        return distributed.cmd_control(kind, run_dir, args.wait_s, out, err)
    from crawler.cli import operations

    return operations.cmd_control(kind, args.run_dir, args.wait_s, out, err)
