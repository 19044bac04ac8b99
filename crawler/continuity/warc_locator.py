"""WarcLocator: the WARC file a crawl history entry names, among the directories it may be in.

A history entry keeps a WARC file's *name* (``warc_filename``), not its path: the file is in
this run's ``warcs/``, or, for an entry of an imported earlier crawl, in that crawl's run
directory — its ``warcs/``, a worker's ``workers/<id>/warcs/``, or the WARC writer's
``directory`` its ``order.effective.yaml`` names — or in the run *that* crawl
imported, and so on back (a 304 revisit's entry names the original capture, however many
recrawls ago: :func:`earlier_runs` follows the snapshots' ``IMPORTED-FROM`` files). A file a
``kill -9`` left being written still ends in ``.open``; both names are tried. Pure path
arithmetic plus a few ``stat`` calls per lookup (no listing, so files that appear later are
found): thread-safe.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from crawler.archive.run_layout import warc_dirs
from crawler.history import IMPORT_DIR, IMPORT_SOURCE_FILE

_OPEN = ".open"
_WRITER = "WARCWriterProcessor"
ORDER_FILE = "order.effective.yaml"
_MAX_EARLIER_RUNS = 1000


def run_dir_of_history(history_db: Path) -> Path:
    """The run directory holding the history database ``history_db`` (``RUN/state/history``)."""
    if history_db.parent.name == "state":
        return history_db.parent.parent
    return history_db.parent


def earlier_runs(history_dbs: Iterable[Path]) -> list[Path]:
    """The run directories of the history databases ``history_dbs`` and, breadth first, of the
    databases each of those had imported (read from ``state/history-import/*/IMPORTED-FROM``),
    each once."""
    runs: list[Path] = []
    seen: set[Path] = set()
    queue = list(history_dbs)
    while queue and len(runs) < _MAX_EARLIER_RUNS:
        db = queue.pop(0)
        key = db.resolve()
        if key in seen:
            continue
        seen.add(key)
        runs.append(run_dir_of_history(db))
        for marker in sorted(db.parent.glob(f"{IMPORT_DIR}/*/{IMPORT_SOURCE_FILE}")):
            try:
                queue.append(Path(marker.read_text(encoding="utf-8").strip()))
            except (OSError, UnicodeError):
                continue
    return runs


def writer_directories(run_dir: Path) -> list[Path]:
    """The ``directory`` of each WARC writer in the run's ``order.effective.yaml`` (relative
    ones under ``run_dir``); none if the file is missing or unreadable."""
    import yaml

    try:
        order = yaml.safe_load((run_dir / ORDER_FILE).read_text(encoding="utf-8"))
        chain = order["chains"]["write"]
    except (OSError, UnicodeError, yaml.YAMLError, KeyError, TypeError):
        return []
    found: list[Path] = []
    for item in chain if isinstance(chain, list) else []:
        if not isinstance(item, dict) or not str(item.get("class", "")).endswith(_WRITER):
            continue
        params = item.get("params") or {}
        directory = params.get("directory") if isinstance(params, dict) else None
        if isinstance(directory, str) and directory:
            found.append(run_dir / directory)  # an absolute directory stays itself
    return found


def warc_directories(run_dirs: Iterable[Path]) -> list[Path]:
    """Each run's WARC directories (``warcs/``, every ``workers/*/warcs/``, and the writers'
    directories its own and its workers' ``order.effective.yaml`` name), in order, each once; a
    run's ``warcs/`` is listed even before it exists (this run's, before the first write)."""
    found: list[Path] = []
    for run_dir in run_dirs:
        workers = run_dir / "workers"
        bases = [run_dir, *(sorted(workers.iterdir()) if workers.is_dir() else [])]
        named = [d for base in bases if base.is_dir() for d in writer_directories(base)]
        for directory in [run_dir / "warcs", *(d.warcs for d in warc_dirs(run_dir)), *named]:
            if directory not in found:
                found.append(directory)
    return found


class WarcLocator:
    """Finds WARC files by name in ``directories`` (searched in order)."""

    def __init__(self, directories: Sequence[Path]) -> None:
        self.directories = list(directories)

    def find(self, filename: str) -> Path | None:
        """The file named ``filename`` (or its ``.open`` twin), or None if no directory has it.
        A name with a directory part is refused (history entries hold bare names)."""
        if not filename or Path(filename).name != filename:
            return None
        names = [
            filename,
            filename[: -len(_OPEN)] if filename.endswith(_OPEN) else filename + _OPEN,
        ]
        for directory in self.directories:
            for name in names:
                path = directory / name
                if path.is_file():
                    return path
        return None
