"""Payload digests and digest-index entries for the digest index's tests (any backend)."""

from __future__ import annotations

import base64
import hashlib

from crawler.continuity import DigestEntry


def sha1(data: bytes) -> str:
    """The WARC payload digest of ``data`` (``sha1:`` + base32)."""
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def entry(n: int, uri: str = "http://a.test/") -> DigestEntry:
    """The ``n``-th capture: its URI, date, record id, WARC file (one per ``n``) and offset."""
    return DigestEntry(
        f"{uri}{n}",
        f"2026-11-27T10:00:{n % 60:02d}Z",
        f"urn:uuid:00000000-0000-4000-8000-{n:012x}",
        f"WEB-20261127100000000-{n:05d}-1~h.warc.gz",
        n * 1000,
    )
