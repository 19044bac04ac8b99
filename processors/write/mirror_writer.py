"""MirrorWriterProcessor: successful http(s) bodies as plain files under ``<run dir>/mirror``.

For each URI with an HTTP 2xx status and a recording, writes the body (content-encoding undone,
capped at ``max_decoded_bytes``; identity bodies copied as received) to
``mirror/<host>[_port]/<path>`` as mapped by :class:`MirrorPathMapper`, which can never leave the
mirror directory. Sets ``curi.extra_info['mirrorPath']`` (relative to the run directory). A file
that must become a directory (``/a`` then ``/a/b``) is moved to ``a/index.html``; a URI whose
file is an existing directory is written as its ``index.html``. Symbolic links inside the mirror
are never followed (the write is refused). An I/O error becomes a non-fatal error and the
annotation ``unwritten:mirror``.

Thread-safety: the body is written to a temporary file beside the mirror without any lock; only
the directory fix-ups and the final rename (no network, a few syscalls) run under one lock, so
two URIs never race on the same directory. Heritrix counterpart: ``MirrorWriterProcessor``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
import traceback
import uuid
from pathlib import Path
from typing import Any

from pydantic import Field

from crawler import CrawlURI, Params, Processor, ProcessorContext
from processors.write.mirror_path import MirrorPathMapper

_COPY_CHUNK_BYTES = 1024 * 1024


class MirrorWriterParams(Params):
    """Parameters of :class:`MirrorWriterProcessor`."""

    directory: str = Field("mirror", min_length=1, description="mirror root, under the run dir")
    index_name: str = Field("index.html", min_length=1, description="file name of a directory URI")
    windows_safe: bool = Field(
        True, description='also escape <>:"|?*, trailing dots/spaces and names like CON, LPT1'
    )
    max_segment_bytes: int = Field(
        255, ge=64, le=255, description="longer file names are shortened with a hash"
    )
    max_path_bytes: int = Field(
        1024, ge=255, le=3800, description="longer relative paths become _long/<sha1>"
    )
    max_decoded_bytes: int = Field(
        100_000_000, gt=0, description="cap on a content-encoded body once decoded"
    )


class MirrorWriterProcessor(Processor[MirrorWriterParams]):
    """Writes fetched bodies into a browsable mirror (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        p = self.params
        self._mapper = MirrorPathMapper(
            index_name=p.index_name,
            windows_safe=p.windows_safe,
            max_segment_bytes=p.max_segment_bytes,
            max_path_bytes=p.max_path_bytes,
        )
        self._lock = threading.Lock()
        self._root = Path(p.directory)
        self._spool_dir = self._root
        self._run_dir = Path()
        self._written = 0
        self._bytes = 0

    def start(self, ctx: ProcessorContext) -> None:
        super().start(ctx)
        root = Path(self.params.directory)
        root = root if root.is_absolute() else ctx.run_dir / root
        root.mkdir(parents=True, exist_ok=True)
        self._root = root.resolve()
        self._spool_dir = self._root.with_name(self._root.name + ".tmp")
        self._spool_dir.mkdir(exist_ok=True)
        self._run_dir = ctx.run_dir.resolve()

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self._spool_dir.rmdir()  # only if empty: leftovers mean a write was cut short

    def report(self) -> list[str]:
        lines = super().report()
        lines.append(f"  files written: {self._written} ({self._bytes} bytes)")
        return lines

    def should_process(self, curi: CrawlURI) -> bool:
        return 200 <= curi.status < 300 and curi.recording is not None

    def inner_process(self, curi: CrawlURI) -> None:
        relative = self._mapper.map(curi.uri)
        if relative is None:
            return
        spool = None
        try:
            spool, size = self._spool_body(curi)
            with self._lock:
                target = self._place(relative.parts)
                os.replace(spool, target)
                spool = None
                self._written += 1
                self._bytes += size
        except OSError as exc:
            curi.nonfatal_errors.append((exc, traceback.format_exc()))
            curi.annotate("unwritten:mirror")
            return
        finally:
            if spool is not None:
                with contextlib.suppress(OSError):
                    os.unlink(spool)
        try:
            shown = str(target.relative_to(self._run_dir))
        except ValueError:
            shown = str(target)
        curi.extra_info["mirrorPath"] = shown

    def _spool_body(self, curi: CrawlURI) -> tuple[str, int]:
        """The body in a temporary file beside the mirror; returns its path and size."""
        rec = curi.recording
        encoding = curi.header("Content-Encoding")
        fd, name = tempfile.mkstemp(prefix="body-", dir=self._spool_dir)
        with os.fdopen(fd, "wb") as out:
            if encoding and encoding.strip().lower() not in ("identity", ""):
                data: bytes = rec.decoded_body(encoding, self.params.max_decoded_bytes)
                out.write(data)
                return name, len(data)
            shutil.copyfileobj(rec.body_stream(), out, _COPY_CHUNK_BYTES)
            return name, int(rec.body_size)

    def _place(self, parts: tuple[str, ...]) -> Path:
        """Create the directories of ``parts`` under the root, fixing file/directory clashes.

        Returns the file path to write. Raises ``OSError`` rather than follow a symlink.
        """
        current = self._root
        index = self._mapper.index_name
        for part in parts[:-1]:
            current = current / part
            if current.is_symlink():
                raise OSError(f"mirror path component is a symlink: {current}")
            if current.is_dir():
                continue
            if current.exists():
                # "/a" was written as a file and "/a/b" needs "a" as a directory.
                moved = self._spool_dir / f"move-{uuid.uuid4().hex}"
                os.replace(current, moved)
                current.mkdir()
                os.replace(moved, current / index)
            else:
                current.mkdir()
        target = current / parts[-1]
        while target.is_dir() and not target.is_symlink():
            target = target / index
        if target.is_symlink():
            raise OSError(f"mirror target is a symlink: {target}")
        return target
