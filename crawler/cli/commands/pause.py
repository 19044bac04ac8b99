"""``crawler pause RUN_DIR``: stop fetching; URIs in process finish (state PAUSED).

Waits up to ``--wait-s`` until the crawl says so (:mod:`crawler.cli.control_verbs`). Exit
codes: :class:`~crawler.exit_code.ExitCode` (1 the crawl is not running or did not answer).
"""

from __future__ import annotations

import argparse
from typing import TextIO

from crawler.cli.control_verbs import add_control_arguments, run_control


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``crawler pause``'s arguments."""
    add_control_arguments(parser)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Ask the crawl to pause; wait until it did."""
    return run_control("pause", args, out, err)
