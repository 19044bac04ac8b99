"""How a crawl's status looks to a person: the live terminal display, plain progress lines,
and the text of ``crawler status``.

Everything renders a status document (:mod:`crawler.reports.status`). The controller's thread calls
:meth:`LiveDisplay.update` / :meth:`PlainDisplay.update` every ``interval_s`` seconds (never a
ToeThread), so drawing costs the crawl one short GIL hold a few times a second. On a terminal
the display is a rich ``Live`` region (log lines printed to stderr scroll above it); otherwise a
plain line is printed every ``progress_interval_s``. rich is imported only when a live display
is made or :func:`render` is called, so plain lines and ``crawler status`` do without it.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from crawler.reports.formats import format_bytes, format_clock

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.live import Live

LIVE_REFRESH_S = 0.5
_QUEUE_STATES = ("in_process", "ready", "snoozed", "inactive", "retired", "exhausted")


class Display(Protocol):
    """Something the controller shows the status to."""

    interval_s: float

    def start(self) -> None: ...
    def update(self, doc: dict[str, Any]) -> None: ...
    def stop(self, doc: dict[str, Any] | None) -> None: ...


def _rates(doc: dict[str, Any]) -> dict[str, float]:
    rates: dict[str, float] = doc.get("rates", {})
    return rates


def _queues_text(doc: dict[str, Any]) -> str:
    queues = doc.get("frontier", {}).get("queues", {})
    return " · ".join(f"{queues.get(s, 0)} {s.replace('_', '-')}" for s in _QUEUE_STATES)


def render(doc: dict[str, Any]) -> RenderableType:
    """The live display's picture of one status document."""
    from rich.console import Group
    from rich.progress_bar import ProgressBar
    from rich.table import Table
    from rich.text import Text

    rates = _rates(doc)
    downloaded, discovered = int(doc.get("downloaded", 0)), int(doc.get("discovered", 0))
    threads = doc.get("threads", {})
    head = Text.assemble(
        (f"{doc.get('job', '?')} ", "bold"),
        (str(doc.get("state", "?")), "bold green" if doc.get("state") == "RUNNING" else "bold"),
        f"  elapsed {format_clock(doc.get('elapsed_s'))}",
        f"  ETA {format_clock(doc.get('eta_s'))}",
    )
    bar = Table.grid(padding=(0, 1))
    bar.add_row(
        ProgressBar(total=max(discovered, 1), completed=downloaded, width=40),
        Text(f"{downloaded}/{discovered} downloaded"),
    )
    figures = Table.grid(padding=(0, 2))
    figures.add_row(
        f"URIs/s {rates.get('uris_per_s', 0):.1f} (avg {rates.get('avg_uris_per_s', 0):.1f})",
        f"KB/s {rates.get('kb_per_s', 0):.0f} (avg {rates.get('avg_kb_per_s', 0):.0f})",
        f"busy threads {threads.get('busy', 0)}/{threads.get('total', 0)}",
    )
    figures.add_row(
        f"queued {doc.get('queued', 0)}",
        f"failed {doc.get('failed', 0)}  disregarded {doc.get('disregarded', 0)}",
        f"crawled {format_bytes(int(doc.get('bytes', 0)))}",
    )
    parts: list[RenderableType] = [head, bar, figures, Text(f"queues: {_queues_text(doc)}")]
    errors = doc.get("recent_errors", [])[-3:]
    if errors:
        parts.append(Text("last errors:", style="bold"))
        for error in errors:
            parts.append(Text(f"  {error['status']:>5} {error['uri']}", overflow="ellipsis"))
    return Group(*parts)


def plain_line(doc: dict[str, Any]) -> str:
    """One progress line for a log file or a pipe."""
    rates = _rates(doc)
    threads = doc.get("threads", {})
    return (
        f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {doc.get('state', '?')} "
        f"{doc.get('downloaded', 0)}/{doc.get('discovered', 0)} downloaded, "
        f"{doc.get('queued', 0)} queued, {doc.get('failed', 0)} failed | "
        f"{rates.get('uris_per_s', 0):.1f} URIs/s (avg {rates.get('avg_uris_per_s', 0):.1f}), "
        f"{rates.get('kb_per_s', 0):.0f} KB/s (avg {rates.get('avg_kb_per_s', 0):.0f}) | "
        f"{threads.get('busy', 0)}/{threads.get('total', 0)} busy | "
        f"ETA {format_clock(doc.get('eta_s'))}"
    )


class LiveDisplay:
    """A rich Live region on the terminal, redrawn on each :meth:`update`."""

    def __init__(self, console: Console | None = None) -> None:
        from rich.console import Console

        self.interval_s = LIVE_REFRESH_S
        self.console = console or Console(file=sys.stdout)
        self._live: Live | None = None

    def start(self) -> None:
        from rich.live import Live
        from rich.text import Text

        self._live = Live(
            Text("starting…"),
            console=self.console,
            auto_refresh=False,
            redirect_stdout=True,
            redirect_stderr=True,
        )
        self._live.start()

    def update(self, doc: dict[str, Any]) -> None:
        if self._live is not None:
            self._live.update(render(doc), refresh=True)

    def stop(self, doc: dict[str, Any] | None) -> None:
        if self._live is not None:
            if doc is not None:
                self._live.update(render(doc), refresh=True)
            self._live.stop()
            self._live = None


class PlainDisplay:
    """A plain progress line every ``interval_s`` seconds."""

    def __init__(self, stream: TextIO, interval_s: float) -> None:
        self.interval_s = interval_s
        self.stream = stream

    def start(self) -> None:
        return None

    def update(self, doc: dict[str, Any]) -> None:
        print(plain_line(doc), file=self.stream, flush=True)

    def stop(self, doc: dict[str, Any] | None) -> None:
        if doc is not None:
            self.update(doc)


def make_display(enabled: bool, stream: TextIO, progress_interval_s: float) -> Display | None:
    """A live display on a terminal, plain lines otherwise; None when turned off."""
    if not enabled:
        return None
    if stream.isatty():
        from rich.console import Console

        return LiveDisplay(Console(file=stream))
    return PlainDisplay(stream, progress_interval_s)


def _disk_lines(doc: dict[str, Any]) -> list[str]:
    """Why a crawl is paused, and the disk guard's last reading."""
    lines = []
    reasons = doc.get("pause_reasons") or []
    if reasons and doc.get("state") in ("PAUSING", "PAUSED"):
        words = {"operator": "by the operator", "disk": "by the disk guard (disk space low)"}
        lines.append(f"  paused:      {', '.join(words.get(r, r) for r in reasons)}")
    disk = doc.get("disk") or {}
    if disk.get("enabled") and disk.get("free_mb") is not None:
        if disk.get("low"):
            tail = f" — LOW, crawl paused until {disk.get('resume_free_mb', 0):g} MiB free"
        else:
            tail = f", pauses below {disk.get('min_free_mb', 0):g} MiB"
        lines.append(f"  disk:        {disk['free_mb']:g} MiB free on {disk.get('path')}{tail}")
    return lines


def _retry_tail(doc: dict[str, Any]) -> str:
    retrying = doc.get("retrying") or {}
    if not retrying.get("uris"):
        return ""
    return f", the last retry in {format_clock(retrying.get('last_due_in_s'))}"


def _retry_lines(doc: dict[str, Any]) -> list[str]:
    """What ``crawler status`` says of the URIs waiting for a retry after a failed try."""
    retrying = doc.get("retrying") or {}
    count = int(retrying.get("uris") or 0)
    if not count:
        return []
    lines = [f"  retrying:    {count} URI{'s' if count > 1 else ''} waiting for a retry"]
    lines += [
        f"    in {format_clock(n.get('due_in_s')):>8} {n.get('status'):>5} "
        f"{n.get('attempts')}t  {n.get('uri')}  {n.get('error')}"
        for n in retrying.get("soonest", [])
    ]
    return lines


def format_status(doc: dict[str, Any]) -> str:
    """The text ``crawler status`` prints."""
    state = str(doc.get("state", "?"))
    if doc.get("died"):
        state += f" — DIED: process {doc.get('pid')} is gone (last update {doc.get('age_s')}s ago)"
    elif doc.get("exit_status") and doc.get("state") == "FINISHED":
        state += f" ({doc['exit_status']})"
    rates = _rates(doc)
    threads = doc.get("threads", {})
    frontier = doc.get("frontier", {})
    lines = [
        f"crawl {doc.get('job', '?')} in {doc.get('run_dir', '?')}",
        f"  state:       {state}",
        f"  pid:         {doc.get('pid')} on {doc.get('hostname')}, updated {doc.get('updated')}",
        f"  elapsed:     {format_clock(doc.get('elapsed_s'))} (paused time excluded)",
        f"  discovered:  {doc.get('discovered', 0)}",
        f"  queued:      {doc.get('queued', 0)}",
        f"  downloaded:  {doc.get('downloaded', 0)} ({format_bytes(int(doc.get('bytes', 0)))})",
        f"  failed:      {doc.get('failed', 0)}   disregarded: {doc.get('disregarded', 0)}",
        f"  URIs/s:      {rates.get('uris_per_s', 0):.2f} "
        f"(avg {rates.get('avg_uris_per_s', 0):.2f})",
        f"  KB/s:        {rates.get('kb_per_s', 0):.0f} (avg {rates.get('avg_kb_per_s', 0):.0f})",
        f"  threads:     {threads.get('busy', 0)} busy of {threads.get('total', 0)}",
        f"  queues:      {_queues_text(doc)} ({frontier.get('total_queues', 0)} in all)",
        f"  ETA:         {format_clock(doc.get('eta_s'))} for the queued URIs at the current rate"
        + _retry_tail(doc),
    ]
    lines.extend(_retry_lines(doc))
    if doc.get("block_rules"):
        lines.append(f"  block rules: {', '.join(doc['block_rules'])}")
    lines.extend(_disk_lines(doc))
    hosts = doc.get("busiest_hosts", [])
    if hosts:
        lines.append("  busiest hosts (downloaded, bytes, failed):")
        lines.extend(
            f"    {h['urls']:>8} {format_bytes(h['bytes']):>10} {h['failed']:>6}  {h['host']}"
            for h in hosts
        )
    paced = doc.get("paced_servers", [])
    if paced:
        lines.append("  paced servers (least gap between fetch starts, from their answers):")
        lines.extend(f"    {p['gap_ms']:>8.0f} ms  {p['server']}" for p in paced)
    errors = doc.get("recent_errors", [])
    if errors:
        lines.append("  recent errors:")
        lines.extend(
            f"    {e['time']} {e['status']:>5} {e['uri']} {e.get('annotations') or ''}".rstrip()
            for e in errors
        )
    return "\n".join(lines) + "\n"
