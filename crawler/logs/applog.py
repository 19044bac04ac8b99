"""The structured application log: ``logs/crawler.jsonl``, ``logs/alerts.log`` and the console.

:func:`configure_app_logging` sets structlog up once per process: every event becomes one JSON line
in crawler.jsonl; warnings and above also go to alerts.log; events at or above the console level are
printed to stderr. Writers are guarded by a lock, so loggers may be used from any thread.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any, Protocol

import structlog

from crawler.logs.line_file import LineFile
from crawler.secrets.secret_registry import known as known_secrets
from crawler.secrets.secret_registry import redact

LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40, "critical": 50}
"""Log level names and their numbers (the standard library's)."""
_LEVELS = LEVELS


class EventForwarder(Protocol):
    """Where chosen events go besides the files (webhooks: :mod:`crawler.alerts`). Both methods
    are called from any thread and must not block."""

    def wants(self, level: int, event: str) -> bool:
        """True when the event ``event`` at ``level`` (10 debug ... 50 critical) goes on."""
        ...

    def forward(self, event: Mapping[str, Any]) -> None:
        """Take ``event`` (its keys include ``event``, ``level`` and ``timestamp``)."""
        ...


class _Sink:
    """Writes rendered events to the run's files and the console, and hands the events its
    forwarder wants to it."""

    def __init__(
        self,
        logs_dir: Path | None,
        console_level: int,
        file_level: int,
        forwarder: EventForwarder | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self._forwarder = forwarder
        self.console_level = console_level
        self.file_level = file_level
        # LineFiles: a full disk delays a line (kept in memory), never raises into the caller.
        self._jsonl: LineFile | None = None
        self._alerts: LineFile | None = None
        if logs_dir is not None:
            logs_dir.mkdir(parents=True, exist_ok=True)
            self._jsonl = LineFile(logs_dir / "crawler.jsonl")
            self._alerts = LineFile(logs_dir / "alerts.log")
        self._console = structlog.dev.ConsoleRenderer(colors=False)

    def __call__(
        self, logger: Any, method: str, event: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        level = _LEVELS.get(str(event.get("level", method)), 20)
        if known_secrets():
            for key, value in event.items():
                if isinstance(value, str):
                    event[key] = redact(value)
        if level >= self.file_level and self._jsonl is not None:
            line = json.dumps(event, default=str, ensure_ascii=False)
            with self._lock:
                if self._jsonl is not None:
                    self._jsonl.write(line)
        if level >= 30 and self._alerts is not None:
            details = " ".join(
                f"{k}={v}" for k, v in event.items() if k not in ("event", "level", "timestamp")
            )
            stamp = event.get("timestamp", "")
            level_name = str(event.get("level", method)).upper()
            text = f"{stamp} {level_name} {event.get('event', '')} {details}".rstrip()
            with self._lock:
                if self._alerts is not None:
                    self._alerts.write(text)
        forwarder = self._forwarder
        if forwarder is not None and forwarder.wants(level, str(event.get("event", ""))):
            forwarder.forward(dict(event))
        if level >= self.console_level:
            rendered = self._console(logger, method, dict(event))
            with self._lock:
                print(rendered, file=sys.stderr, flush=True)
        raise structlog.DropEvent

    def flush(self) -> None:
        with self._lock:
            for fh in (self._jsonl, self._alerts):
                if fh is not None:
                    fh.flush()

    def close(self) -> None:
        # Closed outside the lock: a close that waits for disk space logs that it waits.
        with self._lock:
            files = (self._jsonl, self._alerts)
            self._jsonl = self._alerts = None
        for fh in files:
            if fh is not None:
                fh.close()


_current: _Sink | None = None


def configure_app_logging(
    logs_dir: Path | None,
    level: str = "info",
    console: bool = True,
    forwarder: EventForwarder | None = None,
) -> None:
    """(Re)configure structlog for this process; files go to ``logs_dir`` if given, and the
    events ``forwarder`` wants (info ones too, whatever ``level``) to it."""
    global _current
    if _current is not None:
        _current.close()
    file_level = _LEVELS.get(level, 20)
    console_level = file_level if console else 100
    sink = _Sink(logs_dir, max(console_level, 20), file_level, forwarder)
    _current = sink
    lowest = min(file_level, console_level, 20 if forwarder is not None else 100)
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            sink,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(lowest),
        cache_logger_on_first_use=False,
    )


def flush_app_logging() -> None:
    """Write the app-log lines a full disk made wait, where there is room now."""
    if _current is not None:
        _current.flush()


def close_app_logging() -> None:
    """Close the run's log files (the console keeps working)."""
    global _current
    if _current is not None:
        _current.close()
        _current = None


def now_iso() -> str:
    """Current UTC time, ISO-8601 with seconds."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
