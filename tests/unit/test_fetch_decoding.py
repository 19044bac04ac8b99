"""Recording.decoded_body: content-encodings undone for extractors, streaming and capped."""

from __future__ import annotations

import gzip
import tracemalloc
import zlib

import brotlicffi as brotli  # type: ignore[import-untyped]
import pytest

from crawler import Recording

TEXT = b"<html>" + b"decoded for the extractors " * 4000 + b"</html>"


def recorded(body: bytes, in_memory_bytes: int = 1 << 20) -> Recording:
    rec = Recording(in_memory_bytes)
    rec.write_body(body)
    return rec


def raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


@pytest.mark.parametrize(
    ("encoding", "body"),
    [
        (None, TEXT),
        ("identity", TEXT),
        ("gzip", gzip.compress(TEXT)),
        ("x-gzip", gzip.compress(TEXT)),
        ("deflate", zlib.compress(TEXT)),
        ("deflate", raw_deflate(TEXT)),
        ("br", brotli.compress(TEXT)),
        ("GZIP, br", brotli.compress(gzip.compress(TEXT))),
        ("gzip, gzip", gzip.compress(gzip.compress(TEXT))),
    ],
)
def test_encodings_undone(encoding: str | None, body: bytes) -> None:
    assert recorded(body).decoded_body(encoding, 1 << 20) == TEXT


def test_decoding_reads_a_spooled_body() -> None:
    rec = recorded(gzip.compress(TEXT), in_memory_bytes=1024)
    assert rec.decoded_body("gzip", 1 << 20) == TEXT


def test_output_capped() -> None:
    assert recorded(gzip.compress(TEXT)).decoded_body("gzip", 100) == TEXT[:100]
    assert recorded(brotli.compress(TEXT)).decoded_body("br", 7) == TEXT[:7]
    assert recorded(TEXT).decoded_body(None, 5) == TEXT[:5]
    assert recorded(TEXT).decoded_body("gzip", 0) == b""


def test_concatenated_gzip_members_are_one_body() -> None:
    body = gzip.compress(b"first ") + gzip.compress(b"second")
    assert recorded(body).decoded_body("gzip", 100) == b"first second"


def test_unknown_coding_stops_decoding_there() -> None:
    assert recorded(b"\x28\xb5\x2f\xfd zstd").decoded_body("zstd", 100) == b"\x28\xb5\x2f\xfd zstd"
    inner = b"opaque"
    assert recorded(gzip.compress(inner)).decoded_body("compress, gzip", 100) == inner


def test_broken_stream_gives_what_was_decoded() -> None:
    body = gzip.compress(TEXT)
    assert TEXT.startswith(recorded(body[: len(body) // 2]).decoded_body("gzip", 1 << 20))
    assert recorded(b"not gzip at all").decoded_body("gzip", 100) == b""
    assert recorded(b"not brotli").decoded_body("br", 100) == b""


def test_repeated_reads_with_other_caps_and_codings_give_the_right_bytes() -> None:
    """A page is read by several extractors and rules, each with its own cap: a kept decoding
    serves every cap it covers, and never one it does not."""
    rec = recorded(gzip.compress(TEXT))
    assert rec.decoded_body("gzip", 300) == TEXT[:300]
    assert rec.decoded_body("gzip", 100) == TEXT[:100]
    assert rec.decoded_body("gzip", 5000) == TEXT[:5000]
    assert rec.decoded_body("gzip", 1 << 20) == TEXT
    assert rec.decoded_body("gzip", 1 << 30) == TEXT
    assert rec.decoded_body("gzip", 256) == TEXT[:256]
    assert rec.decoded_body(None, 10) == gzip.compress(TEXT)[:10]
    assert rec.decoded_body("gzip", len(TEXT)) == TEXT


def test_a_body_that_grows_is_decoded_again() -> None:
    rec = recorded(b"first part")
    assert rec.decoded_body(None, 100) == b"first part"
    rec.write_body(b", second part")
    assert rec.decoded_body(None, 100) == b"first part, second part"


@pytest.mark.parametrize("in_memory_bytes", [4 << 20, 256 * 1024])
def test_an_unencoded_body_costs_at_most_one_copy(in_memory_bytes: int) -> None:
    """In memory the page is the spool's own bytes; rolled to disk it is read once: no decoding
    buffer and second copy per page in flight (a 2 MB page on hundreds of threads)."""
    body = bytes(range(256)) * 8192  # 2 MiB
    rec = recorded(body, in_memory_bytes)
    tracemalloc.start()
    try:
        data = rec.decoded_body(None, 4 << 20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert data == body
    assert peak < len(body) + 64 * 1024, peak  # a decoding buffer and its copy: twice as much
    assert rec.decoded_body("identity", 1000) == body[:1000]
    rec.write_body(b"tail")  # a body that grows is read again, the kept bytes untouched
    assert rec.decoded_body(None, 4 << 20) == body + b"tail" and data == body
    rec.close()
