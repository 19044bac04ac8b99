"""GlibcMalloc: the knobs of glibc's allocator that bound a long crawl's C heap.

Python's own small objects live in its arenas; everything larger (response bodies, page
buffers) and every C library's memory (OpenSSL connections, LevelDB's caches and memtables,
the HTML parser) comes from ``malloc``. glibc gives each thread that contends for the heap an
arena of its own, up to 8 per core, and a freed block inside an arena returns to the system
only when the arena's top is free. With hundreds of ToeThreads the arenas multiply and their
free holes stay resident: RSS climbs for hours although live data does not.

* :meth:`set_arena_max` caps the number of arenas (``mallopt(M_ARENA_MAX)``); threads beyond
  the cap share the existing ones. Affects arenas created afterwards, so call it early.
* :meth:`set_mmap_threshold` fixes the size from which a block is mmapped of its own
  (``mallopt(M_MMAP_THRESHOLD)``) and freed straight back to the system. glibc's default starts
  at 128 KiB and rises to the size of every larger mmapped block freed (up to 32 MiB): after the
  first multi-MB page the crawl's page-sized buffers come from the arenas, and a burst of big
  pages in flight on hundreds of threads leaves their arenas holding hundreds of MB of free
  holes the trim cannot return whole. A fixed threshold stops the rise.
* :meth:`set_trim_threshold` sets how much free memory the top of an arena may hold before
  ``free`` gives it back to the system by itself (``mallopt(M_TRIM_THRESHOLD)``). Fixing the
  mmap threshold also fixes this one, at glibc's starting 128 KiB: the heap's top, which page
  buffers of hundreds of threads push up and down all the time, is then handed back and
  faulted in again (zeroed by the kernel) many thousand times a second.
* :meth:`trim` (``malloc_trim(0)``) gives the free pages inside every arena back to the system
  (``madvise(MADV_DONTNEED)``), not only the top of the main heap.
* :meth:`usage` (``mallinfo2()``) says where the C heap's bytes are: in use, free holes inside
  the arenas, mmapped blocks (for benchmarks and tests that tell a leak from fragmentation).

Thread-safety: both calls are thread-safe in glibc (each arena is trimmed under its own lock).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform
from dataclasses import dataclass

M_ARENA_MAX = -8
"""glibc's ``mallopt`` parameter number for the arena cap (malloc.h)."""
M_MMAP_THRESHOLD = -3
"""glibc's ``mallopt`` parameter number for the mmap threshold (malloc.h)."""
M_TRIM_THRESHOLD = -1
"""glibc's ``mallopt`` parameter number for the trim threshold (malloc.h)."""


class _Mallinfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd",
            "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost",
        )
    ]  # fmt: skip


@dataclass(frozen=True, slots=True)
class HeapUsage:
    """glibc's heap over all arenas, in bytes."""

    in_use: int
    """Handed out by ``malloc`` and not freed (``uordblks``, mmapped blocks included)."""
    free: int
    """Free holes inside the arenas (``fordblks``)."""
    mmapped: int
    """In blocks mmapped of their own (``hblkhd``)."""


class GlibcMalloc:
    """glibc's ``mallopt``/``malloc_trim``; :meth:`load` returns None on another C library."""

    def __init__(self, libc: ctypes.CDLL) -> None:
        self._mallopt = libc.mallopt
        self._mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        self._mallopt.restype = ctypes.c_int
        self._trim = libc.malloc_trim
        self._trim.argtypes = [ctypes.c_size_t]
        self._trim.restype = ctypes.c_int
        self._mallinfo2 = getattr(libc, "mallinfo2", None)  # glibc >= 2.33
        if self._mallinfo2 is not None:
            self._mallinfo2.argtypes = []
            self._mallinfo2.restype = _Mallinfo2

    @classmethod
    def load(cls) -> GlibcMalloc | None:
        """The process's glibc, or None (musl, macOS, Windows: nothing to tune)."""
        if platform.libc_ver()[0] != "glibc":
            return None
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            return cls(libc)
        except (OSError, AttributeError):
            return None

    def set_arena_max(self, arenas: int) -> bool:
        """Cap the malloc arenas at ``arenas`` (>= 1); True if glibc accepted it."""
        return bool(self._mallopt(M_ARENA_MAX, max(1, arenas)))

    def set_mmap_threshold(self, size_bytes: int) -> bool:
        """Blocks of ``size_bytes`` and more are mmapped and unmapped when freed (glibc caps
        the value at 32 MiB); True if glibc accepted it."""
        return bool(self._mallopt(M_MMAP_THRESHOLD, max(0, size_bytes)))

    def set_trim_threshold(self, size_bytes: int) -> bool:
        """Free memory at the top of an arena goes back to the system by itself only beyond
        ``size_bytes``; True if glibc accepted it."""
        return bool(self._mallopt(M_TRIM_THRESHOLD, max(0, size_bytes)))

    def trim(self) -> bool:
        """Return the free memory of every arena to the system; True if some was released."""
        return bool(self._trim(0))

    def usage(self) -> HeapUsage | None:
        """Where the C heap's bytes are now; None before glibc 2.33 (no ``mallinfo2``)."""
        if self._mallinfo2 is None:
            return None
        info = self._mallinfo2()
        return HeapUsage(int(info.uordblks), int(info.fordblks), int(info.hblkhd))
