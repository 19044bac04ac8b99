"""``crawler show-processor CLASS``: a processor's summary and parameter table
(:func:`crawler.order.components.show_processor_main`). Exit codes:
:class:`~crawler.exit_code.ExitCode`.
"""

from __future__ import annotations

import argparse
from typing import TextIO


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``crawler show-processor``'s arguments."""
    parser.add_argument("cls", metavar="CLASS", help="dotted path, e.g. processors.fetch.FetchHTTP")


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Print the processor's parameters."""
    from crawler.order.components import show_processor_main

    return show_processor_main(args.cls, out, err)
