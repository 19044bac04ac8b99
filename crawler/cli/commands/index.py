"""``crawler index RUN_DIR [--force]``: write the CDXJ index of every WARC not yet indexed
(:func:`crawler.archive.run_index.index_run`), and name damaged WARCs and indexes whose WARC is
gone on stderr. Exit codes: :class:`~crawler.exit_code.ExitCode`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from crawler.cli.arguments import add_run_dir
from crawler.exit_code import ExitCode


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``crawler index``'s arguments."""
    add_run_dir(parser)
    parser.add_argument("--force", action="store_true", help="re-index WARCs already indexed")


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Index the run's WARCs."""
    from crawler.cli.run_dirs import resolve_run_dir

    return index_warcs(resolve_run_dir(args.run_dir), args.force, out, err)


def index_warcs(run_dir: Path, force: bool, out: TextIO, err: TextIO) -> int:
    """Index the WARCs of ``run_dir``: OK all indexed, FAILED some WARC damaged or index
    orphaned, USAGE no WARCs."""
    from crawler.archive.run_index import index_run
    from crawler.archive.run_layout import warc_dirs

    if not warc_dirs(run_dir):
        print(f"{run_dir}: no warcs/ directory here (nor under workers/*/): no WARCs", file=err)
        return ExitCode.USAGE
    report = index_run(run_dir, force=force)
    records = sum(r.records for r in report.indexed)
    print(
        f"indexed {len(report.indexed)} WARC file(s), {records} record(s); "
        f"{len(report.up_to_date)} index(es) already up to date",
        file=out,
    )
    for wdir in warc_dirs(run_dir):
        print(f"indexes: {wdir.indexes}", file=out)
    for line in report.problems:
        print(line, file=err)
    return ExitCode.FAILED if report.problems else ExitCode.OK
