"""Disk space: the guard that pauses a crawl on a nearly full disk, and the wait of writers
that hit a full one (:mod:`crawler.disk.disk_guard`, :mod:`crawler.disk.space_wait`)."""

from crawler.disk.disk_guard import DiskGuard
from crawler.disk.disk_space import DiskSpace, SpaceReading, free_bytes, is_disk_full
from crawler.disk.space_wait import SPACE_WAIT, SpaceWait

__all__ = [
    "SPACE_WAIT",
    "DiskGuard",
    "DiskSpace",
    "SpaceReading",
    "SpaceWait",
    "free_bytes",
    "is_disk_full",
]
