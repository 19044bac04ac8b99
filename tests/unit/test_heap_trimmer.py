"""HeapTrimmer over the real glibc: the freed C heap goes back to the system when a trim is due,
and the arena cap makes new threads share arenas."""

from __future__ import annotations

import ctypes
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from crawler.memory import GlibcMalloc, HeapTrimmer
from crawler.order.schema import MemoryConfig

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(GlibcMalloc.load() is None, reason="glibc only"),
]

ROOT = Path(__file__).resolve().parents[2]


def anon_mb() -> float:
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
        if line.startswith("Anonymous:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no Anonymous line")


def test_freed_heap_is_returned_when_the_trim_is_due() -> None:
    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    trimmer = HeapTrimmer(MemoryConfig(malloc_arena_max=0, trim_interval_s=60))
    trimmer.start(mono_s=1000.0)
    # 64 MB in 64 KiB blocks (below the mmap threshold: heap memory), touched, then freed
    # but for the last one, which keeps the heap's top from shrinking by itself.
    blocks = [libc.malloc(64 * 1024) for _ in range(1024)]
    for block in blocks:
        ctypes.memset(block, 1, 64 * 1024)
    for block in blocks[:-1]:
        libc.free(block)
    freed = anon_mb()
    trimmer.tick(mono_s=1059.0)
    assert trimmer.trims == 0
    assert anon_mb() > freed - 16  # not due: nothing returned
    trimmer.tick(mono_s=1060.0)
    assert trimmer.trims == 1
    assert anon_mb() < freed - 48
    libc.free(blocks[-1])
    assert trimmer.snapshot()["trims"] == 1


def test_no_trim_when_the_interval_is_zero() -> None:
    trimmer = HeapTrimmer(MemoryConfig(trim_interval_s=0))
    trimmer.start(mono_s=0.0)
    trimmer.tick(mono_s=10**6)
    assert trimmer.trims == 0


ARENAS = textwrap.dedent(
    """
    import ctypes, sys, tempfile, threading
    from crawler.memory import HeapTrimmer
    from crawler.order.schema import MemoryConfig
    HeapTrimmer(MemoryConfig(malloc_arena_max=int(sys.argv[1]))).start(0.0)
    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    barrier = threading.Barrier(8)
    def work():
        # Every thread takes its arena, then waits for the others: none exits (handing its
        # arena to the next thread) before all have one, however the threads are scheduled.
        first = libc.malloc(4096)
        barrier.wait()
        for _ in range(2000):
            libc.free(libc.malloc(4096))
        libc.free(first)
    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads: t.start()
    for t in threads: t.join()
    # glibc's own account: malloc_info writes one <heap> element per arena, the main one first.
    # (Counting 64 MiB-aligned regions of /proc/self/maps once counted one that was not.)
    libc.fopen.restype = ctypes.c_void_p
    libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
    with tempfile.NamedTemporaryFile("r") as out:
        stream = libc.fopen(out.name.encode(), b"w")
        assert stream and libc.malloc_info(0, stream) == 0 and libc.fclose(stream) == 0
        print(out.read().count("<heap nr=") - 1)
    """
)


def run_script(script: str, arg: int) -> str:
    """What ``script`` prints, run with ``arg`` in a fresh interpreter (a heap of its own)."""
    out = subprocess.run(
        [sys.executable, "-c", script, str(arg)],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=ROOT,
        check=True,
    )
    return out.stdout.strip()


def thread_arenas(cap: int) -> int:
    return int(run_script(ARENAS, cap))


def test_arena_cap_makes_threads_share_arenas() -> None:
    assert thread_arenas(2) <= 1  # the main heap and at most one thread arena
    assert thread_arenas(0) >= 4  # glibc's default: one per thread, up to 8 per core


BIG_BLOCKS = textwrap.dedent(
    """
    import ctypes, sys
    from crawler.memory import HeapTrimmer
    from crawler.order.schema import MemoryConfig
    threshold = int(sys.argv[1])
    config = MemoryConfig(
        malloc_arena_max=0,
        trim_interval_s=0,
        mmap_threshold_bytes=threshold,
        trim_threshold_bytes=0,
    )
    HeapTrimmer(config).start(0.0)
    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    def anon():
        for line in open("/proc/self/smaps_rollup"):
            if line.startswith("Anonymous:"):
                return int(line.split()[1]) / 1024
    first = libc.malloc(4 << 20)  # a 4 MB page: glibc's own threshold rises to its size
    ctypes.memset(first, 1, 4 << 20)
    libc.free(first)
    pages, pins = [], []
    for _ in range(64):  # 64 pages of 2 MB in flight, small blocks made between them
        page = libc.malloc(2 << 20)
        ctypes.memset(page, 1, 2 << 20)
        pages.append(page)
        pins.append(libc.malloc(256))
    held = anon()
    for page in pages:
        libc.free(page)
    print(held - anon())
    """
)


def released_mb(threshold: int) -> float:
    return float(run_script(BIG_BLOCKS, threshold))


def test_big_blocks_go_back_to_the_system_when_freed_with_a_fixed_mmap_threshold() -> None:
    assert released_mb(1 << 20) > 100  # of 128 MB of pages: gone as they are freed
    assert released_mb(0) < 32  # glibc's sliding threshold: holes in the heap, kept


REUSED_TOP = textwrap.dedent(
    """
    import ctypes, resource, sys
    from crawler.memory import HeapTrimmer
    from crawler.order.schema import MemoryConfig
    config = MemoryConfig(
        malloc_arena_max=0,
        trim_interval_s=0,
        mmap_threshold_bytes=1 << 20,
        trim_threshold_bytes=int(sys.argv[1]),
    )
    HeapTrimmer(config).start(0.0)
    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    size = 512 << 10  # a page buffer: under the mmap threshold, so at the heap's top
    block = libc.malloc(size)
    ctypes.memset(block, 1, size)
    libc.free(block)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(200):
        block = libc.malloc(size)
        ctypes.memset(block, 1, size)
        libc.free(block)
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    """
)


def page_faults_reusing_the_top(trim_threshold: int) -> int:
    return int(run_script(REUSED_TOP, trim_threshold))


def test_the_trim_threshold_keeps_a_reused_heap_top_mapped() -> None:
    # 200 buffers of 512 KiB, each freed before the next: 25,600 pages touched.
    assert page_faults_reusing_the_top(32 << 20) < 1_000  # the top stays: faulted in once
    assert page_faults_reusing_the_top(0) > 10_000  # 128 KiB: handed back and faulted again


def test_trim_threshold_is_left_to_glibc_beside_its_sliding_mmap_threshold() -> None:
    config = MemoryConfig(
        malloc_arena_max=0,
        trim_interval_s=0,
        mmap_threshold_bytes=0,
        trim_threshold_bytes=32 << 20,
    )
    trimmer = HeapTrimmer(config)
    trimmer.start(0.0)
    assert not trimmer.trim_threshold_applied  # setting it would stop glibc sliding both
    assert trimmer.snapshot()["trim_threshold_bytes"] == 0


def test_usage_tells_blocks_in_use_from_freed_ones() -> None:
    glibc = GlibcMalloc.load()
    assert glibc is not None
    before = glibc.usage()
    if before is None:
        pytest.skip("glibc before 2.33 has no mallinfo2")
    held = [bytearray(64 * 1024) for _ in range(64)]  # 4 MiB in blocks under mmap's threshold
    during = glibc.usage()
    assert during is not None and during.in_use - before.in_use >= 4 * 2**20
    del held
    after = glibc.usage()
    assert after is not None and during.in_use - after.in_use >= 4 * 2**20
