"""CdxjFileIndex: lookups in a sorted CDXJ (or CDX) file of an earlier crawl, in place.

The file is mapped read-only (``mmap``) and searched by binary search over byte offsets: each
step finds the next line start and compares its SURT key, so a lookup reads about
log2(file size) lines (about 30 for a gigabyte) and the file is never loaded whole: the
operating system keeps in its page cache the few pages that lookups touch. A gzipped file
(``.cdxj.gz``; gzip cannot seek) is unpacked once, streaming, into the crawl's
``state/dedup/`` and searched there; a resumed crawl reuses the copy while the source has the
same size and modification time.

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
import json
import mmap
import os
import shutil
from pathlib import Path

from crawler.archive.collection_index import Capture, parse_index_line

UNPACK_DIR = "dedup"
"""Directory under ``state/`` where gzipped indexes are unpacked."""
_SORT_SAMPLES = 256


class IndexFileError(Exception):
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
        """Open ``path``; a ``.gz`` file is first unpacked under ``state_dir/dedup/``."""
        path = Path(path)
        if not path.is_file():
            raise IndexFileError(f"{path}: no such index file")
        if path.suffix != ".gz":
            return cls(path)
        return cls(_unpacked(path, Path(state_dir) / UNPACK_DIR), name=str(path))

    # ----------------------------------------------------------------- lookups
    def find(self, url: str, urlkey: str, digest_b32: str) -> Capture | None:
        """The latest non-revisit line of ``urlkey`` with payload ``digest_b32``, or None."""
        mm = self._map
        if mm is None:
            return None
        prefix = urlkey.encode("utf-8", "surrogateescape") + b" "
        needle = digest_b32.encode("ascii", "replace")
        pos = self._lower_bound(mm, prefix)
        size = len(mm)
        found = None
        while pos < size and mm[pos : pos + len(prefix)] == prefix:
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
    def _lower_bound(cls, mm: mmap.mmap, prefix: bytes) -> int:
        """Offset of the first line whose first bytes are >= ``prefix`` (or the file's size)."""
        size, width = len(mm), len(prefix)
        lo, hi = 0, size
        while lo < hi:
            mid = (lo + hi) // 2
            start = cls._line_start(mm, mid)
            if start < size and mm[start : start + width] < prefix:
                lo = mid + 1
            else:
                hi = mid
        return cls._line_start(mm, lo)

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


def _unpacked(source: Path, directory: Path) -> Path:
    """The plain copy of gzipped ``source`` in ``directory``, made (streaming) if missing or
    stale; a ``.source`` file beside it records the size and mtime it was made from."""
    stat = source.stat()
    resolved = str(source.resolve())
    stamp = {"path": resolved, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    tag = hashlib.sha1(resolved.encode(), usedforsecurity=False).hexdigest()[:12]
    target = directory / f"{tag}-{source.name[: -len('.gz')]}"
    marker = target.with_name(target.name + ".source")
    with contextlib.suppress(OSError, ValueError):
        if target.is_file() and json.loads(marker.read_text()) == stamp:
            return target
    directory.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    try:
        with gzip.open(source, "rb") as src, partial.open("wb") as dst:
            shutil.copyfileobj(src, dst, 1024 * 1024)
    except (OSError, EOFError) as exc:
        partial.unlink(missing_ok=True)
        raise IndexFileError(f"{source}: cannot unpack: {exc}") from None
    partial.replace(target)
    marker.write_text(json.dumps(stamp))
    return target
