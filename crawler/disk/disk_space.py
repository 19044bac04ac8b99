"""DiskSpace: free space on the file systems a crawl writes to, and what a full disk looks like.

A run directory may span several file systems (``warcs/`` or ``state/`` symlinked elsewhere):
:class:`DiskSpace` asks each distinct one (by device number) with ``statvfs`` and reports the
fullest. :func:`is_disk_full` recognises the errors a full disk (or an exhausted quota) gives,
whether raised by Python (``OSError`` with ``ENOSPC``/``EDQUOT``) or by a library that only
puts the system's message in its text (LevelDB's ``IO error: …: No space left on device``).

Pure reads of the file system; thread-safe.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_FULL_TEXTS = tuple(os.strerror(code) for code in sorted(FULL_ERRNOS))
MIB = 1024 * 1024


def is_disk_full(exc: BaseException) -> bool:
    """True when ``exc`` says a write failed because the disk (or the user's quota) is full."""
    if isinstance(exc, OSError) and exc.errno in FULL_ERRNOS:
        return True
    text = str(exc)
    return any(full in text for full in _FULL_TEXTS)


def free_bytes(path: Path) -> int:
    """Bytes an unprivileged writer may still use on ``path``'s file system."""
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


@dataclass(frozen=True)
class SpaceReading:
    """The fullest file system of a reading: one of its paths and its free bytes."""

    path: Path
    free_bytes: int

    @property
    def free_mb(self) -> float:
        """Free space in MiB, rounded to 0.1."""
        return round(self.free_bytes / MIB, 1)


class DiskSpace:
    """Free space of the file systems holding ``paths`` (each asked once per reading)."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths

    def lowest(self) -> SpaceReading | None:
        """The file system with the least free space; None if no path can be asked."""
        seen: set[int] = set()
        lowest: SpaceReading | None = None
        for path in self.paths:
            try:
                device = os.stat(path).st_dev
                if device in seen:
                    continue
                seen.add(device)
                free = free_bytes(path)
            except OSError:
                continue
            if lowest is None or free < lowest.free_bytes:
                lowest = SpaceReading(path, free)
        return lowest
