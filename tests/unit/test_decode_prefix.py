"""decode_prefix: a body's content-encodings undone with memory bounded by the cap, however the
raw bytes arrive. A decompression bomb handed over as one big chunk (a whole spool read at once,
a socket that returned everything the kernel buffered) must not inflate that chunk whole: each
layer yields a bounded step, so the peak is the cap plus a few steps, for every coding."""

from __future__ import annotations

import tracemalloc
import zlib
from collections.abc import Callable

import brotlicffi as brotli  # type: ignore[import-untyped]
import pytest

from crawler.recording import decode_prefix

BOMB_BYTES = 16 * 1024 * 1024
CAP = 1024 * 1024
MAX_PEAK_BYTES = 2 * CAP + 1024 * 1024
"""The capped output, its copy as bytes, and a few 64 KiB steps."""

pytestmark = pytest.mark.timeout(60)


def _gzip(data: bytes) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    return compressor.compress(data) + compressor.flush()


def _deflate(data: bytes) -> bytes:
    return zlib.compress(data, 9)


def _brotli(data: bytes) -> bytes:
    return bytes(brotli.compress(data, quality=1))


BOMBS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": _gzip,
    "deflate": _deflate,
    "br": _brotli,
    "gzip, gzip": lambda data: _gzip(_gzip(data)),
    "gzip, br": lambda data: _brotli(_gzip(data)),
}


@pytest.mark.parametrize("coding", list(BOMBS))
def test_a_bomb_in_one_chunk_costs_the_cap_not_the_chunk(coding: str) -> None:
    page = b"<html><title>t</title>" + bytes(BOMB_BYTES)
    raw = BOMBS[coding](page)
    tracemalloc.start()
    try:
        data, whole = decode_prefix(iter([raw]), coding, CAP)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert data == page[:CAP] and not whole
    assert peak - len(raw) < MAX_PEAK_BYTES, f"{coding}: peaked at {peak / 2**20:.1f} MiB"


def test_a_small_body_is_whole_and_an_unknown_coding_is_left_alone() -> None:
    page = b"<html>small</html>"
    assert decode_prefix(iter([_gzip(page)]), "gzip", CAP) == (page, True)
    assert decode_prefix(iter([page]), "x-unknown", CAP) == (page, True)
