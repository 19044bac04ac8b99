"""WaczPackager: a run's WARCs as one WACZ 1.1.1 package (``crawler wacz RUN_DIR -o FILE``), or
several runs' (``crawler wacz JOB_DIR -o FILE --runs all``: every finished run of the job).

The ZIP holds ``archive/<WARC>`` (every WARC of the run and of its workers, stored, not
deflated; a ``.open`` file left by a kill is packaged under its closed name),
``indexes/index.cdx.gz`` (stored) with ``indexes/index.idx`` (the compressed "ZipNum" CDXJ
layout replay tools page through: blocks of 300 sorted lines, each a gzip member, and one
``.idx`` line per block), ``pages/pages.jsonl`` (:mod:`crawler.archive.pages`),
``datapackage.json`` (every file's path, size and ``sha256:`` hash, ``wacz_version`` 1.1.1) and
``datapackage-digest.json`` (the hash of ``datapackage.json``). A damaged or ``.open`` WARC
goes in cut to its last whole record (the file on disk is left as it is). The indexes come from
the run's ``indexes/*.cdxj``, brought up to date first
(:func:`~crawler.archive.run_index.index_run`). Packaging several runs merges their indexes into
one, so each crawl of a URI is a capture of its own and a revisit finds the record it refers to
in an earlier run's WARC.

Written with :mod:`zipfile` rather than the ``wacz`` package: that package re-reads and
re-indexes every WARC (the run's indexes exist already) and brings the ``frictionless`` stack
(~40 packages) into the crawler's environment; ``wacz validate`` is still the test of the
output. The package is written to ``FILE.tmp`` and renamed. One caller at a time.
"""

from __future__ import annotations

import datetime
import hashlib
import heapq
import io
import json
import os
import re
import tempfile
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from crawler import __version__
from crawler.archive.indexer import CdxjIndexer
from crawler.archive.pages import IndexLine, find_pages, pages_jsonl
from crawler.archive.run_index import index_run
from crawler.archive.run_layout import index_path, warc_dirs
from crawler.crawler_error import CrawlerError

WACZ_VERSION = "1.1.1"
_BLOCK_LINES = 300
_CHUNK_BYTES = 1024 * 1024
_RESOURCE_NAME = re.compile(r"[^-a-z0-9._/]")


class NothingToPackageError(CrawlerError):
    """The run holds no WARC to package."""


@dataclass
class WaczSummary:
    """What went into a package."""

    path: Path
    warcs: int = 0
    records: int = 0
    pages: int = 0
    bytes: int = 0
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Member:
    source: Path
    name: str  # file name under archive/
    index: Path
    whole_bytes: int | None  # a damaged or .open file: only its whole records are packaged


class WaczPackager:
    """Packages one run directory, or several (``run_dir`` a list, oldest first; see the module
    docstring)."""

    def __init__(self, run_dir: Path | Sequence[Path], title: str | None = None) -> None:
        self.runs = [run_dir] if isinstance(run_dir, Path) else list(run_dir)
        if not self.runs:
            raise NothingToPackageError("no run directory to package")
        self.run_dir = self.runs[0]
        self.title = title or self.run_dir.resolve().name

    def write(self, target: Path) -> WaczSummary:
        """Write the package to ``target``; NothingToPackageError if the runs have no WARC."""
        summary = WaczSummary(target)
        damaged: set[Path] = set()
        for run in self.runs:
            report = index_run(run)
            summary.problems += report.problems
            damaged |= {r.warc for r in report.indexed if r.problem}
        members = self._members(damaged)
        if not members:
            where = ", ".join(str(r) for r in self.runs)
            raise NothingToPackageError(f"{where}: no WARC file to package")
        summary.warcs = len(members)
        resources: list[dict[str, object]] = []
        temp = target.with_name(target.name + ".tmp")
        with zipfile.ZipFile(temp, "w", allowZip64=True) as package:
            for member in members:
                name = f"archive/{member.name}"
                _add(package, name, member.source, resources, member.whole_bytes)
            merged = list(heapq.merge(*(_renamed(m) for m in members), key=lambda t: t[0]))
            lines = [line for line, _ in merged]
            summary.records = len(lines)
            self._write_indexes(package, lines, resources)
            # Titles are read from the source WARCs, under their names on disk.
            pages = find_pages(
                IndexLine.parse(line, m.source.parent, m.source.name) for line, m in merged
            )
            summary.pages = len(pages)
            _add_bytes(
                package, "pages/pages.jsonl", "".join(pages_jsonl(pages)).encode(), resources
            )
            package_doc = self._datapackage(resources, pages[0].url if pages else None)
            data = json.dumps(package_doc, indent=2).encode()
            package.writestr(_info("datapackage.json", deflate=True), data)
            digest = {"path": "datapackage.json", "hash": _sha256(data)}
            package.writestr(_info("datapackage-digest.json", deflate=True), json.dumps(digest))
        os.replace(temp, target)
        summary.bytes = target.stat().st_size
        return summary

    # ----------------------------------------------------------------- parts
    def _members(self, damaged: set[Path]) -> list[_Member]:
        members: list[_Member] = []
        taken: set[str] = set()
        for wdir in [w for run in self.runs for w in warc_dirs(run)]:
            for warc in wdir.warc_files():
                index = index_path(wdir.indexes, warc)
                if not index.is_file() or index.stat().st_size == 0:
                    continue  # unreadable or empty: reported by index_run
                whole: int | None = None
                if warc in damaged or warc.name.endswith(".open"):
                    with tempfile.TemporaryDirectory() as scratch:
                        whole = CdxjIndexer().index(warc, Path(scratch)).whole_bytes
                name = warc.name.removesuffix(".open")
                if name in taken:
                    name = f"{wdir.warcs.parent.name}-{name}"
                taken.add(name)
                members.append(_Member(warc, name, index, whole))
        return members

    def _write_indexes(
        self, package: zipfile.ZipFile, lines: list[str], resources: list[dict[str, object]]
    ) -> None:
        idx = io.StringIO()
        with tempfile.TemporaryFile() as blocks:
            meta = {"format": "cdxj-gzip-1.0", "filename": "index.cdx.gz"}
            idx.write(f"!meta 0 {json.dumps(meta)}\n")
            offset = 0
            for start in range(0, len(lines), _BLOCK_LINES):
                block = lines[start : start + _BLOCK_LINES]
                data = _gzip("".join(line + "\n" for line in block).encode())
                blocks.write(data)
                prefix = " ".join(block[0].split(" ", 2)[:2])
                entry = {"offset": offset, "length": len(data), "digest": _sha256(data)}
                idx.write(f"{prefix} {json.dumps(entry)}\n")
                offset += len(data)
            blocks.seek(0)
            _add_stream(package, "indexes/index.cdx.gz", blocks, resources, stored=True)
        _add_bytes(package, "indexes/index.idx", idx.getvalue().encode(), resources)

    def _datapackage(
        self, resources: list[dict[str, object]], main_url: str | None
    ) -> dict[str, object]:
        doc: dict[str, object] = {
            "profile": "data-package",
            "resources": resources,
            "title": self.title,
            "created": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "wacz_version": WACZ_VERSION,
            "software": f"crawler/{__version__}",
        }
        if main_url:
            doc["mainPageURL"] = main_url
        return doc


def _renamed(member: _Member) -> Iterator[tuple[str, _Member]]:
    """The member's index lines (sorted), naming the WARC as packaged under ``archive/``."""
    with member.index.open(encoding="utf-8") as fh:
        for line in fh:
            key, ts, data = line.rstrip("\n").split(" ", 2)
            fields = json.loads(data)
            fields["filename"] = member.name
            yield f"{key} {ts} {json.dumps(fields)}", member


def _info(name: str, deflate: bool) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, datetime.datetime.now().timetuple()[:6])
    info.compress_type = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
    return info


def _resource(path: str, size: int, digest: str) -> dict[str, object]:
    name = _RESOURCE_NAME.sub("-", Path(path).name.lower())
    return {"name": name, "path": path, "hash": digest, "bytes": size}


def _add(
    package: zipfile.ZipFile,
    name: str,
    source: Path,
    resources: list[dict[str, object]],
    length: int | None,
) -> None:
    """Add ``source`` (its first ``length`` bytes if given) stored, not deflated."""
    with source.open("rb") as fh:
        stream: IO[bytes] = fh if length is None else io.BytesIO(fh.read(length))
        _add_stream(package, name, stream, resources, stored=True)


def _add_stream(
    package: zipfile.ZipFile,
    name: str,
    stream: IO[bytes],
    resources: list[dict[str, object]],
    stored: bool,
) -> None:
    sha = hashlib.sha256()
    size = 0
    with package.open(_info(name, deflate=not stored), "w", force_zip64=True) as dst:
        while chunk := stream.read(_CHUNK_BYTES):
            sha.update(chunk)
            dst.write(chunk)
            size += len(chunk)
    resources.append(_resource(name, size, "sha256:" + sha.hexdigest()))


def _add_bytes(
    package: zipfile.ZipFile, name: str, data: bytes, resources: list[dict[str, object]]
) -> None:
    package.writestr(_info(name, deflate=True), data)
    resources.append(_resource(name, len(data), _sha256(data)))


def _sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _gzip(data: bytes) -> bytes:
    import zlib

    compressor = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


def package_at_end(run_dir: Path, name: str, wacz_file: str | None) -> WaczSummary:
    """The end-of-crawl WACZ the order asks for (``archive.wacz``): ``run_dir / wacz_file``
    (default ``<name>.wacz``). Raises what :meth:`WaczPackager.write` raises."""
    target = run_dir / (wacz_file or f"{name}.wacz")
    return WaczPackager(run_dir, title=name).write(target)
