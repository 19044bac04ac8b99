"""GzipMember: each record one gzip member, whatever the size and number of writes."""

from __future__ import annotations

import gzip
import io
import os
import zlib

import pytest

from processors.write.warc_streams import GzipMember


@pytest.mark.parametrize(("compressor", "level"), [("zlib", 6), ("isal", 3), ("isal", 0)])
@pytest.mark.parametrize("size", [0, 100, GzipMember.BUFFER_BYTES + 12345])
def test_a_member_written_in_pieces_decompresses_to_what_was_written(
    size: int, compressor: str, level: int
) -> None:
    data = os.urandom(size // 2) + b"x" * (size - size // 2)
    out = io.BytesIO()
    out.write(b"before")
    member = GzipMember(out, level, compressor)
    pieces = [data[i : i + 7000] for i in range(0, len(data), 7000)]
    assert sum(member.write(p) for p in pieces) == len(data)
    member.flush()
    member.finish()
    raw = out.getvalue()[len(b"before") :]
    decomp = zlib.decompressobj(zlib.MAX_WBITS + 16)
    assert decomp.decompress(raw) == data
    assert decomp.eof and decomp.unused_data == b""  # exactly one member
    assert gzip.decompress(raw + raw) == data + data  # members concatenate, as in a WARC


def test_isal_deflates_text_about_as_well_as_zlib_level_6() -> None:
    text = b"".join(
        b"<li><a href='/page%d.html'>Page %d of the site</a></li>\n" % (i, i * 7)
        for i in range(3000)
    )
    sizes = {}
    for compressor, level in (("zlib", 6), ("isal", 3)):
        out = io.BytesIO()
        member = GzipMember(out, level, compressor)
        member.write(text)
        member.finish()
        sizes[compressor] = len(out.getvalue())
    assert sizes["isal"] < len(text) / 4
    assert sizes["isal"] < sizes["zlib"] * 1.25


def test_level_0_stores_the_block_whatever_the_compressor() -> None:
    data = os.urandom(50_000)  # a JPEG, say: deflating again would only cost CPU
    out = io.BytesIO()
    member = GzipMember(out, 0, "isal")
    member.write(data)
    member.finish()
    assert len(data) < len(out.getvalue()) < len(data) + 100
    assert gzip.decompress(out.getvalue()) == data
