"""Where a run directory keeps its WARCs and their CDXJ indexes.

A run writes WARCs to ``RUN_DIR/warcs/`` and their indexes to ``RUN_DIR/indexes/``; a
``--workers N`` run has the same pair under each ``RUN_DIR/workers/<id>/``. A WARC is any
``*.warc.gz`` / ``*.warc`` file, also one still named ``.open`` (being written, or left so by a
``kill -9``); ``.invalid`` files (a write error) are skipped. Its index is
``indexes/<WARC file name>.cdxj``. Pure path arithmetic and directory listings: thread-safe.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

WARC_SUFFIXES = (".warc.gz", ".warc", ".warc.gz.open", ".warc.open")
INDEX_SUFFIX = ".cdxj"


@dataclass(frozen=True)
class WarcDir:
    """One writer's WARC directory and the directory of its indexes."""

    warcs: Path
    indexes: Path

    def warc_files(self) -> list[Path]:
        """The WARC files here, sorted by name (the writer's names sort by time)."""
        if not self.warcs.is_dir():
            return []
        return sorted(p for p in self.warcs.iterdir() if is_warc(p) and p.is_file())

    def index_files(self) -> list[Path]:
        """The ``*.cdxj`` files here, sorted by name."""
        if not self.indexes.is_dir():
            return []
        return sorted(p for p in self.indexes.iterdir() if p.name.endswith(INDEX_SUFFIX))


def is_warc(path: Path) -> bool:
    """Whether ``path``'s name is a WARC file's (closed or ``.open``)."""
    return path.name.endswith(WARC_SUFFIXES)


def index_path(indexes: Path, warc: Path) -> Path:
    """The index file of ``warc`` in directory ``indexes``."""
    return indexes / (warc.name + INDEX_SUFFIX)


def warc_dirs(run_dir: Path) -> list[WarcDir]:
    """The run's WARC directories: ``warcs/`` and every ``workers/*/warcs/`` that exist."""
    found = []
    bases = [run_dir]
    workers = run_dir / "workers"
    if workers.is_dir():
        bases += sorted(p for p in workers.iterdir() if p.is_dir())
    for base in bases:
        if (base / "warcs").is_dir():
            found.append(WarcDir(base / "warcs", base / "indexes"))
    return found


def all_warcs(run_dir: Path) -> list[Path]:
    """Every WARC file of the run (see :func:`warc_dirs`)."""
    return [warc for d in warc_dirs(run_dir) for warc in d.warc_files()]
