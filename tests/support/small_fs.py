"""A real, small file system for the full-disk tests: a tmpfs of a few MiB mounted under the
test's directory, and a ballast file that fills it.

Mounting needs root (CI runs as root); where it is impossible the tests that need it are skipped
with the reason (:func:`small_fs` calls ``pytest.skip``).
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

MIB = 1024 * 1024


@contextmanager
def small_fs(mount_point: Path, size_mb: int) -> Iterator[Path]:
    """A fresh tmpfs of ``size_mb`` MiB at ``mount_point``, unmounted afterwards."""
    mount_point.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (the full-disk tests run as root in CI)")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield mount_point
    finally:
        if subprocess.run(["umount", str(mount_point)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mount_point)], capture_output=True)


def free_bytes(path: Path) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


class Ballast:
    """A file that takes a file system's free space, leaving ``leave_bytes`` (0: none)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fill(self, leave_bytes: int = 0) -> None:
        """Grow the ballast until about ``leave_bytes`` are free (whole pages)."""
        with open(self.path, "ab") as fh:
            for _ in range(20):
                want = free_bytes(self.path.parent) - leave_bytes
                if want <= 0:
                    break
                try:
                    os.posix_fallocate(fh.fileno(), fh.seek(0, os.SEEK_END), want)
                    break
                except OSError as exc:
                    # a crawl writing to the same file system took some of it meanwhile
                    if exc.errno != errno.ENOSPC:
                        raise
        if leave_bytes == 0:
            # Whatever fallocate left (metadata rounding): take it with plain writes.
            with open(self.path, "ab", buffering=0) as fh:
                try:
                    while True:
                        fh.write(b"\0" * 4096)
                except OSError:
                    pass

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)
