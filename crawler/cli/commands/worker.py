"""``crawler worker ORDER --redis URL``: join a running Redis-backed crawl from this machine
(:func:`crawler.distributed.worker.worker_main`); also what ``crawler run --workers`` starts.
Exit codes: :class:`~crawler.exit_code.ExitCode`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from crawler.cli.arguments import add_metrics_port, add_sets, metrics_sets


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``crawler worker``'s arguments."""
    parser.add_argument("order", type=Path, help="the crawl's order.yaml (same name as the crawl)")
    parser.add_argument("--redis", required=True, metavar="URL", help="the crawl's Redis URL")
    add_sets(parser)
    add_metrics_port(parser)
    parser.add_argument("--run-dir", type=Path, help="this worker's run directory")
    parser.add_argument("--worker-id", help="name in leases and file names (default host-pid)")
    parser.add_argument(
        "--crawl-id",
        type=int,
        metavar="N",
        help="join only crawl N of the order's name (`crawler run --workers` prints its id)",
    )


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Crawl as a worker until the shared frontier is empty."""
    from crawler.distributed.worker import worker_main

    return worker_main(
        args.order,
        args.redis,
        [*args.sets, *metrics_sets(args.metrics_port)],
        out,
        err,
        worker_id=args.worker_id,
        run_dir=args.run_dir,
        crawl_id=args.crawl_id,
    )
