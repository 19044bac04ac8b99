"""Arguments several ``crawler`` verbs share, so that each is spelt and explained once.

Imports nothing but :mod:`argparse` and :mod:`pathlib`: any verb module may use it without
slowing start-up. Stateless; thread-safe.
"""

from __future__ import annotations

import argparse
from pathlib import Path

NO_DISPLAY_HELP = "no live display / progress lines on stdout (order key logging.display)"
RUN_DIR_HELP = "the crawl's run directory (or a job directory: its latest run)"


def add_run_dir(parser: argparse.ArgumentParser) -> None:
    """The positional ``run_dir`` of the commands on a crawl's run (or job) directory."""
    parser.add_argument("run_dir", type=Path, help=RUN_DIR_HELP)


def add_sets(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    """``--set KEY=VALUE`` (repeatable) into ``args.sets``: overrides of the order's keys."""
    parser.add_argument(
        "--set", dest="sets", action="append", default=[], metavar="KEY=VALUE", help=help
    )


def add_no_display(parser: argparse.ArgumentParser) -> None:
    """``--no-display``: no live display or progress lines on stdout."""
    parser.add_argument("--no-display", action="store_true", help=NO_DISPLAY_HELP)
