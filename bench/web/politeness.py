"""crawl.log analysis for the synthetic-web benchmark: statuses and the politeness error.

``analyse(crawl_logs, delay_factor, min_ms, max_ms, rotations)`` reads every line of one
crawl.log or of several (the workers' of one crawl; Heritrix columns: log time, status, size,
URI, hops, via, mime, thread, ``fetchstart17+duration``, …) and returns:

* ``fetches`` — lines with a fetch-start time (dns: and http(s) fetches, whatever their status);
* ``statuses`` — count per status code; ``mimes`` — per MIME type; ``hosts`` — hosts with at
  least one fetch;
* ``politeness`` — per host, its fetches in start order; for each one after the first, the
  configured delay after the previous fetch (``delay_factor`` x its duration, within
  [min, max]; the DispositionProcessor's rule) and the lateness: start - max(previous end +
  delay, the time the URI was discovered (its via's log time; none for seeds and
  prerequisites, hop path ending in ``P``, whose via is logged after them)). Negative lateness
  is a gap shorter than configured (a violation). Not measured: the gap before a URI that was
  retried after an HTTP error or a failure (an attempts annotation ``Nt`` with N > 1 and a
  final status of 408, 429, 5xx or below 0): its earlier attempts, each a fetch of the host,
  are not logged, and its last one waited for the retry back-off by design (``retried_gaps``
  counts them). Returns the count, p50/p90/p99/max of the lateness in ms, p50/p99 of lateness
  / delay, violations;
* ``in_rotation``, ``returned`` and ``rotated`` — the same figures for three kinds of gap. A
  gap is one
  *in rotation* when the host's queue held its next URI as the previous fetch was finished (the
  via's log time is not after the previous fetch's own: the link was scheduled before the
  queue was given back; seeds and prerequisites always were there):
  the queue stayed active and its lateness is what the politeness goal is about. It is a
  *return* when the next URI was logged as found only after that: the queue ran empty, left
  rotation, and came back only when an idle thread activated it in its inactive FIFO's order
  (Heritrix's "hold queues"), so its lateness includes a wait by design. It is *rotated* when
  the lateness guard rotated the host's queue out in it (``rotations``: per host, the
  wall-clock ms of each rotation, from the ``queues_rotated_late`` events of crawler.jsonl,
  :func:`rotations_of`): the queue went to the back of its inactive FIFO and came back in its
  turn. Both frontiers log them (a Redis worker in its own crawler.jsonl, under
  ``workers/wNN/logs/``).

``rotations_of(jsonl_paths)`` — per host, the times its queue was rotated out.

``last_progress(path)`` — discovered, queued and downloaded of progress-statistics.log's last row.
"""

from __future__ import annotations

import bisect
import calendar
import itertools
import json
from pathlib import Path
from typing import Any


def _epoch_ms_17(text: str) -> int:
    """``yyyymmddhhmmssSSS`` (UTC) -> epoch milliseconds."""
    secs = calendar.timegm(
        (int(text[0:4]), int(text[4:6]), int(text[6:8]), int(text[8:10]), int(text[10:12]),
         int(text[12:14]), 0, 0, 0)
    )  # fmt: skip
    return secs * 1000 + int(text[14:17])


def _epoch_ms_iso(text: str) -> int:
    """``yyyy-mm-ddThh:mm:ss.SSSZ`` -> epoch milliseconds."""
    return _epoch_ms_17(
        text[0:4] + text[5:7] + text[8:10] + text[11:13] + text[14:16] + text[17:19] + text[20:23]
    )


def _host(uri: str) -> str:
    if uri.startswith("dns:"):
        return uri[4:]
    rest = uri.split("://", 1)[-1]
    return rest.split("/", 1)[0].split(":", 1)[0]


_RETRIED_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


def _retried(status: int, annotations: str) -> bool:
    """Whether a URI logged with ``status`` was retried after an error (``Nt``, N > 1)."""
    if status not in _RETRIED_STATUSES and status >= 0:
        return False
    return any(a[:-1].isdigit() and a[-1] == "t" and a != "1t" for a in annotations.split(","))


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(q * len(values)))]


def rotations_of(paths: list[Path]) -> dict[str, list[int]]:
    """Per host, the sorted wall-clock ms at which the lateness guard rotated its queue out
    (the ``queues`` of crawler.jsonl's ``queues_rotated_late`` events; a queue key is the host,
    ``#port`` after it)."""
    out: dict[str, list[int]] = {}
    for path in paths:
        with path.open(encoding="utf-8", errors="replace") as fh:
            for row in fh:
                if "queues_rotated_late" not in row:
                    continue
                try:
                    event = json.loads(row)
                except ValueError:
                    continue
                for key, at_ms in event.get("queues", ()):
                    out.setdefault(str(key).split("#", 1)[0], []).append(int(at_ms))
    for times in out.values():
        times.sort()
    return out


def analyse(
    paths: Path | list[Path],
    delay_factor: float,
    min_ms: int,
    max_ms: int,
    rotations: dict[str, list[int]] | None = None,
) -> dict[str, Any]:
    logged: dict[str, int] = {}
    per_host: dict[str, list[tuple[int, int, str | None, bool, int]]] = {}
    statuses: dict[int, int] = {}
    mimes: dict[str, int] = {}
    fetches = 0
    for path in [paths] if isinstance(paths, Path) else paths:
        with path.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if len(line) < 42:
                    continue
                status = int(line[25:30])
                statuses[status] = statuses.get(status, 0) + 1
                cols = line[42:].split(" ", 8)
                if len(cols) < 6:
                    continue
                uri, hops, via, mime, timing = cols[0], cols[1], cols[2], cols[3], cols[5]
                mimes[mime] = mimes.get(mime, 0) + 1
                logged[uri] = log_ms = _epoch_ms_iso(line[:24])
                if timing == "-" or "+" not in timing:
                    continue
                start, _, duration = timing.partition("+")
                fetches += 1
                if hops.endswith("P") or via == "-":
                    via = None
                retried = len(cols) > 8 and _retried(status, cols[8].split(" ", 1)[0])
                per_host.setdefault(_host(uri), []).append(
                    (_epoch_ms_17(start), int(duration), via, retried, log_ms)
                )
    lateness: list[float] = []
    relative: list[float] = []
    kept: tuple[list[float], list[float]] = ([], [])  # in rotation: ms, share of the delay
    back: tuple[list[float], list[float]] = ([], [])  # returned after the queue ran empty
    turned: tuple[list[float], list[float]] = ([], [])  # returned after a rotation out
    violations = retried_gaps = 0
    for host, items in per_host.items():
        items.sort()
        rotated = (rotations or {}).get(host, [])
        for (s0, d0, _v0, _r0, done0), (s1, _d1, via, retried, _done1) in itertools.pairwise(items):
            if retried:
                retried_gaps += 1
                continue
            delay = min(max(delay_factor * d0, min_ms), max_ms)
            eligible = s0 + d0 + delay
            found = logged.get(via) if via is not None else None
            if found is not None:
                eligible = max(eligible, found)
            late = s1 - eligible
            if s1 - (s0 + d0) < delay:
                violations += 1
            lateness.append(late)
            relative.append(late / delay)
            if rotated and bisect.bisect_right(rotated, s1) > bisect.bisect_right(rotated, done0):
                kind = turned  # rotated out after the previous fetch, before this one
            elif found is not None and found > done0:
                kind = back
            else:
                kind = kept
            kind[0].append(late)
            kind[1].append(late / delay)
    lateness.sort()
    relative.sort()
    return {
        "fetches": fetches,
        "statuses": dict(sorted(statuses.items())),
        "mimes": dict(sorted(mimes.items(), key=lambda kv: -kv[1])),
        "hosts": len(per_host),
        "politeness": {
            "gaps": len(lateness),
            "lateness_ms_p50": _pct(lateness, 0.5),
            "lateness_ms_p90": _pct(lateness, 0.9),
            "lateness_ms_p99": _pct(lateness, 0.99),
            "lateness_ms_max": lateness[-1] if lateness else None,
            "lateness_share_p50": round(_pct(relative, 0.5), 4),
            "lateness_share_p99": round(_pct(relative, 0.99), 4),
            "violations": violations,
            "retried_gaps": retried_gaps,
        },
        "in_rotation": _summary(*kept),
        "returned": _summary(*back),
        "rotated": _summary(*turned),
    }


def _summary(lateness: list[float], relative: list[float]) -> dict[str, Any]:
    """Count and percentiles of one kind of gap (lateness in ms, and as a share of the delay)."""
    lateness.sort()
    relative.sort()
    return {
        "gaps": len(lateness),
        "lateness_ms_p50": _pct(lateness, 0.5),
        "lateness_ms_p99": _pct(lateness, 0.99),
        "lateness_share_p50": round(_pct(relative, 0.5), 4),
        "lateness_share_p99": round(_pct(relative, 0.99), 4),
    }


def last_progress(path: Path) -> dict[str, int]:
    try:
        rows = [
            r
            for r in path.read_text().splitlines()
            if len(r.split()) > 3 and r.split()[1][0].isdigit()
        ]
    except OSError:
        return {}
    if not rows:
        return {}
    cols = rows[-1].split()
    try:
        return {
            "discovered": int(cols[1].replace(",", "")),
            "queued": int(cols[2].replace(",", "")),
            "downloaded": int(cols[3].replace(",", "")),
        }
    except (IndexError, ValueError):
        return {}
