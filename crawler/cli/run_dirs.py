"""What the CLI tells from a path it is given, without importing the crawl's modules.

* :func:`resolve_run_dir`: a run directory, or a job directory standing for its latest run;
* :func:`is_distributed`: whether a run directory is a multi-worker crawl's (its
  ``distributed.json``, :mod:`crawler.distributed.run_info`), told without importing
  :mod:`crawler.distributed` (which imports the controller and redis).

Reads the file system only; thread-safe.
"""

from __future__ import annotations

from pathlib import Path

_DISTRIBUTED_FILE = "distributed.json"
""":data:`crawler.distributed.run_info.DISTRIBUTED_FILE`, named here so that telling a
distributed run does not import :mod:`crawler.distributed`."""


def resolve_run_dir(path: Path) -> Path:
    """``path`` itself if it is a run directory, else its ``latest`` run (a job directory)."""
    if (path / "status.json").exists() or (path / "logs").is_dir():
        return path
    latest = path / "latest"
    return latest.resolve() if latest.exists() else path


def is_distributed(run_dir: Path) -> bool:
    """Whether ``run_dir`` is the run directory of a crawl run by ``crawler run --workers``."""
    return (run_dir / _DISTRIBUTED_FILE).is_file()
