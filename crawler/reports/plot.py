"""A picture of a crawl over time from its progress-statistics.log (matplotlib, Agg backend).

:func:`parse_progress_log` reads the data rows and the ``CRAWL <STATE>`` lines;
:func:`plot_progress` draws URIs/s, KB/s, queued and busy threads against elapsed time, with
the state changes (pauses, the end) marked, into a PNG.
"""

from __future__ import annotations

import calendar
import re
import time
from dataclasses import dataclass
from pathlib import Path

from crawler.logs.growing_file import complete_lines

_ROW = re.compile(
    r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\s+(\d+)\s+(\d+)\s+(\d+)\s+"
    r"([\d,.]+|NaN|∞)\(([\d,.]+|NaN|∞)\)\s+(\d+)\((\d+)\)\s+(\d+)\s+(\d+)"
)
_STATE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ) CRAWL (\w+)")


@dataclass
class ProgressSeries:
    """Columns of progress-statistics.log, one entry per data row; times in epoch seconds."""

    times_s: list[float]
    discovered: list[int]
    queued: list[int]
    downloaded: list[int]
    docs_per_s: list[float]
    kb_per_s: list[float]
    busy_threads: list[int]
    states: list[tuple[float, str]]


def _epoch(stamp: str) -> float:
    return float(calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")))


def _number(text: str) -> float:
    if text in ("NaN", "∞"):
        return 0.0
    return float(text.replace(",", ""))


def parse_progress_log(path: Path) -> ProgressSeries:
    """Every data row and state line of a progress-statistics.log."""
    series = ProgressSeries([], [], [], [], [], [], [], [])
    for line in complete_lines(path):
        row = _ROW.match(line)
        if row is not None:
            g = row.groups()
            series.times_s.append(_epoch(g[0]))
            series.discovered.append(int(g[1]))
            series.queued.append(int(g[2]))
            series.downloaded.append(int(g[3]))
            series.docs_per_s.append(_number(g[4]))
            series.kb_per_s.append(float(g[6]))
            series.busy_threads.append(int(g[9]))
            continue
        state = _STATE.match(line)
        if state is not None:
            series.states.append((_epoch(state.group(1)), state.group(2)))
    return series


def plot_progress(progress_log: Path, png: Path, title: str = "") -> Path:
    """Draw ``progress_log`` into ``png``; raises ValueError if it has no data rows."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = parse_progress_log(progress_log)
    if not series.times_s:
        raise ValueError(f"{progress_log} has no progress rows yet")
    start = series.states[0][0] if series.states else series.times_s[0]
    start = min(start, series.times_s[0])
    span_s = series.times_s[-1] - start
    unit_s, unit = (60.0, "minutes") if span_s >= 120 else (1.0, "seconds")
    minutes = [(t - start) / unit_s for t in series.times_s]
    panels = (
        ("URIs/s", series.docs_per_s, "tab:blue"),
        ("KB/s", series.kb_per_s, "tab:orange"),
        ("queued URIs", series.queued, "tab:green"),
        ("busy threads", series.busy_threads, "tab:red"),
    )
    fig, axes = plt.subplots(len(panels), 1, sharex=True, figsize=(10, 9), dpi=100)
    for ax, (label, values, color) in zip(axes, panels, strict=True):
        ax.plot(minutes, values, color=color, marker="." if len(minutes) < 60 else None)
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
        for when, state in series.states:
            if state in ("PAUSED", "RUNNING", "ENDED"):
                ax.axvline((when - start) / unit_s, color="grey", linestyle=":", linewidth=1)
    for when, state in series.states:
        if state in ("PAUSED", "RUNNING", "ENDED"):
            axes[0].annotate(
                state.lower(),
                ((when - start) / unit_s, 1),
                xycoords=("data", "axes fraction"),
                fontsize=8,
                color="grey",
                rotation=90,
                va="top",
            )
    axes[-1].set_xlabel(f"{unit} since start")
    fig.suptitle(title or f"crawl progress: {progress_log.parent.parent.name}")
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png)
    plt.close(fig)
    return png
