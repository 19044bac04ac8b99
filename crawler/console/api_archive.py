"""REST endpoints about a run's archive: how to replay it, and its WACZ packages.

``GET /api/runs/{id}/archive`` tells the ``crawler replay`` command for the run, the replay
prefix while such a server runs (its ``replay.json``, :mod:`crawler.archive.replay`, naming a
live process), the number of CDXJ index files and the ``*.wacz`` files in the run directory.
``GET /api/runs/{id}/wacz/{name}`` streams one of those packages; the name must be one the
listing holds (no path from the request reaches the file system). Token-protected like every
``/api`` route; reads files only.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

from fastapi import APIRouter
from fastapi.responses import FileResponse

from crawler.console.errors import ApiError
from crawler.console.state import ConsoleState

REPLAY_FILE = "replay.json"  # as crawler.archive.replay writes it


def _packages(run_dir: Path) -> list[Path]:
    return sorted(p for p in run_dir.glob("*.wacz") if p.is_file())


def _live_replay(run_dir: Path) -> str | None:
    """The replay prefix of a ``crawler replay`` serving this run now, else None."""
    try:
        doc = json.loads((run_dir / REPLAY_FILE).read_text(encoding="utf-8"))
        pid, prefix = int(doc["pid"]), str(doc["prefix"])
        os.kill(pid, 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return prefix if prefix.startswith("http://") else None


def _index_count(run_dir: Path) -> int:
    dirs = [run_dir / "indexes", *run_dir.glob("workers/*/indexes")]
    return sum(1 for d in dirs if d.is_dir() for p in d.iterdir() if p.name.endswith(".cdxj"))


def archive_router(state: ConsoleState) -> APIRouter:
    """Routes under ``/api/runs/{id}`` about the run's archive."""
    router = APIRouter(prefix="/api/runs", tags=["archive"])
    ws = state.workspace

    @router.get("/{run_id}/archive", summary="The replay command or link, and WACZ packages")
    def archive(run_id: str) -> dict[str, Any]:
        ref = ws.run(run_id)
        return {
            "replay_command": f"crawler replay {shlex.quote(str(ref.path))}",
            "replay_url": _live_replay(ref.path),
            "indexes": _index_count(ref.path),
            "wacz": [
                {
                    "name": p.name,
                    "size": p.stat().st_size,
                    "url": f"/api/runs/{ref.id}/wacz/{p.name}",
                }
                for p in _packages(ref.path)
            ],
        }

    @router.get("/{run_id}/wacz/{name}", summary="Download one of the run's WACZ packages")
    def wacz(run_id: str, name: str) -> FileResponse:
        ref = ws.run(run_id)
        for package in _packages(ref.path):
            if package.name == name:
                return FileResponse(package, media_type="application/wacz", filename=name)
        raise ApiError(404, f"run {ref.id} has no WACZ package named {name!r}")

    return router
