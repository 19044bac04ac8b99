"""Handlers a worker process runs in the worker-pool tests (see test_worker_pool.py): one that
calls back into the parent, one that writes junk where frames go, one that never returns."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, NoReturn

Ask = Callable[[dict[str, Any], bytes], tuple[dict[str, Any], bytes]]


def ask_twice(header: dict[str, Any], body: bytes, ask: Ask) -> tuple[dict[str, Any], bytes]:
    """Ask the parent for two things, answer with both replies joined."""
    first, one = ask({"n": 1}, body)
    second, two = ask({"n": 2}, b"")
    return {"got": [first.get("n"), second.get("n")]}, one + two


def junk(header: dict[str, Any], body: bytes, ask: Ask) -> NoReturn:
    """Write bytes that are no frame to the pipe the answers go to, then hang."""
    os.write(1, b"this is not a frame at all\n" * 4)
    while True:
        os.pause()


def spin(header: dict[str, Any], body: bytes, ask: Ask) -> NoReturn:
    """Loop forever (as a library stuck in a cycle would)."""
    while True:
        pass
