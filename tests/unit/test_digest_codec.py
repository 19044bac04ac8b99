"""The digest index's bytes: keys and values come back exactly, whatever the digest or date."""

from __future__ import annotations

import base64
import random

import pytest

from crawler.continuity import DigestEntry
from crawler.continuity.digest_codec import (
    DigestCodecError,
    decode_entry,
    digest_key,
    digest_of_key,
    encode_entry,
)
from crawler.recording import sha1_base32


@pytest.mark.parametrize(
    "digest",
    [
        "sha1:" + "A" * 32,
        "sha1:TOOSHORT",
        "sha1:" + "1" * 32,  # not base32: kept as text
        "x" * 19,  # "~" + 19 characters is 20 bytes, a raw sha1's length
        "sha256:" + "f" * 64,
    ],
)
def test_every_digest_comes_back_from_its_key(digest: str) -> None:
    key = digest_key(digest)
    assert digest_of_key(key) == digest
    assert (len(key) == 20) == (digest == "sha1:" + "A" * 32)


def test_a_value_is_compact_and_exact() -> None:
    entry = DigestEntry(
        "http://example.org/page",
        "2026-11-27T10:00:00.123Z",
        "urn:uuid:0f6d5a9e-4d1c-4f5e-9a3b-2c7d8e9f0a1b",
        "WEB-20261127100000000-00000-1~h.warc.gz",
        123_456,
    )
    raw = encode_entry(entry)
    assert decode_entry(raw) == entry
    # The record id as 16 bytes and the date as 7, not the 45 + 24 characters they print as:
    # the strings, their 2 length bytes, version and flags, 3 bytes of offset.
    assert len(raw) == len(entry.uri) + len(str(entry.warc_filename)) + 16 + 7 + 2 + 2 + 3


def test_bytes_that_are_not_a_value_are_refused() -> None:
    raw = encode_entry(DigestEntry("http://example.org/", "2026-11-27T10:00:00Z"))
    with pytest.raises(DigestCodecError, match="truncated"):
        decode_entry(raw[:5])
    with pytest.raises(DigestCodecError, match="version"):
        decode_entry(b"\x09" + raw[1:])


def test_a_sha1_key_is_the_digest_s_twenty_bytes() -> None:
    rng = random.Random(5)
    for _ in range(500):
        raw = rng.randbytes(20)
        digest = sha1_base32(raw)
        assert digest_key(digest) == raw == base64.b32decode(digest[5:])
        assert digest_of_key(raw) == digest
    # Not 32 upper-case base32 characters: kept as text, as before.
    for odd in ("sha1:" + "a" * 32, "sha1:" + "É" * 32, "sha1:" + "A" * 31 + "1"):
        key = digest_key(odd)
        assert len(key) != 20 and digest_of_key(key) == odd


@pytest.mark.parametrize(
    "date",
    [
        "2026-11-27T10:00:00Z",
        "2026-11-27T10:00:00.000Z",
        "2026-11-27T10:00:00.007Z",
        "2026-11-27T10:00:00.123456789Z",
        "2026-02-30T10:00:00Z",  # no such day: stored as text
        "1969-12-31T23:59:59Z",  # before 1970: stored as text
        "2026-11-27T25:00:00Z",
        "2026-11-27T10:00:00.\u0661\u0662Z",  # digits other than ASCII
        "\u0662026-11-27T10:00:00Z",
        "2026-11-27",
    ],
)
def test_every_date_comes_back_exactly(date: str) -> None:
    for _ in range(2):  # the second time from the caches
        entry = DigestEntry("http://example.org/", date, None, "W.warc.gz", 5)
        assert decode_entry(encode_entry(entry)) == entry
