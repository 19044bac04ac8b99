"""The loop of one worker process: ``python -m processors.workers.worker_process HANDLER MB``.

``HANDLER`` is ``module:function``, called as ``handler(header, body, ask)`` for each request
frame and returning ``(header, body)``, sent back as the answer frame. ``ask(header, body)``
sends a *call* frame (``{"call": ...}``) to the parent and returns its reply: a handler uses it
to have the crawler do something it must not do itself (fetch a URL through the crawler's
scope, address guard and politeness). The address space is capped at ``MB`` MiB
(``RLIMIT_AS``; 0 = none) so a memory bomb ends the worker, not the machine. A handler that
runs out of memory ends the worker; one that otherwise raises answers
``{"error": "<ExceptionName>: <message>"}`` and the worker carries on.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import resource
import sys
import time
from collections.abc import Callable
from typing import Any

from processors.workers.frames import read_frame_blocking, write_frame

Handler = Callable[
    [dict[str, Any], bytes, Callable[[dict[str, Any], bytes], tuple[dict[str, Any], bytes]]],
    tuple[dict[str, Any], bytes],
]


def load_handler(spec: str) -> Handler:
    """The function ``module:function`` names."""
    module, _, name = spec.partition(":")
    handler: Handler = getattr(importlib.import_module(module), name)
    return handler


def serve(spec: str, max_memory_mb: int) -> None:
    """Answer request frames on stdin until it closes."""
    if max_memory_mb > 0:
        limit = max_memory_mb * 1024 * 1024
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    logging.disable(logging.CRITICAL)  # libraries' warnings about broken input go nowhere
    handler = load_handler(spec)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a library's print() must not corrupt the frames

    def ask(header: dict[str, Any], body: bytes) -> tuple[dict[str, Any], bytes]:
        write_frame(stdout, {"call": header}, body)
        reply = read_frame_blocking(stdin)
        if reply is None:
            raise EOFError("parent went away")
        return reply

    while True:
        request = read_frame_blocking(stdin)
        if request is None:
            return
        header, body = request
        started = time.monotonic()
        try:
            answer, answer_body = handler(header, body, ask)
        except EOFError:
            return
        except MemoryError:
            os._exit(3)  # the cap was reached: the process may be in no state to go on
        except Exception as exc:  # noqa: BLE001 - any failure of the library is an answer
            answer, answer_body = {"error": f"{type(exc).__name__}: {exc}"[:500]}, b""
        del body
        answer["work_ms"] = int((time.monotonic() - started) * 1000)
        write_frame(stdout, answer, answer_body)


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]))
