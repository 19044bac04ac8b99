"""Errors as JSON: ``{"status": <code>, "message": "...", "issues": [...]}`` for every failure
of the API (unknown job or run, bad names, invalid bodies, invalid orders, a crawl that is not
running), registered on the app by :func:`install_error_handlers`."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from crawler.console.workspace import BadNameError, NotFoundError
from crawler.crawler_error import CrawlerError

_log = logging.getLogger("crawler.console")


class ApiError(CrawlerError):
    """An error with its HTTP status, message and optional details."""

    def __init__(self, status: int, message: str, issues: list[dict[str, Any]] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.issues = issues


def error_response(
    status: int, message: str, issues: list[dict[str, Any]] | None = None
) -> JSONResponse:
    body: dict[str, Any] = {"status": status, "message": message}
    if issues is not None:
        body["issues"] = issues
    return JSONResponse(body, status_code=status)


def _field_path(loc: tuple[Any, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def install_error_handlers(app: FastAPI) -> None:
    """Turn every exception the handlers raise into a JSON error."""

    @app.exception_handler(ApiError)
    async def api_error(_: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.message, exc.issues)

    @app.exception_handler(NotFoundError)
    async def not_found(_: Request, exc: NotFoundError) -> JSONResponse:
        return error_response(404, str(exc))

    @app.exception_handler(BadNameError)
    async def bad_name(_: Request, exc: BadNameError) -> JSONResponse:
        return error_response(400, str(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = exc.detail if isinstance(exc.detail, str) else "error"
        if exc.status_code == 404 and message == "Not Found":
            message = "no such API endpoint"
        return error_response(exc.status_code, message)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        issues = [
            {"path": _field_path(tuple(e.get("loc", ()))), "message": str(e.get("msg", ""))}
            for e in exc.errors()
        ]
        first = issues[0] if issues else {"path": "", "message": "invalid request"}
        return error_response(422, f"invalid request: {first['path']}: {first['message']}", issues)

    @app.exception_handler(Exception)
    async def crashed(_: Request, exc: Exception) -> JSONResponse:
        _log.exception("console_handler_failed")
        return error_response(500, f"internal error: {type(exc).__name__}: {exc}")
