"""A strict parser of crawl.log lines (Heritrix's twelve space-separated columns, an optional
JSON thirteenth), used by the tests."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crawler.logs.growing_file import complete_lines

_TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
_TIMING = re.compile(r"^\d{17}\+\d+$")
_DIGEST = re.compile(r"^sha1:[A-Z2-7]{32}$")
_HOPS = re.compile(r"^(-|(\d+\+)?[LEXRPIMS]{1,50})$")
_THREAD = re.compile(r"^#\d{3,}$")


@dataclass
class CrawlLogLine:
    time: str
    status: int
    size: int | None
    uri: str
    hops: str
    via: str | None
    mime: str
    thread: int
    timing: str | None
    digest: str | None
    source: str | None
    annotations: list[str]
    extra: dict[str, Any] | None


def parse_line(line: str) -> CrawlLogLine:
    """Parse one line; raise ValueError naming the bad column."""
    line = line.rstrip("\n")
    if len(line) < 42 or line[24] != " " or line[30] != " " or line[41] != " ":
        raise ValueError(f"bad fixed columns: {line!r}")
    ts, status, size = line[:24], line[25:30], line[31:41]
    if not _TS.match(ts):
        raise ValueError(f"bad time {ts!r}")
    if status != f"{int(status):>5}":
        raise ValueError(f"status not right-aligned in 5: {status!r}")
    if size != f"{size.strip():>10}" or not (size.strip() == "-" or size.strip().isdigit()):
        raise ValueError(f"size not right-aligned in 10: {size!r}")
    rest = line[42:].split(" ", 8)
    if len(rest) != 9:
        raise ValueError(f"expected 12 or 13 columns: {line!r}")
    uri, hops, via, mime, thread, timing, digest, source, tail = rest
    notes, _, extra = tail.partition(" ")
    if extra and not extra.startswith("{"):
        raise ValueError(f"column 13 must be a JSON object: {line!r}")
    return _build(
        ts, status, size, uri, hops, via, mime, thread, timing, digest, source, notes, extra
    )


def _build(*cols: str) -> CrawlLogLine:
    ts, status, size, uri, hops, via, mime, thread, timing, digest, source, notes, extra = cols
    if not _HOPS.match(hops):
        raise ValueError(f"bad hop path {hops!r}")
    if not _THREAD.match(thread):
        raise ValueError(f"bad thread {thread!r}")
    if timing != "-" and not _TIMING.match(timing):
        raise ValueError(f"bad timing {timing!r}")
    if digest != "-" and not _DIGEST.match(digest):
        raise ValueError(f"bad digest {digest!r}")
    if not mime or " " in mime or ";" in mime:
        raise ValueError(f"bad mime {mime!r}")
    parsed_extra = None
    if extra:
        parsed_extra = json.loads(extra)
        if not isinstance(parsed_extra, dict):
            raise ValueError(f"extra is not a JSON object: {extra!r}")
    return CrawlLogLine(
        time=ts,
        status=int(status),
        size=None if size.strip() == "-" else int(size),
        uri=uri,
        hops=hops,
        via=None if via == "-" else via,
        mime=mime,
        thread=int(thread[1:]),
        timing=None if timing == "-" else timing,
        digest=None if digest == "-" else digest,
        source=None if source == "-" else source,
        annotations=[] if notes == "-" else notes.split(","),
        extra=parsed_extra,
    )


def parse_file(path: Path, *, growing: bool = False) -> list[CrawlLogLine]:
    """Every line of a crawl.log, each strictly parsed.

    For a finished crawl (the default) every line must be complete: a last line without its
    newline is an error. ``growing=True`` reads a crawl.log that a running crawl is still
    writing: a missing file has no lines and a last line without its newline is left out (it
    is being written), as every reader of a growing log does (:mod:`crawler.logs.growing_file`).
    """
    if growing:
        return [parse_line(line) for line in complete_lines(path) if line.strip()]
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        raise ValueError(f"{path}: the last line has no newline: {data[-200:]!r}")
    return [parse_line(raw.decode("utf-8")) for raw in data.split(b"\n") if raw.strip()]


def count_lines(path: Path) -> int:
    """How many complete lines a (growing) log has; 0 if it does not exist yet."""
    return sum(1 for _ in complete_lines(path))
