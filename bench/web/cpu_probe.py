"""CpuProbe: the toe threads' CPU per URI, by kind of fetch and by stage, over time.

A benchmark instrument, not a crawler feature: ``run_web.py`` puts one probe at the head of
every chain (``stage`` = the chain's name) and one at the very end of the post chain
(``stage: end``). Each probe reads the thread's CPU clock (``time.thread_time``: user+sys of
the calling thread only, so the other toe threads and waits cost nothing); the end probe
charges the differences to the stages of the URI, and the thread's CPU between the end of one
URI and the start of its next (``frontier``: ``Frontier.finished`` of the last URI and
``Frontier.next``) to the last URI. Kinds: ``dns``, ``robots`` (``/robots.txt``), ``page``
(``text/html``), ``embed`` (an E hop that is not HTML), ``other`` (redirects, errors, the
rest).

Tallies are kept per ``bucket_s`` of crawl time and written as JSON to
``<run dir>/logs/cpu-by-kind.json`` every bucket and at stop: per bucket, the process's CPU
(``time.process_time``, every thread) at the bucket's first URI end and per kind the URIs ended
and the CPU seconds per stage. Thread-safety: the per-URI marks are thread-local (a URI is
processed by one thread from start to end); the tallies are under one lock, shared by every
probe of the process.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import Field

from crawler import CrawlURI, Params, Processor, ProcessorContext

_local = threading.local()
_lock = threading.Lock()
_tally: dict[int, dict[str, Any]] = {}
_state: dict[str, Any] = {"t0": 0.0, "out": None, "last_dump": 0.0, "bucket_s": 10.0}


class CpuProbeParams(Params):
    """Parameters of :class:`CpuProbe`."""

    stage: str = Field("pre", description="the stage starting here; 'end' closes the URI")
    bucket_s: float = Field(10.0, gt=0, description="seconds of crawl time per tally")


def kind_of(curi: CrawlURI) -> str:
    """``dns``, ``robots``, ``page``, ``embed`` or ``other`` (see the module docstring)."""
    uri = curi.uri
    if uri.startswith("dns:"):
        return "dns"
    if uri.endswith("/robots.txt"):
        return "robots"
    if 200 <= curi.status < 300 and curi.mime_type == "text/html":
        return "page"
    if curi.hop_path.endswith("E"):
        return "embed"
    return "other"


class CpuProbe(Processor[CpuProbeParams]):
    """Marks the thread's CPU clock at one point of the chains (see the module docstring)."""

    def start(self, ctx: ProcessorContext) -> None:
        super().start(ctx)
        out = Path(ctx.run_dir) / "logs" / "cpu-by-kind.json"
        with _lock:
            if _state["out"] != out:  # a new crawl in this process: new tallies
                _tally.clear()
                _state.update(t0=time.monotonic(), out=out, bucket_s=self.params.bucket_s)

    def stop(self) -> None:
        if self.params.stage == "end":
            _dump()

    def inner_process(self, curi: CrawlURI) -> None:
        now = time.thread_time()
        stage = self.params.stage
        if stage == "pre":
            last = getattr(_local, "last_end", None)
            if last is not None:
                _add(_local.last_bucket, _local.last_kind, {"frontier": now - last}, 0)
            _local.marks = [("pre", now)]
            return
        marks: list[tuple[str, float]] | None = getattr(_local, "marks", None)
        if marks is None:
            return
        if stage != "end":
            marks.append((stage, now))
            return
        marks.append(("end", now))
        spent: dict[str, float] = {}
        for (name, at), (_next, later) in itertools.pairwise(marks):
            spent[name] = spent.get(name, 0.0) + later - at
        kind = kind_of(curi)
        bucket = int((time.monotonic() - _state["t0"]) / self.params.bucket_s)
        _add(bucket, kind, spent, 1)
        _local.marks = None
        _local.last_bucket, _local.last_kind = bucket, kind
        if time.monotonic() - _state["last_dump"] >= self.params.bucket_s:
            _dump()
        _local.last_end = time.thread_time()


def _add(bucket: int, kind: str, spent: dict[str, float], ended: int) -> None:
    with _lock:
        row = _tally.get(bucket)
        if row is None:
            row = _tally[bucket] = {"process_cpu_s": time.process_time(), "kinds": {}}
        k = row["kinds"].setdefault(kind, {"uris": 0, "cpu_s": {}})
        k["uris"] += ended
        cpu = k["cpu_s"]
        for name, seconds in spent.items():
            cpu[name] = cpu.get(name, 0.0) + seconds


def _dump() -> None:
    with _lock:
        _state["last_dump"] = time.monotonic()
        out = _state["out"]
        if out is None:
            return
        text = json.dumps(
            {"bucket_s": _state["bucket_s"], "buckets": {str(b): r for b, r in _tally.items()}}
        )
    tmp = out.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, out)
