"""PdfWorkerPool: PDFs parsed in worker processes that can be killed at a deadline.

A parser fed a hostile PDF may loop, recurse or allocate without end inside one library call,
which no check in the calling thread can interrupt. So each PDF goes to a worker process of a
:class:`~processors.workers.WorkerPool` (started on first use), which runs :func:`serve_pdf`:
past ``timeout_s`` the worker is killed (and replaced by the next request), and so is one that
died (its address space is capped at ``max_memory_mb``, so a memory bomb ends it instead of the
machine). Either way the caller gets an error string, never an exception or a hang.

Thread-safety: :meth:`PdfWorkerPool.parse` may be called from any thread (at most
``max_workers`` PDFs are parsed at once; more callers wait for a worker).
:meth:`PdfWorkerPool.close` kills the idle workers and any worker given back after.
"""

from __future__ import annotations

import importlib
from dataclasses import asdict
from typing import Any

from processors.extract.pdf_links import PdfLinks, pdf_uris
from processors.workers import Ask, WorkerPool

DEFAULT_PARSER = "processors.extract.pdf_links:pdf_uris"
_HANDLER = "processors.extract.pdf_worker:serve_pdf"


class PdfWorkerPool:
    """Up to ``max_workers`` worker processes parsing PDFs (see the module docstring);
    ``parser`` (``module:function``, as :func:`pdf_uris`) replaces pypdf, for tests."""

    def __init__(self, max_workers: int, max_memory_mb: int, parser: str = DEFAULT_PARSER) -> None:
        self._parser = parser
        self._pool = WorkerPool(_HANDLER, max_workers, max_memory_mb)

    @property
    def started(self) -> int:
        """Worker processes started so far."""
        return self._pool.started

    @property
    def killed(self) -> int:
        """Worker processes killed (timed out or died) so far."""
        return self._pool.killed

    def parse(self, data: bytes, max_uris: int, timeout_s: float) -> PdfLinks:
        """The links of the PDF ``data``; ``error`` is ``timeout`` past ``timeout_s`` (the
        worker is killed), ``worker died`` if it crashed."""
        header = {"parser": self._parser, "max_uris": max_uris, "time_limit_s": timeout_s}
        answer = self._pool.call(header, data, timeout_s)
        if answer.header.get("uris") is None:
            return PdfLinks(error=answer.error or "worker died")
        head = answer.header
        return PdfLinks(list(head["uris"]), int(head["dropped"]), head["error"])

    def close(self) -> None:
        """Kill the workers (busy ones when they finish). Idempotent."""
        self._pool.close()


def serve_pdf(header: dict[str, Any], body: bytes, ask: Ask) -> tuple[dict[str, Any], bytes]:
    """The worker's side: parse one PDF with the parser the header names."""
    spec = str(header["parser"])
    if spec == DEFAULT_PARSER:
        parse = pdf_uris
    else:
        module, _, name = spec.partition(":")
        parse = getattr(importlib.import_module(module), name)
    found: PdfLinks = parse(body, int(header["max_uris"]), float(header["time_limit_s"]))
    return asdict(found), b""
