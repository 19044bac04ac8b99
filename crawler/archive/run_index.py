"""``crawler index RUN_DIR``: bring a run's CDXJ indexes up to date, and say what is wrong.

:func:`index_run` indexes every WARC of the run (``warcs/`` and each worker's) whose index is
missing or older than the WARC, and checks every index names a WARC that still exists. An index
of a ``.open`` file whose closed WARC is now there is superseded and removed. Single-threaded;
safe beside a running crawl (indexes are replaced atomically).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from crawler.archive.indexer import CdxjIndexer, IndexResult
from crawler.archive.run_layout import INDEX_SUFFIX, index_path, warc_dirs
from crawler.exit_code import ExitCode


@dataclass
class RunIndexReport:
    """What :func:`index_run` did and found."""

    indexed: list[IndexResult] = field(default_factory=list)
    up_to_date: list[Path] = field(default_factory=list)
    orphans: list[Path] = field(default_factory=list)  # indexes whose WARC is gone

    @property
    def problems(self) -> list[str]:
        """One line per damaged WARC or orphaned index."""
        lines = [f"{r.warc}: {r.problem}" for r in self.indexed if r.problem]
        lines += [
            f"{p}: names a WARC that is gone ({p.name[: -len(INDEX_SUFFIX)]})" for p in self.orphans
        ]
        return lines


def index_run(run_dir: Path, *, force: bool = False) -> RunIndexReport:
    """Index the run's WARCs (all of them with ``force``) and find orphaned indexes."""
    report = RunIndexReport()
    indexer = CdxjIndexer()
    for wdir in warc_dirs(run_dir):
        warcs = wdir.warc_files()
        for warc in warcs:
            target = index_path(wdir.indexes, warc)
            if not force and _fresh(target, warc):
                report.up_to_date.append(target)
                continue
            report.indexed.append(indexer.index(warc, wdir.indexes))
        names = {warc.name for warc in warcs}
        for index in wdir.index_files():
            warc_name = index.name[: -len(INDEX_SUFFIX)]
            if warc_name in names:
                continue
            if warc_name.endswith(".open") and warc_name[: -len(".open")] in names:
                index.unlink(missing_ok=True)  # superseded by the closed file's index
                continue
            report.orphans.append(index)
    return report


def _fresh(index: Path, warc: Path) -> bool:
    try:
        return index.stat().st_mtime >= warc.stat().st_mtime
    except OSError:
        return False


def cmd_index(run_dir: Path, force: bool, out: TextIO, err: TextIO) -> int:
    """``crawler index``: 0 all indexed, 1 some WARC damaged or index orphaned, 2 no WARCs."""
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
