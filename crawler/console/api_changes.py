"""REST endpoints about a recrawl's change report (:mod:`crawler.continuity.change_report`).

``GET /api/runs/{id}/changes?limit=N`` gives the run's change report — the earlier crawl, the
counts of new, changed, unchanged and gone URIs overall and per host, and the first ``N`` URIs
of each list (``report`` is null when the run has none: a first crawl, or one still running).
``GET /api/runs/{id}/changes/{name}`` downloads ``changes-report.txt`` or
``changes-report.json`` whole. Token-protected like every ``/api`` route; reads files only.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import FileResponse

from crawler.console.errors import ApiError
from crawler.console.state import ConsoleState
from crawler.continuity.change_report import (
    CHANGES_JSON,
    CHANGES_TEXT,
    ChangeReportError,
    read_change_report,
)

_MEDIA = {CHANGES_TEXT: "text/plain; charset=utf-8", CHANGES_JSON: "application/json"}


def changes_router(state: ConsoleState) -> APIRouter:
    """Routes under ``/api/runs/{id}/changes``."""
    router = APIRouter(prefix="/api/runs", tags=["changes"])
    ws = state.workspace

    @router.get("/{run_id}/changes", summary="What changed since the earlier crawl")
    def changes(run_id: str, limit: Annotated[int, Query(ge=0, le=10000)] = 100) -> dict[str, Any]:
        ref = ws.run(run_id)
        try:
            doc = read_change_report(ref.path / "reports", limit)
        except ChangeReportError as exc:
            raise ApiError(500, str(exc)) from None
        files = {
            name: f"/api/runs/{ref.id}/changes/{name}"
            for name in _MEDIA
            if (ref.path / "reports" / name).is_file()
        }
        return {"report": doc, "limit": limit, "files": files}

    @router.get("/{run_id}/changes/{name}", summary="Download the whole change report")
    def download(run_id: str, name: str) -> FileResponse:
        ref = ws.run(run_id)
        path = ref.path / "reports" / name
        if name not in _MEDIA or not path.is_file():
            raise ApiError(404, f"run {ref.id} has no change report named {name!r}")
        return FileResponse(path, media_type=_MEDIA[name], filename=name)

    return router
