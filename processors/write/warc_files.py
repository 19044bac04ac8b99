"""WARCFileSet: the WARC files of one writer — naming, ``.open`` suffix, warcinfo, rollover.

Files are named from a template (``{prefix}-{timestamp17}-{serial:05d}-{pid}~{hostname}`` by
default; timestamp17 unique per writer, serial increasing from 0) plus ``.warc.gz`` / ``.warc``,
carry ``.open`` while written and lose it on close; a write error renames the file ``.invalid``
and the next append starts a new file. A full disk is not such an error: the file is cut back to
where the failed append began (no half record stays in it), the append waits for space outside
the lock (:class:`~crawler.disk.SpaceWait`) and is made again, so a capture is never dropped and
the file stays valid. Every file begins with the warcinfo record made by the
``warcinfo`` callable. Before each append (one URI's records), a file already past
``max_file_size_bytes`` is closed, so a file exceeds the limit by at most one URI's records.
``on_closed`` (optional) is called with each closed file's final path and the ``(offset,
entry)`` pairs of its appends, under the lock: it must be quick (the writer hands them to a
background indexer). The pairs wait on disk, not in memory
(:class:`~crawler.archive.entry_spool.EntrySpool`, an unnamed temporary file in the WARC
directory, closed by whoever receives it); if the spool cannot be written (a full disk),
``on_closed`` gets None instead and the indexer reads the file.

Thread-safe: :meth:`append` copies an already-built spool under one lock (no compression or
digesting under it). Heritrix counterpart: WebArchive-Commons ``WriterPoolMember``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO

from crawler.archive.entry_spool import EntrySpool
from crawler.archive.indexer import LocatedEntry, pack_located, unpack_located
from crawler.disk import SPACE_WAIT, is_disk_full
from processors.write.warc_records import timestamp17

_COPY_CHUNK_BYTES = 1024 * 1024


class WARCFileSet:
    """The current WARC file and the ones before it (see the module docstring)."""

    def __init__(
        self,
        directory: Path,
        *,
        prefix: str,
        template: str,
        compress: bool,
        max_file_size_bytes: int,
        warcinfo: Callable[[str], bytes],
        now_s: Callable[[], float],
        on_closed: Callable[[Path, EntrySpool[LocatedEntry | None] | None], None] | None = None,
    ) -> None:
        self.directory = directory
        self._prefix = prefix
        self._template = template
        self._suffix = ".warc.gz" if compress else ".warc"
        self._max_bytes = max_file_size_bytes
        self._warcinfo = warcinfo
        self._now_s = now_s
        self._on_closed = on_closed
        self._spool: EntrySpool[LocatedEntry | None] | None = None
        self._hostname = socket.gethostname()
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = None
        self._offset = 0
        self._path: Path | None = None
        self._serial = 0
        self._last_stamp = ""
        self.bytes_written = 0
        self.files_closed = 0
        self.warcinfo_records = 0

    @property
    def hostname(self) -> str:
        """The host name written in file names and warcinfo."""
        return self._hostname

    @property
    def files_opened(self) -> int:
        """Files begun so far (closed, invalid or current)."""
        return self._serial

    def append(
        self, spool: IO[bytes], size: int, entry: LocatedEntry | None = None
    ) -> tuple[str, int]:
        """Copy ``size`` bytes of ``spool`` (whole records) into the current file.

        Returns the file's final name (without ``.open``) and the offset the bytes start at.
        ``entry`` (optional) is kept with that offset and handed to ``on_closed`` with the
        file's other entries. A full disk makes it wait for space and try again (the file cut
        back first); on any other ``OSError`` the file is marked ``.invalid`` and the error
        re-raised.
        """
        # An in-memory spool (a BytesIO, or a SpooledTemporaryFile not rolled over) goes out in
        # one write (one system call under the lock).
        getvalue = getattr(spool, "getvalue", None) or getattr(
            getattr(spool, "_file", None), "getvalue", None
        )
        data: bytes | None = getvalue() if getvalue is not None else None
        while True:
            with self._lock:
                try:
                    return self._append_locked(spool, size, data, entry)
                except OSError as exc:
                    if not is_disk_full(exc):
                        self._invalidate()
                        raise
                    full = exc
            SPACE_WAIT.wait(self.directory, "warc", full, size)
            if data is None:
                spool.seek(0)

    def _append_locked(
        self, spool: IO[bytes], size: int, data: bytes | None, entry: LocatedEntry | None
    ) -> tuple[str, int]:
        if self._file is not None and self._offset > self._max_bytes:
            self._close_file()
        if self._file is None:
            self._open_file()
        assert self._file is not None and self._path is not None
        offset = self._offset
        try:
            if data is not None:
                _write_all(self._file, data if len(data) == size else data[:size])
            else:
                while chunk := spool.read(_COPY_CHUNK_BYTES):
                    _write_all(self._file, chunk)
        except OSError as exc:
            if is_disk_full(exc):
                self._cut_back(offset)
            raise
        self._offset += size
        if self._spool is not None:
            try:
                self._spool.append(offset, entry)
            except OSError:  # the file is indexed by reading it instead
                self._spool.close()
                self._spool = None
        self.bytes_written += size
        return self._path.name[: -len(".open")], offset

    def close(self) -> None:
        """Close the current file (dropping ``.open``). Idempotent; never raises."""
        with self._lock, contextlib.suppress(OSError):
            self._close_file()

    # ----------------------------------------------------------------- under the lock
    def _open_file(self) -> None:
        stamp = timestamp17(self._now_s())
        if stamp <= self._last_stamp:
            stamp = str(int(self._last_stamp) + 1)
        self._last_stamp = stamp
        base = self._template.format(
            prefix=self._prefix,
            timestamp17=stamp,
            serial=self._serial,
            pid=os.getpid(),
            hostname=self._hostname,
        )
        self._serial += 1
        name = base + self._suffix
        path = self.directory / (name + ".open")
        # Unbuffered: each append is one system call, and the offset is counted, not asked for.
        handle = open(path, "xb", buffering=0)  # noqa: SIM115 - closed in _close_file
        info = self._warcinfo(name)
        try:
            _write_all(handle, info)
        except OSError as exc:
            if not is_disk_full(exc):
                self._file, self._path = handle, path
                raise
            # No room for even the warcinfo record: no file; the same name is tried again.
            handle.close()
            path.unlink(missing_ok=True)
            self._serial -= 1
            raise
        self._file, self._path = handle, path
        if self._on_closed is not None:
            try:
                self._spool = EntrySpool(self.directory, pack_located, unpack_located)
            except OSError:
                self._spool = None  # the file is indexed by reading it instead
        self._offset = len(info)
        self.bytes_written += len(info)
        self.warcinfo_records += 1

    def _close_file(self) -> None:
        handle, path = self._file, self._path
        self._file = self._path = None
        if handle is None or path is None:
            return
        handle.close()
        closed = path.with_name(path.name[: -len(".open")])
        os.replace(path, closed)
        self.files_closed += 1
        spool, self._spool = self._spool, None
        if self._on_closed is not None:
            self._on_closed(closed, spool)
        elif spool is not None:
            spool.close()

    def _cut_back(self, offset: int) -> None:
        """Drop what a failed append left past ``offset`` (a half record) from the file."""
        assert self._file is not None
        try:
            os.ftruncate(self._file.fileno(), offset)
            self._file.seek(offset)
        except OSError:
            self._invalidate()
            raise

    def _invalidate(self) -> None:
        handle, path = self._file, self._path
        self._file = self._path = None
        if self._spool is not None:
            self._spool.close()
            self._spool = None
        if handle is not None:
            with contextlib.suppress(OSError):
                handle.close()
        if path is not None:
            with contextlib.suppress(OSError):
                os.replace(path, path.with_name(path.name[: -len(".open")] + ".invalid"))


def _write_all(handle: IO[bytes], data: bytes) -> None:
    """Write all of ``data`` to an unbuffered file (a raw write may take only part of it)."""
    view = memoryview(data)
    while view:
        written = handle.write(view)
        if not written:
            raise OSError(f"no progress writing {getattr(handle, 'name', 'a WARC file')}")
        view = view[written:]
