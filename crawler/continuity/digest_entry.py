"""DigestEntry: where the first capture of a payload lies (a value object, thread-safe)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class DigestEntry:
    """The first capture of a payload: its URI, ``WARC-Date`` and ``WARC-Record-ID`` (what a
    revisit's ``WARC-Refers-To-*`` fields name), and the WARC file and offset of that record."""

    uri: str
    warc_date: str
    warc_record_id: str | None = None
    warc_filename: str | None = None
    warc_offset: int | None = None
