"""``crawler demo``: serve the bundled sample site on 127.0.0.1 and crawl it with the example
job, politeness off, in ``jobs/demo/`` of the current directory. Exit codes:
:class:`~crawler.exit_code.ExitCode` (2 for a bad ``--pages`` or ``--port``, or a port taken).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from crawler.cli.arguments import add_no_display, add_sets
from crawler.exit_code import ExitCode
from crawler.shipped import shipped

DEMO_PORT = 8000
"""The first of the sample site's three ports when ``--port`` is not given."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``crawler demo``'s arguments."""
    parser.add_argument(
        "--port",
        type=int,
        help=f"first of the sample site's 3 ports (default {DEMO_PORT}, or free ones if taken)",
    )
    parser.add_argument("--pages", type=int, default=100, help="pages per host")
    parser.add_argument("--run-dir", type=Path, help="directory for this run")
    add_sets(parser)
    add_no_display(parser)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Serve the sample site and crawl it."""
    return demo(args.port, args.pages, args.run_dir, args.sets, out, err, args.no_display)


def demo(
    port: int | None,
    pages: int,
    run_dir: Path | None,
    sets: Sequence[str],
    out: TextIO,
    err: TextIO,
    no_display: bool = False,
) -> int:
    """Serve the sample site and crawl it with the example job, politeness off. The site is on
    ports ``port`` to ``port + 2`` (exit 2 if one is taken); without ``port``, on 8000-8002,
    else on free ports."""
    from crawler.cli.crawl_runner import os_reason, run_order
    from crawler.demo.sample_site import SampleSite
    from crawler.demo.site_generator import MIN_PAGES_PER_HOST

    if pages < MIN_PAGES_PER_HOST:
        print(f"crawler demo: --pages {pages}: give at least {MIN_PAGES_PER_HOST}", file=err)
        return ExitCode.USAGE
    if port is not None and not 0 <= port <= 65535 - 2:
        print(f"crawler demo: --port {port}: give a port from 1 to 65533 (0: any)", file=err)
        return ExitCode.USAGE
    first = DEMO_PORT if port is None else port
    ports = (0, 0, 0) if first == 0 else (first, first + 1, first + 2)
    try:
        site = SampleSite(ports=ports, pages_per_host=pages)
        urls = site.start()
    except OSError as error:
        taken = f"ports {first}-{first + 2} of 127.0.0.1 are not all free ({os_reason(error)})"
        if port is not None:
            print(f"crawler demo: --port {port}: {taken}", file=err)
            return ExitCode.USAGE
        print(f"{taken}: the sample site takes free ports", file=out)
        site = SampleSite(ports=(0, 0, 0), pages_per_host=pages)
        urls = site.start()
    print(f"sample site: {', '.join(urls)}", file=out, flush=True)
    order = shipped("jobs/example/order.yaml")  # the checkout's, or the installed package's
    overrides = [
        "name=demo",
        f"seeds.urls={urls!r}",
        "seeds.file=null",
        "frontier.politeness.delay_factor=0",
        "frontier.politeness.min_delay_ms=0",
        "frontier.politeness.max_delay_ms=0",
        *sets,
    ]
    try:
        return run_order(
            order, overrides, run_dir, out, err, no_display, job_dir=Path.cwd() / "jobs" / "demo"
        )
    finally:
        site.stop()
