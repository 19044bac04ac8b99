"""PdfWorkerPool: PDFs parsed in worker processes that can be killed at a deadline.

A parser fed a hostile PDF may loop, recurse or allocate without end inside one library call,
which no check in the calling thread can interrupt. So each PDF goes to a long-lived worker
process (``python -m processors.extract.pdf_worker``, started on first use) over its
stdin/stdout: a frame ``<json header length><body length><json header><body>`` out, one JSON
line back. The parent waits at most ``timeout_s``; past it the worker is killed (and replaced
by the next request), and so is one that died (its address space is capped at
``max_memory_mb`` with ``RLIMIT_AS``, so a memory bomb ends it instead of the machine). Either
way the caller gets an error string, never an exception or a hang.

Thread-safety: :meth:`PdfWorkerPool.parse` may be called from any thread; each call borrows a
worker for itself (at most ``max_workers`` exist; more callers wait for one), no lock is held
across I/O. :meth:`PdfWorkerPool.close` kills the idle workers and any worker given back after.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import struct
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from typing import IO

from processors.extract.pdf_links import PdfLinks, pdf_uris

_FRAME = struct.Struct(">II")
DEFAULT_PARSER = "processors.extract.pdf_links:pdf_uris"


class _Worker:
    """One worker process and its pipes."""

    def __init__(self, parser: str, max_memory_mb: int) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "processors.extract.pdf_worker",
                parser,
                str(max_memory_mb),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )

    def ask(self, header: dict[str, object], body: bytes, timeout_s: float) -> PdfLinks:
        """Send one request and wait for its answer; raises TimeoutError or OSError/EOFError."""
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None
        head = json.dumps(header).encode()
        stdin.write(_FRAME.pack(len(head), len(body)) + head)
        stdin.write(body)
        stdin.flush()
        ready, _, _ = select.select([stdout], [], [], max(0.0, timeout_s))
        if not ready:
            raise TimeoutError
        line = stdout.readline()
        if not line:
            raise EOFError("pdf worker ended")
        answer = json.loads(line)
        return PdfLinks(answer["uris"], answer["dropped"], answer["error"])

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.kill()
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self.proc.wait(5)
        for pipe in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                if pipe is not None:
                    pipe.close()


class PdfWorkerPool:
    """Up to ``max_workers`` worker processes (see the module docstring)."""

    def __init__(self, max_workers: int, max_memory_mb: int, parser: str = DEFAULT_PARSER) -> None:
        self._max_workers = max_workers
        self._max_memory_mb = max_memory_mb
        self._parser = parser
        self._idle: list[_Worker] = []
        self._count = 0
        self._closed = False
        self._cond = threading.Condition()
        self.started = self.killed = 0

    def parse(self, data: bytes, max_uris: int, timeout_s: float) -> PdfLinks:
        """The links of the PDF ``data``; ``error`` is ``timeout`` past ``timeout_s`` (the
        worker is killed), ``worker died`` if it crashed."""
        worker = self._borrow()
        if worker is None:
            return PdfLinks(error="stopped")
        healthy = False
        try:
            header: dict[str, object] = {"max_uris": max_uris, "time_limit_s": timeout_s}
            result = worker.ask(header, data, timeout_s)
            healthy = True
            return result
        except TimeoutError:
            return PdfLinks(error="timeout")
        except (OSError, EOFError, ValueError, KeyError):
            return PdfLinks(error="worker died")
        finally:
            self._give_back(worker, healthy)

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
            worker = _Worker(self._parser, self._max_memory_mb)
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


def _read_exactly(stream: IO[bytes], size: int) -> bytes | None:
    data = stream.read(size)
    return data if len(data) == size else None


def _serve(parser: str, max_memory_mb: int) -> None:
    """The worker's loop: one frame in, one JSON line out, until stdin closes."""
    import importlib
    import logging
    import resource

    if max_memory_mb > 0:
        limit = max_memory_mb * 1024 * 1024
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    logging.disable(logging.CRITICAL)  # pypdf's warnings about broken files go nowhere
    module, _, name = parser.partition(":")
    parse = getattr(importlib.import_module(module), name) if parser != DEFAULT_PARSER else pdf_uris
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        frame = _read_exactly(stdin, _FRAME.size)
        if frame is None:
            return
        head_len, body_len = _FRAME.unpack(frame)
        head = _read_exactly(stdin, head_len)
        body = _read_exactly(stdin, body_len)
        if head is None or body is None:
            return
        header = json.loads(head)
        started = time.monotonic()
        found: PdfLinks = parse(body, int(header["max_uris"]), float(header["time_limit_s"]))
        del body
        answer = asdict(found)
        answer["parse_ms"] = int((time.monotonic() - started) * 1000)
        stdout.write(json.dumps(answer).encode() + b"\n")
        stdout.flush()


if __name__ == "__main__":
    _serve(sys.argv[1], int(sys.argv[2]))
