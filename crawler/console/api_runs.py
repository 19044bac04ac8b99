"""REST endpoints about runs: status and tallies, chart series, logs, alerts, reports, and the
steering verbs (pause, unpause, terminate, add seeds, block a regex, change sheets, write
reports) — the same
action files the ``crawler`` commands drop (:mod:`crawler.control.steering`). Nothing here opens a
crawl's state; names of logs and reports are checked against fixed lists (no path from the
request ever reaches the file system)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Annotated, Any

import yaml
from fastapi import APIRouter, Query, status

from crawler.console.errors import ApiError
from crawler.console.launcher import LAUNCH_LOG
from crawler.console.logtail import tail
from crawler.console.models import (
    ActionResult,
    BlockBody,
    FileInfo,
    LogTail,
    ReportText,
    RunSummary,
    SeedsBody,
    SheetsBody,
)
from crawler.console.state import ConsoleState
from crawler.console.workspace import NotFoundError, RunRef, check_name, run_summary
from crawler.control.steering import action_taken, drop_action, valid_regex
from crawler.logs.crawl_logs import LOG_NAMES
from crawler.order.errors import OrderError
from crawler.reports import REPORT_NAMES, write_reports
from crawler.reports.status import is_running, read_status
from crawler.seeds.seed_list import parse_seeds
from crawler.sheets.sheet_updates import check_change, sheets_in_force

LOG_FILES = {
    **{name: f"logs/{name}" for name in (*LOG_NAMES, "alerts.log", "crawler.jsonl")},
    LAUNCH_LOG: LAUNCH_LOG,
}
_EXPECTED = {
    "pause": ("PAUSED",),
    "unpause": ("RUNNING", "STOPPING", "FINISHED"),
    "terminate": ("FINISHED",),
}
_POLL_S = 0.1
MAX_WAIT_S = 30.0

WaitS = Annotated[
    float, Query(ge=0, le=MAX_WAIT_S, description="wait up to this long for the crawl to act")
]


def _state(ref: RunRef, doc: dict[str, Any] | None, state: ConsoleState) -> str:
    launch = state.launcher.get(ref.path)
    if doc is None:
        if launch is not None:
            return "LAUNCHING" if launch.exit_code is None else "FAILED"
        return "UNKNOWN"
    return "DIED" if doc.get("died") else str(doc.get("state", "UNKNOWN"))


def _pending_actions(run_dir: Path) -> int:
    try:
        return sum(
            1 for e in os.scandir(run_dir / "action") if e.is_file() and not e.name.startswith(".")
        )
    except FileNotFoundError:
        return 0


def _wait(run_dir: Path, name: str, states: tuple[str, ...], wait_s: float) -> tuple[bool, Any]:
    deadline = time.monotonic() + wait_s
    taken = False
    while True:
        taken = taken or action_taken(run_dir, name)
        doc = read_status(run_dir)
        state = doc.get("state") if doc else None
        if (taken and (state in states or not is_running(doc))) or time.monotonic() >= deadline:
            return taken, state
        time.sleep(_POLL_S)


def _alerts(run_dir: Path, lines: int) -> list[dict[str, str]]:
    found = tail(run_dir / "logs" / "alerts.log", lines).lines
    alerts = []
    for line in found:
        parts = line.split(" ", 3)
        parts += [""] * (4 - len(parts))
        alerts.append({"time": parts[0], "level": parts[1], "event": parts[2], "details": parts[3]})
    return alerts


def _file_info(path: Path) -> FileInfo | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return FileInfo(name=path.name, size=st.st_size, mtime_s=st.st_mtime)


def runs_router(state: ConsoleState) -> APIRouter:
    """Routes under ``/api/runs``."""
    router = APIRouter(prefix="/api/runs", tags=["runs"])
    ws = state.workspace

    def running_doc(ref: RunRef) -> dict[str, Any]:
        doc = read_status(ref.path)
        if not is_running(doc):
            why = "never started" if doc is None else _state(ref, doc, state).lower()
            raise ApiError(409, f"the crawl of run {ref.id} is not running ({why})")
        assert doc is not None
        return doc

    def control(run_id: str, kind: str, wait_s: float) -> ActionResult:
        ref = ws.run(run_id)
        running_doc(ref)
        name = drop_action(ref.path, kind)
        taken, seen = _wait(ref.path, name, _EXPECTED[kind], wait_s)
        return ActionResult(
            action=name, taken=taken, state=seen, message=f"{kind} requested (action/{name})"
        )

    @router.get("", summary="Every run of every job, newest first")
    def list_runs() -> dict[str, list[RunSummary]]:
        runs = [RunSummary.model_validate(run_summary(r)) for r in ws.all_runs()]
        return {"runs": runs}

    @router.get("/{run_id}", summary="A run's status.json plus response codes and MIME types")
    def get_run(run_id: str) -> dict[str, Any]:
        ref = ws.run(run_id)
        doc = read_status(ref.path)
        monitor = state.monitor(ref.path)
        if doc is not None:
            monitor.observe(doc)
            doc.pop("processors", None)  # bulky; the processors report has it
        discovered = int(doc.get("discovered") or 0) if doc else 0
        queued = int(doc.get("queued") or 0) if doc else 0
        launch = state.launcher.get(ref.path)
        return {
            "id": ref.id,
            "job": ref.job,
            "name": ref.name,
            "path": str(ref.path),
            "state": _state(ref, doc, state),
            "running": is_running(doc),
            "progress": (discovered - queued) / discovered if discovered else None,
            "status": doc,
            "tally": monitor.tally_document(),
            "pending_actions": _pending_actions(ref.path),
            "launch": launch.document() if launch else None,
        }

    @router.get("/{run_id}/series", summary="Chart points (rates, queue size) over time")
    def series(
        run_id: str, since: Annotated[float, Query(ge=0, description="epoch seconds")] = 0.0
    ) -> dict[str, Any]:
        ref = ws.run(run_id)
        monitor = state.monitor(ref.path)
        doc = read_status(ref.path)
        if doc is not None:
            monitor.observe(doc)
        return monitor.series(since)

    @router.get("/{run_id}/logs", summary="The run's logs and their sizes")
    def list_logs(run_id: str) -> dict[str, list[FileInfo]]:
        ref = ws.run(run_id)
        found = (_file_info(ref.path / rel) for rel in LOG_FILES.values())
        return {"logs": [info for info in found if info is not None]}

    @router.get("/{run_id}/logs/{name}", summary="The last lines of a log, optionally filtered")
    def get_log(
        run_id: str,
        name: str,
        lines: Annotated[int, Query(ge=1, le=5000)] = 100,
        filter: Annotated[str, Query(max_length=500)] = "",
        after: Annotated[int | None, Query(ge=0)] = None,
    ) -> LogTail:
        ref = ws.run(run_id)
        rel = LOG_FILES.get(check_name(name, "log"))
        if rel is None:
            raise NotFoundError(f"no log {name!r} (known: {', '.join(LOG_FILES)})")
        found = tail(ref.path / rel, lines, contains=filter, after=after)
        return LogTail(
            name=name, lines=found.lines, end=found.end, size=found.size, truncated=found.truncated
        )

    @router.get("/{run_id}/alerts", summary="The last warnings and errors (logs/alerts.log)")
    def alerts(
        run_id: str, lines: Annotated[int, Query(ge=1, le=1000)] = 50
    ) -> dict[str, list[dict[str, str]]]:
        return {"alerts": _alerts(ws.run(run_id).path, lines)}

    @router.get("/{run_id}/reports", summary="The reports written so far")
    def list_reports(run_id: str) -> dict[str, list[FileInfo]]:
        ref = ws.run(run_id)
        found = (_file_info(ref.path / "reports" / name) for name in REPORT_NAMES)
        return {"reports": [info for info in found if info is not None]}

    @router.get("/{run_id}/reports/{name}", summary="One report's text")
    def get_report(run_id: str, name: str) -> ReportText:
        ref = ws.run(run_id)
        if check_name(name, "report") not in REPORT_NAMES:
            raise NotFoundError(f"no report {name!r} (known: {', '.join(REPORT_NAMES)})")
        path = ref.path / "reports" / name
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
            mtime_s = path.stat().st_mtime
        except FileNotFoundError:
            raise NotFoundError(f"report {name} not written yet: POST .../reports") from None
        return ReportText(name=name, text=text, mtime_s=mtime_s)

    @router.post(
        "/{run_id}/reports",
        summary="Write every report now: by the running crawl, or rebuilt from its logs",
    )
    def write_now(run_id: str, wait_s: WaitS = 0.0) -> ActionResult:
        ref = ws.run(run_id)
        doc = read_status(ref.path)
        if is_running(doc):
            name = drop_action(ref.path, "report")
            taken, seen = _wait(ref.path, name, (str(doc.get("state")) if doc else "",), wait_s)
            return ActionResult(
                action=name, taken=taken, state=seen, message="the crawl was asked for reports"
            )
        if not (ref.path / "logs").is_dir():
            raise ApiError(409, f"run {ref.id} has no logs/ to build reports from")
        from crawler.reports.offline import reports_from_run_dir

        write_reports(ref.path / "reports", reports_from_run_dir(ref.path))
        seen = doc.get("state") if doc else None
        return ActionResult(action="", taken=True, state=seen, message="reports rebuilt from logs")

    for kind, text in (
        ("pause", "Pause: stop fetching; URIs in process finish (state PAUSED)"),
        ("unpause", "Unpause a paused crawl"),
        ("terminate", "End the crawl cleanly: URIs in process finish, reports are written"),
    ):

        def handler(run_id: str, wait_s: WaitS = 0.0, kind: str = kind) -> ActionResult:
            return control(run_id, kind, wait_s)

        router.add_api_route(
            f"/{{run_id}}/{kind}",
            handler,
            methods=["POST"],
            summary=text,
            status_code=status.HTTP_202_ACCEPTED,
            response_model=ActionResult,
            name=kind,
            responses={409: {"description": "the crawl is not running"}},
        )

    @router.post(
        "/{run_id}/seeds",
        status_code=status.HTTP_202_ACCEPTED,
        summary="Add seeds (seed-list syntax); they widen a seeds-as-prefixes scope",
    )
    def add_seeds(run_id: str, body: SeedsBody, wait_s: WaitS = 0.0) -> ActionResult:
        ref = ws.run(run_id)
        doc = running_doc(ref)
        seeds = parse_seeds(body.seeds.splitlines(), "seeds")
        if seeds.problems:
            issues = [{"path": "seeds", "message": p} for p in seeds.problems]
            raise ApiError(422, f"bad seeds: {seeds.problems[0]}", issues)
        if not seeds.uris and not seeds.directives:
            raise ApiError(422, "no seeds given", [{"path": "seeds", "message": "empty"}])
        name = drop_action(ref.path, "seeds", "\n".join(seeds.uris + seeds.directives) + "\n")
        taken, seen = _wait(ref.path, name, (str(doc.get("state")),), wait_s)
        message = f"{len(seeds.uris)} seed(s) sent to the crawl"
        return ActionResult(action=name, taken=taken, state=seen, message=message)

    @router.post(
        "/{run_id}/block",
        status_code=status.HTTP_202_ACCEPTED,
        summary="Block URIs matching a regex: queued ones end -5001, new ones are refused",
    )
    def block(run_id: str, body: BlockBody, wait_s: WaitS = 0.0) -> ActionResult:
        ref = ws.run(run_id)
        problem = valid_regex(body.regex)
        if problem is not None:
            raise ApiError(422, problem, [{"path": "regex", "message": problem}])
        if not (ref.path / "action").is_dir():
            raise ApiError(409, f"run {ref.id} is not a crawl's run directory (no action/)")
        doc = read_status(ref.path)
        name = drop_action(ref.path, "block", body.regex + "\n")
        if not is_running(doc):
            return ActionResult(
                action=name,
                taken=False,
                state=_state(ref, doc, state),
                message="the crawl is not running: the rule applies when it is resumed",
            )
        taken, seen = _wait(ref.path, name, ("RUNNING", "PAUSING", "PAUSED", "STOPPING"), wait_s)
        return ActionResult(action=name, taken=taken, state=seen, message="block rule sent")

    @router.get("/{run_id}/sheets", summary="The sheets in force (per-site overlays)")
    def get_sheets(run_id: str) -> dict[str, Any]:
        ref = ws.run(run_id)
        try:
            sheets, _ = sheets_in_force(ref.path)
        except FileNotFoundError as exc:
            raise ApiError(404, str(exc)) from None
        except OrderError as exc:
            raise ApiError(409, f"the run's sheets cannot be read: {exc}") from None
        return {"sheets": [sheet.model_dump(mode="json") for sheet in sheets]}

    @router.post(
        "/{run_id}/sheets",
        status_code=status.HTTP_202_ACCEPTED,
        summary="Add, replace (by name) or remove sheets while the crawl runs",
    )
    def change_sheets(run_id: str, body: SheetsBody, wait_s: WaitS = 0.0) -> ActionResult:
        ref = ws.run(run_id)
        if not (ref.path / "action").is_dir():
            raise ApiError(409, f"run {ref.id} is not a crawl's run directory (no action/)")
        text = yaml.safe_dump(body.model_dump(mode="json"), sort_keys=False)
        try:
            issues = check_change(ref.path, text, "body")
        except FileNotFoundError as exc:
            raise ApiError(409, str(exc)) from None
        if issues:
            details = [{"path": i.path, "message": str(i)} for i in issues]
            raise ApiError(422, f"invalid sheets: {issues[0]}", details)
        doc = read_status(ref.path)
        name = drop_action(ref.path, "sheets", text)
        if not is_running(doc):
            return ActionResult(
                action=name,
                taken=False,
                state=_state(ref, doc, state),
                message="the crawl is not running: the sheets apply when it is resumed",
            )
        taken, seen = _wait(ref.path, name, ("RUNNING", "PAUSING", "PAUSED", "STOPPING"), wait_s)
        return ActionResult(action=name, taken=taken, state=seen, message="sheets sent")

    return router
