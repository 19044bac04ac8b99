"""``distributed.json``: what marks a run directory as a distributed crawl's, and how to reach it.

Written by :func:`~crawler.distributed.launcher.run_workers` at the top of the run directory
before any worker starts, read by the operator's commands
(:mod:`crawler.distributed.commands`): a JSON object with ``name`` (the crawl order's),
``redis_url``, ``namespace`` (the crawl's key prefix in Redis), ``crawl_id``, ``workers`` (the
ids of the workers started there) and ``host``. :mod:`crawler.cli.run_dirs` tells a distributed
run directory by this file's presence without importing this package.

Plain file I/O; thread-safe as the file system is (written once, then only read).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DISTRIBUTED_FILE = "distributed.json"


def write_distributed_info(run_dir: Path, info: dict[str, Any]) -> None:
    """Write ``run_dir``'s ``distributed.json``."""
    (run_dir / DISTRIBUTED_FILE).write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")


def distributed_info(run_dir: Path) -> dict[str, Any] | None:
    """The ``distributed.json`` of a distributed run directory, or None."""
    path = run_dir / DISTRIBUTED_FILE
    if not path.is_file():
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data
