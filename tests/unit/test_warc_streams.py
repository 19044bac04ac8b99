"""GzipMember: each record one gzip member, whatever the size and number of writes."""

from __future__ import annotations

import gzip
import io
import os
import zlib

import pytest

from processors.write.warc_streams import GzipMember


@pytest.mark.parametrize("size", [0, 100, GzipMember.BUFFER_BYTES + 12345])
def test_a_member_written_in_pieces_decompresses_to_what_was_written(size: int) -> None:
    data = os.urandom(size // 2) + b"x" * (size - size // 2)
    out = io.BytesIO()
    out.write(b"before")
    member = GzipMember(out, 6)
    pieces = [data[i : i + 7000] for i in range(0, len(data), 7000)]
    assert sum(member.write(p) for p in pieces) == len(data)
    member.flush()
    member.finish()
    raw = out.getvalue()[len(b"before") :]
    decomp = zlib.decompressobj(zlib.MAX_WBITS + 16)
    assert decomp.decompress(raw) == data
    assert decomp.eof and decomp.unused_data == b""  # exactly one member
    assert gzip.decompress(raw + raw) == data + data  # members concatenate, as in a WARC
