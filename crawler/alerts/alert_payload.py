"""The JSON body of one alert POSTed to a webhook.

A flat object: ``event``, ``level``, ``timestamp`` (ISO-8601 UTC), ``crawl`` (the order's name),
``run`` (the run directory's name), ``host`` (this machine), ``fields`` (the event's other
key/values, as strings where JSON has no type for them) and ``text``: one readable line, the field
Slack- and Mattermost-style incoming webhooks display. Pure functions: thread-safe.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

_OWN_KEYS = ("event", "level", "timestamp")


def alert_payload(event: Mapping[str, Any], crawl: str, run: str, host: str) -> dict[str, Any]:
    """The body sent for ``event`` (a structlog event dict) of crawl ``crawl``, run ``run``."""
    fields = {k: _plain(v) for k, v in event.items() if k not in _OWN_KEYS}
    fields.pop("crawl", None)
    name = str(event.get("event", ""))
    level = str(event.get("level", "warning"))
    details = " ".join(f"{k}={v}" for k, v in fields.items())
    text = f"[{crawl} {run}] {level.upper()} {name} {details}".rstrip()
    return {
        "event": name,
        "level": level,
        "timestamp": str(event.get("timestamp", "")),
        "crawl": crawl,
        "run": run,
        "host": host,
        "fields": fields,
        "text": text,
    }


def encode(payload: Mapping[str, Any]) -> bytes:
    """``payload`` as UTF-8 JSON."""
    return json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8")


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    return str(value)
