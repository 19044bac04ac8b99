"""The console's web application (FastAPI on Starlette): the REST API under ``/api/``, its
OpenAPI document at ``/api/openapi.json``, the login page and the single-page UI (``/`` plus
``/static/``, shipped in the package: the console works offline, nothing comes from a CDN).

:func:`create_app` wires the routers, the JSON error handlers, the token middleware
(:mod:`crawler.console.auth`) and the security headers (a strict Content-Security-Policy: only
our own scripts and styles, no inline code, no framing).
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from urllib.parse import parse_qs

from fastapi import FastAPI, Request, Security
from fastapi.openapi.utils import get_openapi
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.security import HTTPBearer
from fastapi.staticfiles import StaticFiles
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.process_collector import ProcessCollector

from crawler.console.api_archive import archive_router
from crawler.console.api_changes import changes_router
from crawler.console.api_jobs import jobs_router
from crawler.console.api_runs import runs_router
from crawler.console.auth import (
    COOKIE_NAME,
    ASGIApp,
    Message,
    Receive,
    Scope,
    Send,
    TokenAuthMiddleware,
    token_matches,
)
from crawler.console.errors import install_error_handlers
from crawler.console.state import ConsoleState
from crawler.metrics.run_metrics import WorkspaceCollector

STATIC_DIR = Path(str(files("crawler.console") / "static"))
_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
_SECURITY_HEADERS = [
    (b"content-security-policy", _CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
]
_bearer = HTTPBearer(auto_error=False, description="the token printed when the console starts")


class SecurityHeaders:
    """Adds the security headers to every response; API responses are never cached."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        api = str(scope["path"]).startswith("/api/")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", [])) + _SECURITY_HEADERS
                if api:
                    headers.append((b"cache-control", b"no-store"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _login_page(error: str = "") -> HTMLResponse:
    html = (STATIC_DIR / "login.html").read_text(encoding="utf-8")
    message = f'<p class="error" role="alert">{error}</p>' if error else ""
    return HTMLResponse(html.replace("<!--error-->", message), status_code=401 if error else 200)


def _logged_in(token: str) -> RedirectResponse:
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(COOKIE_NAME, token, httponly=True, samesite="strict", path="/")
    return response


def workspace_registry(state: ConsoleState) -> CollectorRegistry:
    """The console's metrics: each job's latest run, and the console process itself."""
    workspace = state.workspace

    def latest_runs() -> Iterator[tuple[str, Path]]:
        for job in workspace.job_names():
            runs = workspace.runs_of(job)
            if runs:
                yield job, runs[0].path

    registry = CollectorRegistry(auto_describe=False)
    registry.register(WorkspaceCollector(latest_runs))
    ProcessCollector(registry=registry)
    return registry


def create_app(state: ConsoleState, token: str) -> ASGIApp:
    """The console application for ``state``, protected by ``token``."""
    app = FastAPI(
        title="crawler console",
        version="1",
        description=(
            "Watch and steer the crawls of a jobs directory. Every call needs the token printed "
            "when the console started: `Authorization: Bearer <token>`. Errors are JSON: "
            '`{"status": 404, "message": "..."}`.'
        ),
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    secret = token
    install_error_handlers(app)
    secured = [Security(_bearer)]
    app.include_router(jobs_router(state), dependencies=secured)
    app.include_router(runs_router(state), dependencies=secured)
    app.include_router(archive_router(state), dependencies=secured)
    app.include_router(changes_router(state), dependencies=secured)

    @app.get("/api/openapi.json", include_in_schema=False)
    def openapi() -> JSONResponse:
        if app.openapi_schema is None:
            app.openapi_schema = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
        return JSONResponse(app.openapi_schema)

    metrics_registry = workspace_registry(state)

    @app.get("/metrics", include_in_schema=False)
    def metrics() -> Response:
        """Prometheus text format: the latest run of every job (crawler.metrics.run_metrics)."""
        return Response(generate_latest(metrics_registry), media_type=CONTENT_TYPE_LATEST)

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", headers={"cache-control": "no-store"})

    @app.get("/login", include_in_schema=False)
    def login_form(token: str = "") -> Response:
        if token:
            return (
                _logged_in(token) if token_matches(token, secret) else _login_page("Wrong token.")
            )
        return _login_page()

    @app.post("/login", include_in_schema=False)
    async def login(request: Request) -> Response:
        form = parse_qs((await request.body())[:4096].decode("utf-8", "replace"))
        given = (form.get("token") or [""])[0].strip()
        if token_matches(given, secret):
            return _logged_in(given)
        return _login_page("Wrong token: use the one printed when the console started.")

    @app.post("/logout", include_in_schema=False)
    def logout() -> Response:
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE_NAME, path="/")
        return response

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    guarded: ASGIApp = TokenAuthMiddleware(app, token)
    return SecurityHeaders(guarded)
