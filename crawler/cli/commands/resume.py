"""``crawler resume RUN_DIR``: continue a crawl from its saved ``state/`` after a stop or a
crash (even ``kill -9``). A job directory stands for its latest run. Exit codes:
:class:`~crawler.exit_code.ExitCode` (2 for a directory that is no crawl's run directory).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from crawler.cli.arguments import add_no_display, add_run_dir, add_sets
from crawler.exit_code import ExitCode


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``crawler resume``'s arguments."""
    add_run_dir(parser)
    add_sets(parser)
    add_no_display(parser)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Resume the crawl the arguments name."""
    return resume(args.run_dir, args.sets, out, err, args.no_display)


def resume(
    run_dir: Path, sets: Sequence[str], out: TextIO, err: TextIO, no_display: bool = False
) -> int:
    """Continue the crawl in ``run_dir`` from its saved state; prints the run directory first."""
    from crawler.cli.crawl_runner import crawl_display, run_controller
    from crawler.cli.run_dirs import resolve_run_dir
    from crawler.control import affinity
    from crawler.control.controller import CrawlController
    from crawler.order.errors import OrderError
    from crawler.order.loader import load_order

    run_dir = resolve_run_dir(run_dir)  # a job directory: its latest run
    effective = run_dir / "order.effective.yaml"
    if not (run_dir / "state").is_dir() or not effective.is_file():
        print(
            f"{run_dir} is not a crawl's run directory (no state/ or order.effective.yaml)",
            file=err,
        )
        return ExitCode.USAGE
    try:
        order = load_order(effective, sets)
        affinity.apply(order.cpu_affinity)
    except OrderError as error:
        print(str(error), file=err)
        return ExitCode.USAGE
    print(run_dir, file=out, flush=True)
    display = crawl_display(order, no_display, out)
    return run_controller(
        lambda: CrawlController(order, run_dir, resume=True, display=display), run_dir, out, err
    )
