"""Crawl status: what a running crawl publishes in ``RUN_DIR/status.json`` and how it is read.

The controller's thread builds a status document (:meth:`StatusPublisher.document`) about once a
second and at every state change and writes it atomically (temp file + rename), so a reader never
sees half a file and never touches the crawl's LevelDB. ToeThreads only call
:meth:`StatusPublisher.note_final` (a deque append for failures). ``crawler status`` reads the
file (:func:`read_status`) and checks that the crawl's process still exists: a crawl whose process
is gone while the file says it runs is reported as died. Heritrix counterpart: the job status of
the REST API (``uriTotalsReport``, ``rateReport``, ``loadReport``, ``frontierReport``).
"""

from __future__ import annotations

import json
import math
import os
import socket
import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawler.logs.crawl_logs import log17

if TYPE_CHECKING:
    from crawler.curi import CrawlURI
    from crawler.frontier.frontier import FrontierSnapshot
    from crawler.frontier.retry.retry_watch import RetriesWaiting
    from crawler.stats import HostStats, StatsCounts

STATUS_FILE = "status.json"
STATUS_VERSION = 1
RATE_WINDOW_S = 20.0
"""Current rates are measured over (about) this many seconds."""
RECENT_ERRORS = 10
LIVE_STATES = ("PREPARING", "RUNNING", "PAUSING", "PAUSED", "STOPPING")


def finite(value: float) -> float | None:
    """``value`` rounded, or None for NaN/infinity (JSON has neither)."""
    return round(value, 3) if math.isfinite(value) else None


class StatusPublisher:
    """Builds and writes ``status.json``. ``note_final`` is thread-safe; the rest is called by
    the controller's thread only."""

    def __init__(self, run_dir: Path, job_name: str) -> None:
        self.path = run_dir / STATUS_FILE
        self.run_dir = run_dir
        self.job_name = job_name
        self.pid = os.getpid()
        self.hostname = socket.gethostname()
        self.recent_errors: deque[dict[str, Any]] = deque(maxlen=RECENT_ERRORS)
        self._samples: deque[tuple[float, int, int]] = deque()

    def note_final(self, curi: CrawlURI, now_s: float) -> None:
        """Remember ``curi`` if it failed (for "recent errors"). Thread-safe (deque append)."""
        if curi.status <= 0 and not curi.is_disregarded:
            self.recent_errors.append(
                {
                    "time": log17(now_s),
                    "status": curi.status,
                    "uri": curi.uri,
                    "annotations": ",".join(curi.annotations),
                }
            )

    def rates(self, mono_s: float, downloaded: int, total_bytes: int) -> tuple[float, float]:
        """Current URIs/s and KB/s over the last ``RATE_WINDOW_S`` seconds of samples."""
        samples = self._samples
        samples.append((mono_s, downloaded, total_bytes))
        while len(samples) > 2 and mono_s - samples[1][0] >= RATE_WINDOW_S:
            samples.popleft()
        t0, d0, b0 = samples[0]
        span = mono_s - t0
        if span <= 0:
            return 0.0, 0.0
        return (downloaded - d0) / span, (total_bytes - b0) / 1024 / span

    def document(
        self,
        *,
        state: str,
        exit_status: str,
        now_s: float,
        mono_s: float,
        started_s: float,
        elapsed_s: float,
        counts: StatsCounts,
        snap: FrontierSnapshot,
        busy_threads: int,
        total_threads: int,
        thread_steps: dict[str, int],
        busiest: list[tuple[str, HostStats]],
        block_rules: list[str],
        seeds: int,
        processors: list[dict[str, Any]],
        retrying: RetriesWaiting | None = None,
    ) -> dict[str, Any]:
        """The whole status document (see ``crawler status --json``). ``retrying``: the URIs
        waiting for a retry; the ETA is never shorter than the wait for the last of them."""
        cur_docs, cur_kb = self.rates(mono_s, counts.succeeded, counts.bytes)
        elapsed = max(elapsed_s, 1e-9)
        eta = snap.queued / cur_docs if cur_docs > 0 and snap.queued else None
        if retrying is not None and retrying.count:
            eta = max(eta or 0.0, retrying.last_due_s - now_s)
        return {
            "version": STATUS_VERSION,
            "job": self.job_name,
            "run_dir": str(self.run_dir),
            "pid": self.pid,
            "hostname": self.hostname,
            "state": state,
            "exit_status": exit_status,
            "updated": log17(now_s),
            "updated_s": now_s,
            "started": log17(started_s) if started_s else None,
            "started_s": started_s,
            "elapsed_s": round(elapsed_s, 3),
            "seeds": seeds,
            "discovered": snap.discovered,
            "queued": snap.queued,
            "downloaded": counts.succeeded,
            "failed": counts.failed,
            "disregarded": counts.disregarded,
            "finished": counts.finished,
            "bytes": counts.bytes,
            "novel_urls": counts.novel_urls,
            "novel_bytes": counts.novel_bytes,
            "dup_urls": counts.dup_urls,
            "dup_bytes": counts.dup_bytes,
            "notmod_urls": counts.notmod_urls,
            "notmod_bytes": counts.notmod_bytes,
            "rates": {
                "uris_per_s": round(cur_docs, 3),
                "avg_uris_per_s": round(counts.succeeded / elapsed, 3) if elapsed_s else 0.0,
                "kb_per_s": round(cur_kb, 3),
                "avg_kb_per_s": round(counts.bytes / 1024 / elapsed, 3) if elapsed_s else 0.0,
            },
            "eta_s": round(eta, 1) if eta is not None else None,
            "threads": {"busy": busy_threads, "total": total_threads, "steps": thread_steps},
            "frontier": {
                "queues": dict(snap.queues),
                "total_queues": snap.total_queues,
                "in_process": snap.in_process,
                "congestion": finite(snap.congestion),
                "max_depth": snap.max_depth,
                "avg_depth": finite(snap.avg_depth),
                "longest": [list(kv) for kv in snap.longest],
                "succeeded": snap.succeeded,
                "failed": snap.failed,
                "disregarded": snap.disregarded,
            },
            "busiest_hosts": [
                {"host": host, "urls": hs.urls, "bytes": hs.bytes, "failed": hs.failed}
                for host, hs in busiest
            ],
            "retrying": retrying_entry(retrying, now_s),
            "recent_errors": list(self.recent_errors),
            "block_rules": list(block_rules),
            "processors": processors,
        }

    def publish(self, doc: dict[str, Any]) -> None:
        """Write ``doc`` atomically. An I/O error is swallowed: status must never stop a crawl."""
        tmp = self.path.with_name(f".{STATUS_FILE}.tmp")
        try:
            tmp.write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:
            pass


def retrying_entry(retrying: RetriesWaiting | None, now_s: float) -> dict[str, Any]:
    """``status.json``'s ``retrying``: how many URIs wait for a retry after a failed try, when
    the last is due, the soonest with their last error and attempts so far, and how many
    retries this process decided in all."""
    total = retrying.total if retrying is not None else 0
    if retrying is None or not retrying.count:
        return {"uris": 0, "last_due_in_s": None, "soonest": [], "total": total}
    return {
        "uris": retrying.count,
        "total": total,
        "last_due_in_s": round(max(0.0, retrying.last_due_s - now_s), 1),
        "soonest": [
            {
                "uri": note.uri,
                "status": note.status,
                "error": note.error,
                "attempts": note.attempts,
                "due": log17(note.due_s),
                "due_in_s": round(max(0.0, note.due_s - now_s), 1),
            }
            for note in retrying.soonest
        ],
    }


def process_alive(pid: int) -> bool:
    """True if a process ``pid`` exists on this machine (it may belong to another user)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_status(run_dir: Path) -> dict[str, Any] | None:
    """The published status of the crawl in ``run_dir`` plus what the reader found out:

    ``alive`` (its process exists; None if it ran on another host), ``died`` (the file says the
    crawl is live but its process is gone) and ``age_s`` (seconds since the last update).
    None when there is no status file or it is not a status document (the crawl writes it
    atomically, so a reader never sees half of it; a file damaged otherwise reads as none).
    """
    try:
        doc = json.loads((run_dir / STATUS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict):
        return None
    try:
        pid, updated_s = int(doc.get("pid") or 0), float(doc.get("updated_s") or 0)
    except (TypeError, ValueError):
        return None
    same_host = doc.get("hostname") == socket.gethostname()
    alive = process_alive(pid) if same_host else None
    doc["alive"] = alive
    doc["died"] = doc.get("state") in LIVE_STATES and alive is False
    doc["age_s"] = round(time.time() - updated_s, 1)
    return doc


def is_running(doc: dict[str, Any] | None) -> bool:
    """True when ``doc`` describes a live crawl whose process still exists."""
    if doc is None:
        return False
    return doc.get("state") in LIVE_STATES and doc.get("alive") is not False
