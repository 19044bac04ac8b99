"""``crawler wacz RUN_DIR -o FILE.wacz``: package a run's WARCs, indexes and pages as a WACZ
file; ``--runs all`` packages every finished run of a job directory
(:class:`crawler.archive.wacz.WaczPackager`). Exit codes: :class:`~crawler.exit_code.ExitCode`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from crawler.cli.arguments import add_run_dir
from crawler.exit_code import ExitCode


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``crawler wacz``'s arguments."""
    add_run_dir(parser)
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="FILE.wacz")
    parser.add_argument(
        "--runs",
        choices=("latest", "all"),
        default=None,
        help="of a job directory: its latest run (default) or every finished run in one package",
    )


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Write the package."""
    from crawler.cli.run_dirs import resolve_run_dir

    source = args.run_dir if args.runs == "all" else resolve_run_dir(args.run_dir)
    return package(source, args.output, out, err, args.runs)


def package(source: Path, target: Path, out: TextIO, err: TextIO, runs: str | None = None) -> int:
    """Package the run ``source``, or with ``runs="all"`` every finished run of the job
    directory ``source`` (the runs left out are named on ``err``), as ``target``: OK written,
    FAILED written but a WARC was damaged, USAGE nothing to package or bad usage."""
    from crawler.archive.job_runs import job_runs
    from crawler.archive.wacz import NothingToPackageError, WaczPackager

    packager: WaczPackager
    if runs == "all":
        if not (source / "runs").is_dir():
            print(f"{source}: --runs all needs a job directory (one with runs/)", file=err)
            return ExitCode.USAGE
        found = job_runs(source)
        for earlier in found:
            if not earlier.finished:
                print(f"warning: left out {earlier.describe()}", file=err)
        done = [r.path for r in found if r.finished]
        if not done:
            print(f"{source}: no finished run to package", file=err)
            return ExitCode.USAGE
        packager = WaczPackager(done, title=source.resolve().name)
    else:
        packager = WaczPackager(source)
    try:
        summary = packager.write(target)
    except NothingToPackageError as error:
        print(str(error), file=err)
        return ExitCode.USAGE
    except OSError as error:
        print(f"cannot write {target}: {error}", file=err)
        return ExitCode.FAILED
    for line in summary.problems:
        print(f"warning: {line}", file=err)
    of_runs = f" of {len(packager.runs)} runs" if len(packager.runs) > 1 else ""
    print(
        f"{target}: {summary.warcs} WARC file(s){of_runs}, {summary.records} index line(s), "
        f"{summary.pages} page(s), {summary.bytes} bytes",
        file=out,
    )
    return ExitCode.FAILED if summary.problems else ExitCode.OK
