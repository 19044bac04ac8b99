"""ChangeReport: ``reports/changes-report.txt`` and ``reports/changes-report.json`` of a recrawl.

The earlier crawl is the one the run's order imported its history from
(``history.import_from``, :func:`~crawler.archive.job_runs.imported_crawl`); a run that
imported none gets no change report. :func:`write_change_report` needs nothing but the two run
directories, once neither crawl is running: it scans every history database of each crawl
(``state/history``, and each ``workers/*/state/history`` of a ``--workers`` crawl) in one
sorted merge (:func:`~crawler.continuity.change_classifier.changes`) and streams each URI to a
spool file per kind, so memory holds the per-host counts only, whatever the number of URIs.

Both files list the new, changed, unchanged and gone URIs with this crawl's and the earlier
crawl's status, and the counts, overall and per host. The JSON document has ``format``,
``crawl``, ``earlier``, ``counts``, ``hosts`` first, then the four lists, one URI object
(``uri``, ``status``, ``earlier_status``) per line, so :func:`read_change_report` can show the
first entries of a report of millions of URIs without loading it. Files are written to temporary
names and renamed. One caller per run at a time.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from crawler.archive.job_runs import imported_crawl
from crawler.continuity.change_classifier import KINDS, Change, changes
from crawler.crawler_error import CrawlerError
from crawler.history import FetchHistoryEntry, scan_fetch_history
from crawler.reports.merged import worker_dirs
from crawler.stats import host_of

CHANGES_TEXT = "changes-report.txt"
CHANGES_JSON = "changes-report.json"
FORMAT = "crawler-changes/1"
_HISTORY = Path("state") / "history"


class ChangeReportError(CrawlerError):
    """The change report cannot be written; the message names the directory and why."""


@dataclass(frozen=True)
class ChangeSummary:
    """What a change report counted, and where it is."""

    crawl: Path
    earlier: Path
    counts: dict[str, int]
    hosts: dict[str, dict[str, int]]
    text_path: Path
    json_path: Path


def crawl_histories(crawl_dir: Path, include: Sequence[Path] = ()) -> list[Path]:
    """The history databases of the crawl in ``crawl_dir`` (its own ``state/history`` and each
    worker's; ``include``: more worker directories, as ``crawler report --include`` takes)."""
    dirs = [crawl_dir, *worker_dirs(crawl_dir, include)]
    return [d / _HISTORY for d in dirs if (d / _HISTORY / "CURRENT").is_file()]


def _status(value: int | None) -> str:
    return "-" if value is None else str(value)


def _json_int(value: int | None) -> str:
    return "null" if value is None else str(int(value))


class ChangeReport:
    """Collects :class:`Change` entries, then writes both files into ``reports_dir``."""

    def __init__(self, reports_dir: Path, crawl: Path, earlier: Path) -> None:
        self.reports_dir = reports_dir
        self.crawl = crawl
        self.earlier = earlier
        self.counts: Counter[str] = Counter(dict.fromkeys(KINDS, 0))
        self.hosts: dict[str, Counter[str]] = {}
        self._prefix: str | None = None
        self._current: Counter[str] = Counter()
        reports_dir.mkdir(parents=True, exist_ok=True)
        self._text: dict[str, IO[str]] = {}
        self._json: dict[str, IO[str]] = {}
        for kind in KINDS:
            self._text[kind] = self._spool()
            self._json[kind] = self._spool()

    def _spool(self) -> IO[str]:
        return tempfile.TemporaryFile(
            "w+", encoding="utf-8", errors="backslashreplace", dir=self.reports_dir
        )

    def add(self, change: Change) -> None:
        """Count ``change`` and spool its lines."""
        kind, uri = change.kind, change.uri
        self.counts[kind] += 1
        self._tally(uri)[kind] += 1
        now, before = _status(change.status), _status(change.earlier_status)
        self._text[kind].write(f"{now:>5} {before:>5} {uri}\n")
        now, before = _json_int(change.status), _json_int(change.earlier_status)
        self._json[kind].write(
            f'{{"uri": {json.dumps(uri)}, "status": {now}, "earlier_status": {before}}}\n'
        )

    def _tally(self, uri: str) -> Counter[str]:
        # URIs come sorted, so a run of them shares "scheme://host:port/": parse it once.
        if self._prefix is None or not uri.startswith(self._prefix):
            host = host_of(uri)
            tally = self.hosts.get(host)
            if tally is None:
                tally = self.hosts[host] = Counter()
            self._current = tally
            slash = uri.find("/", uri.find("//") + 2) if "//" in uri else -1
            self._prefix = uri[: slash + 1] if slash > 0 else None
        return self._current

    def write(self) -> ChangeSummary:
        """Write ``changes-report.txt`` and ``changes-report.json``; the spools are closed."""
        try:
            text_path = self._publish(CHANGES_TEXT, self._write_text)
            json_path = self._publish(CHANGES_JSON, self._write_json)
        finally:
            self.close()
        return ChangeSummary(
            self.crawl,
            self.earlier,
            self._counts(),
            {host: self._counts(tally) for host, tally in sorted(self.hosts.items())},
            text_path,
            json_path,
        )

    def close(self) -> None:
        """Drop the spools. Idempotent."""
        for spool in (*self._text.values(), *self._json.values()):
            spool.close()

    def _counts(self, tally: Counter[str] | None = None) -> dict[str, int]:
        tally = self.counts if tally is None else tally
        return {kind: tally[kind] for kind in KINDS}

    def _publish(self, name: str, write: Any) -> Path:
        path = self.reports_dir / name
        tmp = self.reports_dir / f".{name}.tmp"
        with tmp.open("w", encoding="utf-8", errors="backslashreplace") as out:
            write(out)
        os.replace(tmp, path)
        return path

    def _write_text(self, out: IO[str]) -> None:
        total = sum(self.counts.values())
        out.write("Changes since the earlier crawl\n")
        out.write(f"crawl: {self.crawl}\nearlier crawl: {self.earlier}\n")
        for kind in KINDS:
            out.write(f"{kind}: {self.counts[kind]}\n")
        out.write(f"total: {total}\n\n")
        out.write(f"{'[new]':>8} {'[changed]':>10} {'[unchanged]':>12} {'[gone]':>8} [host]\n")
        for host, t in sorted(self.hosts.items()):
            out.write(
                f"{t['new']:>8} {t['changed']:>10} {t['unchanged']:>12} {t['gone']:>8} {host}\n"
            )
        for kind in KINDS:
            out.write(f"\n{kind} ({self.counts[kind]}): [status now] [earlier status] [URI]\n")
            _copy(self._text[kind], out)

    def _write_json(self, out: IO[str]) -> None:
        head = {
            "format": FORMAT,
            "crawl": str(self.crawl),
            "earlier": str(self.earlier),
            "counts": self._counts(),
            "hosts": {host: self._counts(t) for host, t in sorted(self.hosts.items())},
        }
        out.write(json.dumps(head)[:-1] + ",\n")
        for n, kind in enumerate(KINDS):
            out.write(f'"{kind}": [\n')
            first = True
            spool = self._json[kind]
            spool.seek(0)
            for line in spool:
                if not first:
                    out.write(",\n")
                out.write(line.rstrip("\n"))
                first = False
            out.write("\n]" + (",\n" if n < len(KINDS) - 1 else "\n}\n"))


def _copy(spool: IO[str], out: IO[str]) -> None:
    spool.seek(0)
    while chunk := spool.read(1 << 20):
        out.write(chunk)


def _streams(
    histories: list[Path], opened: list[Iterator[tuple[str, FetchHistoryEntry]]]
) -> list[Iterator[tuple[str, FetchHistoryEntry]]]:
    streams = [scan_fetch_history(path) for path in histories]
    opened.extend(streams)
    return streams


def write_change_report(run_dir: Path, include: Sequence[Path] = ()) -> ChangeSummary | None:
    """Write the change report of the crawl in ``run_dir`` (``include``: more worker
    directories of it) into ``run_dir/reports``; None when its order imported no earlier
    crawl. Raises :class:`ChangeReportError` naming what is missing or unreadable."""
    earlier = imported_crawl(run_dir)
    if earlier is None:
        return None
    if earlier.resolve() == run_dir.resolve():
        raise ChangeReportError(f"{run_dir}: history.import_from names this crawl itself")
    earlier_dbs = crawl_histories(earlier)
    if not earlier_dbs:
        raise ChangeReportError(
            f"{earlier} (history.import_from): no crawl history (state/history) to compare with"
        )
    now_dbs = crawl_histories(run_dir, include)
    if not now_dbs:
        raise ChangeReportError(f"{run_dir}: no crawl history (state/history) to compare")
    report = ChangeReport(run_dir / "reports", run_dir, earlier)
    opened: list[Iterator[tuple[str, FetchHistoryEntry]]] = []
    try:
        for change in changes(_streams(now_dbs, opened), _streams(earlier_dbs, opened)):
            report.add(change)
    except OSError as exc:  # plyvel's IOError: a crawl still holds its history
        report.close()
        raise ChangeReportError(f"cannot read a crawl history: {exc}") from None
    except BaseException:
        report.close()
        raise
    finally:
        for stream in opened:
            with contextlib.suppress(Exception):
                stream.close()  # type: ignore[attr-defined]
    return report.write()


def read_change_report(reports_dir: Path, limit: int = 100) -> dict[str, Any] | None:
    """The change report in ``reports_dir`` with at most ``limit`` entries of each list (the
    counts are always whole); None if there is none. Reads the file line by line.
    Raises :class:`ChangeReportError` if it is not a change report."""
    path = reports_dir / CHANGES_JSON
    try:
        fh = path.open(encoding="utf-8")
    except FileNotFoundError:
        return None
    with fh:
        try:
            doc: dict[str, Any] = json.loads(fh.readline().rstrip().rstrip(",") + "}")
            if doc.get("format") != FORMAT:
                raise ValueError(f"format {doc.get('format')!r}")
            kind = None
            for line in fh:
                stripped = line.rstrip().rstrip(",")
                if stripped.endswith("["):
                    kind = json.loads(stripped[:-1].rstrip().rstrip(":"))
                    doc[kind] = []
                elif stripped.startswith("{") and kind is not None and len(doc[kind]) < limit:
                    doc[kind].append(json.loads(stripped))
        except (ValueError, OSError) as exc:
            raise ChangeReportError(f"{path}: not a change report ({exc})") from None
    return doc
