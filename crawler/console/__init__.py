"""The web console and REST API: ``crawler console`` and ``crawler run ORDER --console``.

A FastAPI application (:func:`crawler.console.app.create_app`) that lists the jobs of a jobs
directory and their runs, shows a run live from what it publishes (``status.json``, its logs and
reports — never its LevelDB state), steers it through the action directory like the ``crawler``
commands, and launches a job's order as a detached ``crawler run``. The UI is plain JavaScript
modules and CSS under ``static/``, shipped in the package. Heritrix counterpart: the web UI and
REST API of its engine (``/engine``, ``/engine/job/<name>``).
"""

from crawler.console.app import create_app
from crawler.console.state import ConsoleState
from crawler.console.workspace import Workspace

__all__ = ["ConsoleState", "Workspace", "create_app"]
