"""What the console tests share: the console's test token, a pid no process has, the crawl.log
lines and the status.json of a run directory as a crawl leaves it (``tests/console/conftest.py``
makes such run directories with its ``make_run`` fixture)."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from pathlib import Path

TOKEN = "test-token-0123456789"
DEAD_PID = 999_999_999
AUTH = {"Authorization": f"Bearer {TOKEN}"}
CRAWL_LINES = [
    "2026-01-01T00:00:01.000Z   200        108 http://127.0.0.1:9/robots.txt P http://127.0.0.1:9/"
    " text/plain #001 20260101000000900+10 sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA - - -",
    "2026-01-01T00:00:01.100Z   200       4435 http://127.0.0.1:9/ - - text/html #002"
    " 20260101000001000+6 sha1:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB - - -",
    "2026-01-01T00:00:01.200Z   404        120 http://127.0.0.1:9/missing L http://127.0.0.1:9/"
    " text/html #001 20260101000001100+3 sha1:CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC - - -",
    "2026-01-01T00:00:01.300Z    -2          - http://127.0.0.1:10/ L http://127.0.0.1:9/"
    " no-type #003 - - - err=ConnectError -",
]


def status_doc(run_dir: Path, state: str, pid: int, **extra: object) -> dict[str, object]:
    now = time.time()
    doc: dict[str, object] = {
        "version": 1,
        "job": "site",
        "run_dir": str(run_dir),
        "pid": pid,
        "hostname": socket.gethostname(),
        "state": state,
        "exit_status": "Finished" if state == "FINISHED" else "",
        "updated": "2026-01-01T00:00:02.000Z",
        "updated_s": now,
        "started": "2026-01-01T00:00:00.000Z",
        "started_s": now - 2,
        "elapsed_s": 2.0,
        "discovered": 10,
        "queued": 6,
        "downloaded": 3,
        "failed": 1,
        "bytes": 4663,
        "rates": {"uris_per_s": 1.5, "avg_uris_per_s": 1.5, "kb_per_s": 2.0, "avg_kb_per_s": 2.0},
        "eta_s": 4.0,
        "threads": {"busy": 1, "total": 3, "steps": {}},
        "frontier": {"queues": {"ready": 1, "exhausted": 1}, "in_process": 1},
        "busiest_hosts": [{"host": "127.0.0.1:9", "urls": 3, "bytes": 4663, "failed": 0}],
        "recent_errors": [],
        "block_rules": [],
        "processors": [{"chain": "pre", "class": "p.X", "name": "x", "lines": []}],
    }
    doc.update(extra)
    return doc


MakeRun = Callable[..., Path]
