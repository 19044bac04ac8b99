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


def add_metrics_port(parser: argparse.ArgumentParser) -> None:
    """``--metrics-port N``: serve Prometheus ``/metrics`` (the order key ``metrics.port``)."""
    parser.add_argument(
        "--metrics-port",
        type=int,
        metavar="PORT",
        help="serve Prometheus /metrics on this port of metrics.address (0: any free port; "
        "with --workers N, worker i on PORT+i)",
    )


def metrics_sets(port: int | None) -> list[str]:
    """The ``--set`` that ``--metrics-port`` stands for (none when it is not given)."""
    return [] if port is None else [f"metrics.port={port}"]


def add_no_display(parser: argparse.ArgumentParser) -> None:
    """``--no-display``: no live display or progress lines on stdout."""
    parser.add_argument("--no-display", action="store_true", help=NO_DISPLAY_HELP)
