"""A run's CDXJ indexes brought up to date (behind ``crawler index RUN_DIR``), and what is wrong.

:func:`index_run` indexes every WARC of the run (``warcs/`` and each worker's) whose index is
missing or older than the WARC, and checks every index names a WARC that still exists. An index
of a ``.open`` file whose closed WARC is now there is superseded and removed. Single-threaded;
safe beside a running crawl (indexes are replaced atomically).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from crawler.archive.indexer import CdxjIndexer, IndexResult
from crawler.archive.run_layout import INDEX_SUFFIX, index_path, warc_dirs


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
