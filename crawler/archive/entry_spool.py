"""EntrySpool: a WARC file's index entries, kept on disk while the file is written.

The WARC writer keeps, for every append to the current file, the offset and the index entry of
its first record, so that the file can be indexed when it closes without being read again
(:class:`~crawler.archive.indexer.CdxjIndexer`). A file of 1 GB holds some 10^5 appends; kept
as Python tuples that was ~630 bytes each, resident until the file closed: memory that grew
with the crawl's progress. The spool writes each pair, pickled, to an unnamed temporary file
(no name in the directory, gone when closed or when the process ends) through a small write
buffer, so the memory it holds is that buffer whatever the number of entries.

Reading back (:meth:`__iter__`) yields the pairs in the order appended. A write the disk
refuses raises ``OSError`` from :meth:`append`, or, for the last buffered bytes, from reading
back; either way the WARC file is then indexed by reading it (the file set drops the spool, the
indexer falls back).

Thread-safety: none; the owner serialises calls (the WARC file set appends under its lock, and
hands the spool to the indexer's thread only once its file has closed).
"""

from __future__ import annotations

import io
import pickle
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, Generic, TypeVar

T = TypeVar("T")

BUFFER_BYTES = 64 * 1024
"""Write buffer of the spool file: the memory a spool holds."""


class EntrySpool(Generic[T]):
    """An append-only, on-disk sequence of ``(offset, entry)`` pairs (see the module docstring)."""

    def __init__(
        self,
        directory: Path | None = None,
        pack: Callable[[T], Any] | None = None,
        unpack: Callable[[Any], T] | None = None,
    ) -> None:
        """``pack``/``unpack`` (optional, together): an entry as something cheaper to pickle
        (plain tuples: a named tuple pickles by its class, several times slower) and back."""
        self._file: IO[bytes] | None = tempfile.TemporaryFile(  # noqa: SIM115 - closed in close()
            dir=directory, buffering=BUFFER_BYTES
        )
        self._count = 0
        self._pack = pack
        self._unpack = unpack

    def append(self, offset: int, entry: T) -> None:
        """Keep ``(offset, entry)``; ``entry`` must be picklable. Raises OSError if the disk
        refuses the bytes (the spool is then incomplete: close it)."""
        if self._file is None:
            raise ValueError("the entry spool is closed")
        packed = entry if self._pack is None else self._pack(entry)
        self._file.write(pickle.dumps((offset, packed), pickle.HIGHEST_PROTOCOL))
        self._count += 1

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[tuple[int, T]]:
        """The pairs appended so far, in order (reads the file; appends may follow after)."""
        handle = self._file
        if handle is None:
            raise ValueError("the entry spool is closed")
        handle.flush()
        handle.seek(0)
        unpickler = pickle.Unpickler(handle)
        unpack = self._unpack
        try:
            for _ in range(self._count):
                offset, packed = unpickler.load()
                yield offset, packed if unpack is None else unpack(packed)
        finally:
            handle.seek(0, io.SEEK_END)

    def disk_bytes(self) -> int:
        """Bytes the spool holds on disk (buffered bytes included)."""
        return 0 if self._file is None else self._file.tell()

    def close(self) -> None:
        """Drop the entries and the temporary file. Idempotent."""
        handle, self._file = self._file, None
        if handle is not None:
            handle.close()
