"""``crawler validate ORDER``: every check ``crawler run`` makes, then the effective order or
every error at once (:func:`crawler.order.preflight.validate_main`). Exit codes:
:class:`~crawler.exit_code.ExitCode`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from crawler.cli.arguments import add_sets


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``crawler validate``'s arguments."""
    parser.add_argument("order", type=Path)
    add_sets(parser)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Check the order; print it or its errors."""
    from crawler.order.preflight import validate_main

    return validate_main(args.order, args.sets, out, err)
