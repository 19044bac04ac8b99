"""Capture and CollectionIndex: what an earlier collection's index says about a URI.

A :class:`CollectionIndex` (a local CDXJ file, :mod:`crawler.archive.cdxj_file`, or a CDX
server, :mod:`crawler.archive.cdx_server`) answers "the latest capture of this URI with this
payload digest" as a :class:`Capture`. This module also reads index entries: CDXJ lines
(``surt-key timestamp {json}``), CDX 11/9 lines and CDX-server JSON, and compares digests by
their base32 value (``sha1:ABC…`` in CDXJ and ``ABC…`` in CDX 11 are the same payload).
Pure functions and frozen values: thread-safe.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

REVISIT_MIME = "warc/revisit"
"""The MIME type indexers give a revisit record's line."""


@dataclass(frozen=True, slots=True)
class Capture:
    """One capture found in an earlier collection's index.

    ``timestamp`` has 14 digits (``yyyymmddhhmmss``, UTC) as CDXJ keys have; ``digest`` is as
    the index wrote it; ``source`` names the index it came from (its path or URL).
    """

    url: str
    timestamp: str
    digest: str
    filename: str | None
    offset: int | None
    source: str

    @property
    def warc_date(self) -> str:
        """The capture's time as a WARC date (``2026-11-22T02:37:50Z``)."""
        return timestamp_to_warc_date(self.timestamp)


class CollectionIndex(Protocol):
    """One earlier collection's index. Safe for lookups from many threads at once."""

    name: str

    def find(self, url: str, urlkey: str, digest_b32: str) -> Capture | None:
        """The latest non-revisit capture of ``url`` (SURT key ``urlkey``) whose payload
        digest's base32 value is ``digest_b32``, or None. Never raises for a lookup that
        fails (an index that cannot answer says None and alerts)."""
        ...

    def close(self) -> None:
        """Release files and connections. Idempotent; never raises."""
        ...


def digest_b32(digest: str) -> str:
    """The base32 value of a payload digest: ``sha1:abc`` and ``ABC`` give ``ABC``."""
    _, _, value = digest.rpartition(":")
    return value.strip().upper()


def timestamp_to_warc_date(timestamp: str) -> str:
    """``20261122023750`` -> ``2026-11-22T02:37:50Z`` (shorter timestamps are padded)."""
    ts = (timestamp + "00000101000000"[len(timestamp) :])[:14]
    return f"{ts[0:4]}-{ts[4:6]}-{ts[6:8]}T{ts[8:10]}:{ts[10:12]}:{ts[12:14]}Z"


def capture_from_fields(fields: Mapping[str, Any], source: str) -> Capture | None:
    """A :class:`Capture` from one index entry's fields (CDXJ JSON names, or the CDX server
    JSON names ``original``/``urlkey``), None for a revisit or an entry without a digest."""
    mime = str(fields.get("mime") or fields.get("mimetype") or "")
    digest = str(fields.get("digest") or "")
    url = str(fields.get("url") or fields.get("original") or "")
    timestamp = str(fields.get("timestamp") or "")
    if mime == REVISIT_MIME or not digest or digest == "-" or not url or not timestamp:
        return None
    filename = fields.get("filename")
    offset = str(fields.get("offset"))
    return Capture(
        url,
        timestamp,
        digest,
        str(filename) if filename not in (None, "", "-") else None,
        int(offset) if offset.isdigit() else None,
        source,
    )


def parse_index_line(line: str, source: str) -> Capture | None:
    """One line of a CDXJ file (``key timestamp {json}``) or of a CDX file (space-separated
    CDX 11 or CDX 9 fields); None for a header, a revisit or a line it cannot read."""
    _, _, rest = line.partition(" ")
    timestamp, _, rest = rest.partition(" ")
    if rest.startswith("{"):
        try:
            fields = json.loads(rest)
        except ValueError:
            return None
        if not isinstance(fields, dict):
            return None
        return capture_from_fields({**fields, "timestamp": timestamp}, source)
    parts = rest.split()
    if len(parts) == 9:  # CDX 11: a m s k r M S V g
        url, mime, _, digest, _, _, _, offset, filename = parts
    elif len(parts) == 7:  # CDX 9: a m s k r V g
        url, mime, _, digest, _, offset, filename = parts
    else:
        return None
    return capture_from_fields(
        {"url": url, "mime": mime, "digest": digest, "offset": offset, "filename": filename,
         "timestamp": timestamp},
        source,
    )  # fmt: skip
