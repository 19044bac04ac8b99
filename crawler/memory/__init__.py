"""Bounds on a long crawl's memory: the C heap's arenas capped and trimmed.

:class:`~crawler.memory.heap_trimmer.HeapTrimmer` applies the order's ``memory`` section
through :class:`~crawler.memory.glibc_malloc.GlibcMalloc` (glibc's ``mallopt`` and
``malloc_trim``; nothing happens on another C library).
"""

from crawler.memory.glibc_malloc import GlibcMalloc
from crawler.memory.heap_trimmer import HeapTrimmer

__all__ = ["GlibcMalloc", "HeapTrimmer"]
