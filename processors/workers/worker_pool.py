"""WorkerPool: requests answered by worker processes that are killed at a deadline.

A library fed hostile input may loop, recurse or allocate without end inside one call, which
no check in the calling thread can interrupt. So each request goes to a long-lived worker
process (:mod:`processors.workers.worker_process`, started on first use) over its
stdin/stdout as frames (:mod:`processors.workers.frames`). The parent waits at most
``timeout_s`` for the answer; past it the worker is killed (and replaced by the next request),
and so is one that died (its address space is capped at ``max_memory_mb``), sent a frame over
``max_answer_bytes`` or broke the protocol. Either way the caller gets an error string, never
an exception or a hang.

While a request is open the worker may send *call* frames (the handler's ``ask``); each is
passed to the caller's ``on_call`` (an :data:`Ask`), whose reply goes back to the worker. The
deadline covers the whole exchange, calls included; a call without an ``on_call`` is answered
``{"error": "no calls"}``. A pool made with ``warm_up`` (header, body, seconds) sends that
request to each new worker first, with its own time limit, so a library's slow first call
(importing its modules) does not count against the caller's ``timeout_s``.

Thread-safety: :meth:`WorkerPool.call` may be called from any thread; each call borrows a
worker for itself (at most ``max_workers`` exist; more callers wait for one), no lock is held
across I/O. :meth:`WorkerPool.close` kills the idle workers and any worker given back after.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from processors.workers.frames import read_frame, write_frame

Ask = Callable[[dict[str, Any], bytes], tuple[dict[str, Any], bytes]]
"""Answers a worker's call frame: ``(header, body) -> (header, body)``."""


@dataclass
class WorkerAnswer:
    """A worker's answer, or ``error``: ``timeout`` (killed at the deadline), ``worker died``,
    ``answer too large``, ``stopped`` (the pool is closed), or the handler's own complaint."""

    header: dict[str, Any] = field(default_factory=dict)
    body: bytes = b""
    error: str | None = None


class _Worker:
    """One worker process and its pipes."""

    def __init__(self, handler: str, max_memory_mb: int) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "processors.workers.worker_process",
                handler,
                str(max_memory_mb),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            bufsize=0,
        )
        self.fresh = True

    def exchange(
        self,
        header: dict[str, Any],
        body: bytes,
        deadline: float,
        max_bytes: int,
        on_call: Ask | None,
    ) -> tuple[dict[str, Any], bytes]:
        """Send one request, serve its calls, return the answer; raises TimeoutError,
        OSError/EOFError, OverflowError (a frame over ``max_bytes``) or ValueError."""
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None
        write_frame(stdin, header, body)
        while True:
            answer, answer_body = read_frame(stdout, deadline, max_bytes)
            call = answer.get("call")
            if call is None:
                return answer, answer_body
            if on_call is None or not isinstance(call, dict):
                write_frame(stdin, {"error": "no calls"})
            else:
                reply, reply_body = on_call(call, answer_body)
                if time.monotonic() >= deadline:
                    raise TimeoutError
                write_frame(stdin, reply, reply_body)

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.kill()
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self.proc.wait(5)
        for pipe in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                if pipe is not None:
                    pipe.close()


class WorkerPool:
    """Up to ``max_workers`` worker processes running ``handler`` (``module:function``, see
    :mod:`processors.workers.worker_process`); see the module docstring."""

    def __init__(
        self,
        handler: str,
        max_workers: int,
        max_memory_mb: int,
        max_answer_bytes: int = 64 * 1024 * 1024,
        warm_up: tuple[dict[str, Any], bytes, float] | None = None,
    ) -> None:
        self._warm_up = warm_up
        self._handler = handler
        self._max_workers = max_workers
        self._max_memory_mb = max_memory_mb
        self._max_answer_bytes = max_answer_bytes
        self._idle: list[_Worker] = []
        self._count = 0
        self._closed = False
        self._cond = threading.Condition()
        self.started = self.killed = 0

    def call(
        self,
        header: dict[str, Any],
        body: bytes,
        timeout_s: float,
        on_call: Ask | None = None,
    ) -> WorkerAnswer:
        """The worker's answer to ``(header, body)`` within ``timeout_s`` (see the class)."""
        worker = self._borrow()
        if worker is None:
            return WorkerAnswer(error="stopped")
        healthy = False
        try:
            if worker.fresh and self._warm_up is not None:
                warm_header, warm_body, warm_s = self._warm_up
                limit = time.monotonic() + warm_s
                worker.exchange(warm_header, warm_body, limit, self._max_answer_bytes, None)
            worker.fresh = False
            deadline = time.monotonic() + timeout_s
            answer, answer_body = worker.exchange(
                header, body, deadline, self._max_answer_bytes, on_call
            )
            healthy = True
        except TimeoutError:
            return WorkerAnswer(error="timeout")
        except OverflowError:
            return WorkerAnswer(error="answer too large")
        except (OSError, EOFError, ValueError):
            return WorkerAnswer(error="worker died")
        finally:
            self._give_back(worker, healthy)
        error = answer.get("error")
        return WorkerAnswer(answer, answer_body, str(error) if error is not None else None)

    def _borrow(self) -> _Worker | None:
        with self._cond:
            while not self._idle and self._count >= self._max_workers and not self._closed:
                self._cond.wait()
            if self._closed:
                return None
            if self._idle:
                return self._idle.pop()
            self._count += 1
        try:
            worker = _Worker(self._handler, self._max_memory_mb)
        except OSError:
            with self._cond:
                self._count -= 1
                self._cond.notify()
            return None
        with self._cond:
            self.started += 1
        return worker

    def _give_back(self, worker: _Worker, healthy: bool) -> None:
        with self._cond:
            keep = healthy and not self._closed
            if keep:
                self._idle.append(worker)
            else:
                self._count -= 1
                self.killed += 0 if healthy else 1
            self._cond.notify()
        if not keep:
            worker.kill()

    def close(self) -> None:
        """Kill the idle workers; busy ones are killed when given back. Idempotent."""
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._count -= len(idle)
            self._cond.notify_all()
        for worker in idle:
            worker.kill()
