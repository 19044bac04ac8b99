"""CdxjFileIndex: lookups in a sorted CDXJ (or CDX) file of an earlier crawl, in place.

The file is mapped read-only (``mmap``) and searched by binary search over byte offsets: each
step finds the next line start and compares its SURT key, so a lookup reads about
log2(file size) lines (about 30 for a gigabyte) and the file is never loaded whole: the
operating system keeps in its page cache the few pages that lookups touch. A gzipped file
(``.cdxj.gz``; gzip cannot seek) is unpacked once, streaming, into the crawl's
``state/dedup/`` and searched there; so are several files named at once (a directory, or an
earlier run's ``indexes/``, one CDXJ per WARC), merged into one sorted file so that a lookup
stays one binary search. A resumed crawl reuses that file while the sources have the same
sizes and modification times.

The file must be sorted by its lines' bytes, as ``cdxj-indexer --sort``, pywb's ``wb-manager``
and ``LC_ALL=C sort`` leave it. Opening it checks that by sampling line pairs across the file,
so an unsorted index is refused with a message instead of silently finding nothing.

Thread-safety: the map is only read (slices and ``find``, which keep no position), so any
number of threads look up at once; :meth:`close` must come after the last lookup.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import heapq
import json
import mmap
import os
import zlib
from pathlib import Path

from crawler.archive.collection_index import Capture, parse_index_line
from crawler.archive.run_layout import warc_dirs
from crawler.crawler_error import CrawlerError

UNPACK_DIR = "dedup"
"""Directory under ``state/`` where gzipped indexes are unpacked."""
_SORT_SAMPLES = 256
_SCAN_BYTES = 16 * 1024
"""Below this window the binary search hands over to one ``find`` over the window."""
_INDEX_NAMES = (".cdxj", ".cdx", ".cdxj.gz", ".cdx.gz")


class IndexFileError(CrawlerError):
    """The index file cannot be used (missing, unreadable, not sorted); the message says why."""


class CdxjFileIndex:
    """A sorted CDXJ/CDX file, searched in place (see the module docstring)."""

    def __init__(self, path: Path, name: str | None = None) -> None:
        self.path = Path(path)
        self.name = name or str(path)
        self._file = None
        self._map: mmap.mmap | None = None
        try:
            self._file = self.path.open("rb")
            size = os.fstat(self._file.fileno()).st_size
            if size:
                self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
        except OSError as exc:
            self.close()
            raise IndexFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
        self._check_sorted()

    @classmethod
    def open(cls, path: Path, state_dir: Path) -> CdxjFileIndex:
        """Open the index ``path`` names (:func:`index_sources`): one plain file is searched
        where it is; a ``.gz`` file, or several files, are first made into one sorted file under
        ``state_dir/dedup/`` (once: a resumed crawl reuses it while the sources are unchanged)."""
        path = Path(path)
        sources = index_sources(path)
        if len(sources) == 1 and sources[0].suffix != ".gz":
            return cls(sources[0], name=str(path))
        return cls(_prepared(sources, Path(state_dir) / UNPACK_DIR), name=str(path))

    # ----------------------------------------------------------------- lookups
    def find(self, url: str, urlkey: str, digest_b32: str) -> Capture | None:
        """The latest non-revisit line of ``urlkey`` with payload ``digest_b32``, or None."""
        mm = self._map
        if mm is None:
            return None
        prefix = urlkey.encode("utf-8", "surrogateescape") + b" "
        needle = digest_b32.encode("ascii", "replace")
        pos = self._first_line_with(mm, prefix)
        size = len(mm)
        found = None
        while 0 <= pos < size and mm[pos : pos + len(prefix)] == prefix:
            end = mm.find(b"\n", pos)
            end = size if end < 0 else end
            line = mm[pos:end]
            if needle in line:
                capture = parse_index_line(line.decode("utf-8", "replace"), self.name)
                if capture is not None and _b32(capture.digest) == digest_b32:
                    found = capture  # lines of one key are in time order: keep the latest
            pos = end + 1
        return found

    @staticmethod
    def _line_start(mm: mmap.mmap, pos: int) -> int:
        """Offset of the first line starting at or after ``pos``."""
        if pos == 0:
            return 0
        nl = mm.find(b"\n", pos - 1)
        return len(mm) if nl < 0 else nl + 1

    @classmethod
    def _first_line_with(cls, mm: mmap.mmap, prefix: bytes) -> int:
        """Offset of the first line that starts with ``prefix``, or -1.

        Binary search keeps: lines starting before ``line_start(lo)`` are < ``prefix``, lines
        from ``line_start(hi)`` on are >= it; so the first line >= ``prefix`` starts in between.
        Once that window is small, one ``find`` (C speed) of ``"\n" + prefix`` in it replaces
        the last dozen steps: in a sorted file the first line starting with ``prefix`` is that
        first line >= ``prefix``, if any line starts with it at all."""
        size, width = len(mm), len(prefix)
        lo, hi = 0, size
        while hi - lo > _SCAN_BYTES:
            mid = (lo + hi) // 2
            start = cls._line_start(mm, mid)
            if start < size and mm[start : start + width] < prefix:
                lo = mid + 1
            else:
                hi = mid
        first = cls._line_start(mm, lo)
        if mm[first : first + width] == prefix:
            return first
        at = mm.find(b"\n" + prefix, first, cls._line_start(mm, hi) + width)
        return -1 if at < 0 else at + 1

    def _check_sorted(self) -> None:
        mm = self._map
        if mm is None:
            return
        size = len(mm)
        step = max(size // _SORT_SAMPLES, 1)
        for pos in range(0, size, step):
            start = self._line_start(mm, pos)
            mid = mm.find(b"\n", start)
            if start >= size or mid < 0:
                break
            first, second = self._key_at(mm, start), self._key_at(mm, mid + 1)
            if second and first > second:
                later, earlier = second.decode(errors="replace"), first.decode(errors="replace")
                raise IndexFileError(
                    f"{self.name}: not sorted (near byte {start}, {later!r} follows {earlier!r}): "
                    "sort it first, e.g. "
                    "`LC_ALL=C sort -o sorted.cdxj index.cdxj` or `cdxj-indexer --sort`"
                )

    @staticmethod
    def _key_at(mm: mmap.mmap, start: int) -> bytes:
        if start >= len(mm):
            return b""
        end = mm.find(b" ", start, start + 4096)
        return b"" if end < 0 else mm[start:end]

    def close(self) -> None:
        """Unmap and close the file. Idempotent; never raises."""
        for thing in (self._map, self._file):
            if thing is not None:
                with contextlib.suppress(Exception):
                    thing.close()
        self._map = None
        self._file = None


def _b32(digest: str) -> str:
    return digest.rpartition(":")[2].strip().upper()


def index_sources(path: Path) -> list[Path]:
    """The index files ``path`` names: itself (a file); a run directory's indexes (``indexes/``
    and each ``workers/*/indexes/``, as ``crawler index`` writes them); or a directory's
    ``*.cdxj``/``*.cdx`` files (also ``.gz``). Raises :class:`IndexFileError` for none."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise IndexFileError(f"{path}: no such index file or directory")
    dirs = [d.indexes for d in warc_dirs(path)] or [path]
    found = sorted(
        p for d in dirs if d.is_dir() for p in d.iterdir() if p.name.endswith(_INDEX_NAMES)
    )
    if not found:
        raise IndexFileError(
            f"{path}: no CDXJ index in it (index an earlier run with `crawler index RUN_DIR`)"
        )
    return found


def _prepared(sources: list[Path], directory: Path) -> Path:
    """One sorted plain file holding the lines of ``sources`` (gzipped or not, each sorted):
    made in ``directory`` by a streaming merge (a few lines of each file in memory at a time),
    or reused when a ``.source`` file beside it records the same sources, sizes and mtimes."""
    stamp = []
    for source in sources:
        stat = source.stat()
        stamp.append([str(source.resolve()), stat.st_size, stat.st_mtime_ns])
    tag = hashlib.sha1(json.dumps(stamp).encode(), usedforsecurity=False).hexdigest()[:12]
    name = sources[0].name.removesuffix(".gz") if len(sources) == 1 else "merged.cdxj"
    target = directory / f"{tag}-{name}"
    marker = target.with_name(target.name + ".source")
    with contextlib.suppress(OSError, ValueError):
        if target.is_file() and json.loads(marker.read_text()) == stamp:
            return target
    directory.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    try:
        with contextlib.ExitStack() as stack:
            inputs = [
                stack.enter_context(gzip.open(p, "rb") if p.suffix == ".gz" else p.open("rb"))  # noqa: SIM115
                for p in sources
            ]
            dst = stack.enter_context(partial.open("wb"))
            lines = inputs[0] if len(inputs) == 1 else heapq.merge(*inputs)
            for line in lines:
                dst.write(line if line.endswith(b"\n") else line + b"\n")
    except (OSError, EOFError, zlib.error) as exc:
        partial.unlink(missing_ok=True)
        raise IndexFileError(f"{', '.join(map(str, sources))}: cannot read: {exc}") from None
    partial.replace(target)
    marker.write_text(json.dumps(stamp))
    return target
