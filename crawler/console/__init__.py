"""The web console and REST API: ``crawler console`` and ``crawler run ORDER --console``.

A FastAPI application (:func:`crawler.console.app.create_app`) that lists the jobs of a jobs
directory and their runs, shows a run live from what it publishes (``status.json``, its logs and
reports — never its LevelDB state), steers it through the action directory like the ``crawler``
commands, and launches a job's order as a detached ``crawler run``. The UI is plain JavaScript
modules and CSS under ``static/``, shipped in the package. Heritrix counterpart: the web UI and
REST API of its engine (``/engine``, ``/engine/job/<name>``).

The names below are imported on first use: ``crawler run --console`` imports
:mod:`crawler.console.server` only to start the console in a process of its own, and must not pay
for FastAPI's import in the crawl's process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawler.lazy_names import lazy_names

if TYPE_CHECKING:
    from crawler.console.app import create_app
    from crawler.console.state import ConsoleState
    from crawler.console.workspace import Workspace

__all__ = ["ConsoleState", "Workspace", "create_app"]

_HOMES = {
    "ConsoleState": "crawler.console.state",
    "Workspace": "crawler.console.workspace",
    "create_app": "crawler.console.app",
}
"""Public name → the module defining it."""

if not TYPE_CHECKING:
    # Hidden from mypy: a visible module __getattr__ would type every misspelt name as Any.
    __getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
