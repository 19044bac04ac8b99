"""``crawler run ORDER``: run a crawl from a YAML crawl order, in this process or, with
``--workers N``, as N worker processes sharing the order's Redis frontier
(:func:`crawler.distributed.run_workers`).

Given a URL where the order belongs, it says that ``crawler crawl`` takes URLs (exit 2) instead
of failing to read a file named ``http:/host``. Exit codes: :class:`~crawler.exit_code.ExitCode`.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import TextIO

from crawler.cli.arguments import add_metrics_port, add_no_display, add_sets, metrics_sets
from crawler.exit_code import ExitCode


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``crawler run``'s arguments."""
    parser.add_argument("order", type=Path, help="the job's order.yaml")
    add_sets(parser, "override a dotted key with a YAML value, e.g. --set toe_threads=50")
    parser.add_argument(
        "--run-dir",
        type=Path,
        help="directory for this run (default: <job dir>/runs/<UTC stamp>/)",
    )
    add_no_display(parser)
    add_metrics_port(parser)
    parser.add_argument(
        "--console", action="store_true", help="also serve the web console while crawling"
    )
    parser.add_argument("--console-bind", default="127.0.0.1:8443", metavar="HOST:PORT")
    parser.add_argument(
        "--workers",
        type=int,
        default=0,
        metavar="N",
        help="run N worker processes sharing the order's Redis frontier (frontier.store: "
        "crawler.frontier.RedisQueueStore); others may join with `crawler worker`",
    )


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run the crawl the arguments name; its exit code."""
    url = url_instead_of_order(args.order)
    if url is not None:
        print(
            f"crawler run takes a crawl order (a YAML file), not the URL {url}; to crawl a URL "
            f"with the default order: crawler crawl {url} --contact "
            "https://example.org/about-my-crawler",
            file=err,
        )
        return ExitCode.USAGE
    sets = [*args.sets, *metrics_sets(args.metrics_port)]
    if args.workers:
        from crawler.distributed import run_workers

        return run_workers(args.order, sets, args.workers, out, err, run_dir=args.run_dir)
    from crawler.cli.crawl_runner import run_order

    console = args.console_bind if args.console else None
    return run_order(args.order, sets, args.run_dir, out, err, args.no_display, console)


def url_instead_of_order(order: Path) -> str | None:
    """The URL ``crawler run`` was given where an order file belongs, or None. (argparse's
    ``Path`` folds ``http://host/`` into ``http:/host``: the ``//`` is put back.)"""
    text = str(order)
    if order.exists() or not re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:/", text):
        return None
    scheme, _, rest = text.partition(":")
    return f"{scheme}://{rest.lstrip('/')}"
