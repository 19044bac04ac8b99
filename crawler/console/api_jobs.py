"""REST endpoints about jobs: list them with their runs, show one, validate its order with
overrides, launch it. Launching validates first and answers 422 with every issue by YAML path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from fastapi import APIRouter, status

from crawler.console.errors import ApiError
from crawler.console.launcher import issue_document, validate_launch
from crawler.console.models import LaunchBody, LaunchResult, ValidationResult
from crawler.console.state import ConsoleState
from crawler.console.workspace import ORDER_FILE, run_summary
from crawler.order.bounded_loader import load_yaml
from crawler.schedule.schedule_state import JobScheduleState
from crawler.secrets.secret_refs import clear_secret_values
from crawler.secrets.secret_registry import MARK, redact

MAX_ORDER_CHARS = 200_000


def _description(state: ConsoleState, job: str) -> str | None:
    try:
        path = state.workspace.job_dir(job) / ORDER_FILE
        data = load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError, LookupError):
        return None
    value = data.get("description") if isinstance(data, dict) else None
    return str(value) if value is not None else None


def _job(state: ConsoleState, job: str) -> dict[str, Any]:
    ws = state.workspace
    has_order = (ws.jobs_dir / job / ORDER_FILE).is_file()
    return {
        "name": job,
        "has_order": has_order,
        "description": _description(state, job) if has_order else None,
        "runs": [run_summary(ref) for ref in ws.runs_of(job)],
        "schedule": _schedule(ws.jobs_dir / job),
    }


def _schedule(job_dir: Path) -> dict[str, Any] | None:
    """The job's schedule as the scheduler last saved it (None: the job is not scheduled)."""
    saved = JobScheduleState.load(job_dir)
    return saved.summary() if saved is not None and saved.expression else None


def jobs_router(state: ConsoleState) -> APIRouter:
    """Routes under ``/api/jobs``."""
    router = APIRouter(prefix="/api/jobs", tags=["jobs"])

    @router.get("", summary="Every job under the jobs directory, with its runs (newest first)")
    def list_jobs() -> dict[str, Any]:
        ws = state.workspace
        return {"jobs_dir": str(ws.jobs_dir), "jobs": [_job(state, j) for j in ws.job_names()]}

    @router.get("/{job}", summary="One job: its order's text and its runs")
    def get_job(job: str) -> dict[str, Any]:
        doc = _job(state, job)
        text = None
        if doc["has_order"]:
            path = state.workspace.order_path(job)
            text = shown_order_text(path.read_text(encoding="utf-8", errors="replace"))
        return {**doc, "order_text": text}

    @router.post(
        "/{job}/validate", summary="Validate the job's order with overrides (like `validate`)"
    )
    def validate(job: str, body: LaunchBody) -> ValidationResult:
        issues, warnings = validate_launch(state.workspace.order_path(job), body.sets)
        return ValidationResult.model_validate(
            {
                "valid": not issues,
                "issues": [issue_document(i) for i in issues],
                "warnings": warnings,
            }
        )

    @router.post(
        "/{job}/launch",
        status_code=status.HTTP_201_CREATED,
        summary="Validate, then start `crawler run` on the job's order in a new run directory",
        responses={422: {"description": "the order is invalid: every issue by YAML path"}},
    )
    def launch(job: str, body: LaunchBody) -> LaunchResult:
        ws = state.workspace
        order_path = ws.order_path(job)
        issues, warnings = validate_launch(order_path, body.sets)
        if issues:
            count = len(issues)
            raise ApiError(
                422,
                f"invalid crawl order: {count} error{'s' if count != 1 else ''}",
                [issue_document(i) for i in issues],
            )
        started = state.launcher.launch(order_path, ws.job_dir(job), body.sets)
        ref = ws.run(f"{job}~{started.run_dir.name}")
        summary = {**run_summary(ref), "state": "LAUNCHING"}
        return LaunchResult.model_validate(
            {"run": summary, "pid": started.pid, "warnings": warnings}
        )

    return router


def shown_order_text(text: str) -> str:
    """An order file's text as the console shows it: passwords and tokens written in clear are
    ``[redacted]`` (references such as ``${ENV:NAME}`` stay), cut at ``MAX_ORDER_CHARS``."""
    try:
        data = load_yaml(text)
    except Exception:  # noqa: BLE001 - a broken file is shown as it is (validate says why)
        data = None
    for value in sorted(clear_secret_values(data), key=len, reverse=True):
        if len(value) >= 3:
            text = text.replace(value, MARK)
    return redact(text)[:MAX_ORDER_CHARS]
