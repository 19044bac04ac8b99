"""HeapTrimmer: applies the order's ``memory`` section to the process's C heap.

:meth:`start` caps glibc's malloc arenas (``memory.malloc_arena_max``; before the ToeThreads
exist, so they share the capped arenas), fixes its mmap threshold
(``memory.mmap_threshold_bytes``) and, beside it, its trim threshold
(``memory.trim_threshold_bytes``: the free memory an arena's top keeps between two trims
instead of handing it back at every ``free``; with ``mmap_threshold_bytes`` 0 glibc slides both
itself); :meth:`tick`, called by the controller's loop, trims the
heap every ``memory.trim_interval_s`` seconds (:class:`~crawler.memory.glibc_malloc.GlibcMalloc`).
A trim walks the arenas' free lists and takes a few milliseconds for a heap of hundreds of MB;
it runs on the controller's thread, never on a ToeThread. On a C library other than glibc both
do nothing.

Thread-safety: :meth:`start` and :meth:`tick` are called from one thread (the controller's);
:meth:`snapshot` may be read from any thread (plain attribute reads).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from crawler.memory.glibc_malloc import GlibcMalloc

if TYPE_CHECKING:
    from crawler.order.schema import MemoryConfig


class HeapTrimmer:
    """Caps the malloc arenas once, then trims the heap at a fixed interval."""

    def __init__(self, config: MemoryConfig, malloc: GlibcMalloc | None = None) -> None:
        self._config = config
        self._malloc = malloc if malloc is not None else GlibcMalloc.load()
        self._next_trim = 0.0
        self.trims = 0
        self.trim_ms_total = 0.0
        self.arena_max_applied = False
        self.mmap_threshold_applied = False
        self.trim_threshold_applied = False

    def start(self, mono_s: float) -> None:
        """Cap the arenas (``malloc_arena_max`` > 0), fix the mmap and trim thresholds
        (``mmap_threshold_bytes`` > 0, then ``trim_threshold_bytes`` > 0) and plan the first
        trim."""
        if self._malloc is not None and self._config.malloc_arena_max > 0:
            self.arena_max_applied = self._malloc.set_arena_max(self._config.malloc_arena_max)
        if self._malloc is not None and self._config.mmap_threshold_bytes > 0:
            threshold = self._config.mmap_threshold_bytes
            self.mmap_threshold_applied = self._malloc.set_mmap_threshold(threshold)
        if self.mmap_threshold_applied and self._config.trim_threshold_bytes > 0:
            # Only beside a fixed mmap threshold: setting either stops glibc sliding both.
            assert self._malloc is not None
            keep = self._config.trim_threshold_bytes
            self.trim_threshold_applied = self._malloc.set_trim_threshold(keep)
        self._next_trim = mono_s + self._config.trim_interval_s

    def tick(self, mono_s: float) -> None:
        """Trim the heap if the interval has passed (``trim_interval_s`` 0: never)."""
        interval = self._config.trim_interval_s
        if self._malloc is None or interval <= 0 or mono_s < self._next_trim:
            return
        started = time.perf_counter()
        self._malloc.trim()
        self.trim_ms_total += 1000 * (time.perf_counter() - started)
        self.trims += 1
        self._next_trim = mono_s + interval

    def snapshot(self) -> dict[str, Any]:
        """What was done so far: for the crawl's log at its end."""
        return {
            "glibc": self._malloc is not None,
            "malloc_arena_max": self._config.malloc_arena_max if self.arena_max_applied else 0,
            "mmap_threshold_bytes": (
                self._config.mmap_threshold_bytes if self.mmap_threshold_applied else 0
            ),
            "trim_threshold_bytes": (
                self._config.trim_threshold_bytes if self.trim_threshold_applied else 0
            ),
            "trims": self.trims,
            "trim_ms_total": round(self.trim_ms_total, 1),
        }
