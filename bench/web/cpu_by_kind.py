"""CPU per fetch by kind over time, from the ``cpu-by-kind.json`` files :mod:`cpu_probe` writes.

:func:`summarize` folds the probes' buckets (of every worker, for ``--workers``) into windows of
``window_s`` seconds: per window and kind the URIs ended, their rate and the toe threads' CPU-ms
per URI (all stages: pre, fetch, extract, write, post, and ``frontier``: finished + next), and
per window the process's CPU-ms per URI of every thread, so the share no toe thread accounts for
(the WARC indexer, write-behind, the controller, the interpreter's switching between 300
threads) is the difference. :func:`markdown` prints both tables.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

KINDS = ("dns", "robots", "page", "embed", "other")
STAGES = ("pre", "fetch", "extract", "write", "post", "frontier")


def load(paths: list[Path]) -> list[dict[str, Any]]:
    """The probe files that exist, parsed."""
    return [json.loads(p.read_text()) for p in paths if p.exists()]


def summarize(files: list[dict[str, Any]], window_s: float = 60.0) -> list[dict[str, Any]]:
    """One row per window: ``t0_s``, ``uris``, ``process_cpu_ms_per_uri``, ``threads_cpu_ms_
    per_uri`` and per kind ``{uris, per_s, cpu_ms, stages: {stage: ms per URI}}``."""
    windows: dict[int, dict[str, Any]] = {}
    for data in files:
        bucket_s = float(data["bucket_s"])
        buckets = sorted((int(b), r) for b, r in data["buckets"].items())
        # the process's CPU clock at the first URI end of each window (every thread)
        first: dict[int, float] = {}
        for b, row in buckets:
            w = int(b * bucket_s // window_s)
            first.setdefault(w, row["process_cpu_s"])
            win = windows.setdefault(w, {"kinds": {}, "process_cpu_s": 0.0, "timed": True})
            for kind, k in row["kinds"].items():
                agg = win["kinds"].setdefault(kind, {"uris": 0, "cpu_s": {}})
                agg["uris"] += k["uris"]
                for stage, s in k["cpu_s"].items():
                    agg["cpu_s"][stage] = agg["cpu_s"].get(stage, 0.0) + s
        for w in windows:
            if w in first and w + 1 in first:
                windows[w]["process_cpu_s"] += first[w + 1] - first[w]
            else:
                windows[w]["timed"] = False
    rows = []
    for w in sorted(windows):
        win = windows[w]
        uris = sum(k["uris"] for k in win["kinds"].values())
        threads = sum(sum(k["cpu_s"].values()) for k in win["kinds"].values())
        row: dict[str, Any] = {
            "t0_s": w * window_s,
            "uris": uris,
            "per_s": round(uris / window_s, 1),
            "threads_cpu_ms_per_uri": round(1000 * threads / max(1, uris), 3),
            "process_cpu_ms_per_uri": round(1000 * win["process_cpu_s"] / max(1, uris), 3)
            if win["timed"]
            else None,
            "kinds": {},
        }
        for kind, k in sorted(win["kinds"].items()):
            n = max(1, k["uris"])
            row["kinds"][kind] = {
                "uris": k["uris"],
                "per_s": round(k["uris"] / window_s, 1),
                "cpu_ms": round(1000 * sum(k["cpu_s"].values()) / n, 3),
                "stages": {s: round(1000 * v / n, 3) for s, v in sorted(k["cpu_s"].items())},
            }
        rows.append(row)
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    """Two tables: URIs/s and CPU-ms per URI by kind per window; the stages of each kind."""
    head = "| minute | URIs/s | process CPU-ms/URI | toe threads CPU-ms/URI | "
    head += " | ".join(f"{k}: /s, CPU-ms" for k in KINDS) + " |"
    lines = [head, "|---" * (4 + len(KINDS)) + "|"]
    for r in rows:
        cells = []
        for kind in KINDS:
            k = r["kinds"].get(kind)
            cells.append(f"{k['per_s']}, {k['cpu_ms']:.2f}" if k else "-")
        proc = r["process_cpu_ms_per_uri"]
        lines.append(
            f"| {r['t0_s'] / 60:.0f} | {r['per_s']} | {proc if proc is not None else '-'} "
            f"| {r['threads_cpu_ms_per_uri']:.2f} | " + " | ".join(cells) + " |"
        )
    lines += [
        "",
        "| minute | kind | " + " | ".join(STAGES) + " |",
        "|---" * (2 + len(STAGES)) + "|",
    ]
    for r in rows:
        for kind in KINDS:
            k = r["kinds"].get(kind)
            if k:
                cells = [f"{k['stages'].get(s, 0.0):.2f}" for s in STAGES]
                lines.append(f"| {r['t0_s'] / 60:.0f} | {kind} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
