"""Which earlier capture a fetch revisits, and what the crawl history learns from each write.

:func:`find_referent` decides, before a URI's records are written, whether its payload needs a
full ``response`` record or a ``revisit`` of an earlier capture:

* ``server-not-modified``: FetchHTTP got a 304 and set ``curi.revisit``. The fetch history says
  where the payload really lies (possibly another URI's record, after URL-agnostic dedup);
  annotation ``duplicate:server-not-modified``.
* ``identical-payload-digest``: ``curi.revisit`` says so already, or the digest index
  (``ctx.digest_index``: this run, the job's earlier crawls, every worker of a ``--workers``
  crawl) holds a capture of this payload (any URI), or the history imported from a crawl made
  before the digest index holds one, or else an earlier collection (``ctx.collections``, order
  key ``dedup``) holds a capture of this URI with this payload (the referent then has no record
  id: CDXJ indexes carry none; URI and date identify it, as pywb resolves revisits); sets
  ``curi.revisit`` and annotates ``duplicate:digest``. Truncated captures and payloads smaller
  than the threshold (never under 1 byte) are not deduplicated.

:func:`remember_capture` records, after the write, the URI's fetch history (pointing at the
record that holds its payload, so revisits never chain) and, for a new payload, its first capture
in the digest index (the first writer wins: two workers capturing one payload at once agree on
one original; :func:`~crawler.continuity.digest_index.add_later`, as no answer is needed, so the
shared index sends it with its next lookup). Thread-safe (the history and the digest index
are). Heritrix counterpart:
``ContentDigestHistoryLoader`` / ``ContentDigestHistoryStorer`` and ``FetchHistoryProcessor``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from crawler import CrawlURI, RevisitInfo
from crawler.continuity import DigestEntry, DigestIndex
from crawler.continuity.digest_index import add_later
from crawler.history import CrawlHistory

if TYPE_CHECKING:
    from crawler.archive.collection_set import CollectionSet

IDENTICAL_PAYLOAD_DIGEST = "identical-payload-digest"
SERVER_NOT_MODIFIED = "server-not-modified"


@dataclass(frozen=True, slots=True)
class Referent:
    """The earlier capture a revisit record refers to (``profile`` is a short profile name)."""

    profile: str
    uri: str
    date: str | None
    record_id: str | None
    filename: str | None
    offset: int | None
    payload_digest: str | None
    indexed: bool = False
    """Found in the digest index (nothing to add there after the write)."""


def digest_checked(curi: CrawlURI, dedup: bool, dedup_min_size_bytes: int) -> bool:
    """Whether :func:`find_referent` looks the payload's digest up (it can be deduplicated)."""
    rec = curi.recording
    return dedup and not rec.truncated and rec.body_size >= max(dedup_min_size_bytes, 1)


def find_referent(
    curi: CrawlURI,
    history: CrawlHistory | None,
    dedup: bool,
    dedup_min_size_bytes: int,
    collections: CollectionSet | None = None,
    digests: DigestIndex | None = None,
) -> Referent | None:
    """The capture this fetch revisits, or None to write a full response (module docstring)."""
    revisit = curi.revisit
    if revisit is not None and SERVER_NOT_MODIFIED in revisit.profile:
        curi.annotate("duplicate:server-not-modified")
        prev = history.fetch_history(curi.uri) if history is not None else None
        if (
            prev is not None
            and prev.warc_record_id
            and revisit.refers_to_record_id in (None, prev.warc_record_id)
        ):
            return Referent(
                SERVER_NOT_MODIFIED,
                prev.warc_target_uri or curi.uri,
                prev.warc_date,
                prev.warc_record_id,
                prev.warc_filename,
                prev.warc_offset,
                revisit.payload_digest or prev.payload_digest,
            )
        return Referent(
            SERVER_NOT_MODIFIED,
            revisit.refers_to_uri or curi.uri,
            revisit.refers_to_date or None,
            revisit.refers_to_record_id,
            None,
            None,
            revisit.payload_digest,
        )
    rec = curi.recording
    digest = curi.payload_digest or rec.payload_digest
    if revisit is not None and IDENTICAL_PAYLOAD_DIGEST in revisit.profile:
        curi.annotate("duplicate:digest")
        return Referent(
            IDENTICAL_PAYLOAD_DIGEST,
            revisit.refers_to_uri,
            revisit.refers_to_date or None,
            revisit.refers_to_record_id,
            None,
            None,
            revisit.payload_digest or digest,
        )
    if not digest_checked(curi, dedup, dedup_min_size_bytes):
        return None
    entry = digests.lookup(digest) if digests is not None else None
    indexed = entry is not None
    if entry is None and history is not None and history.has_imported:
        old = history.lookup_digest(digest)
        if old is not None:
            entry = DigestEntry(
                old.uri, old.warc_date, old.warc_record_id, old.warc_filename, old.warc_offset
            )
    if entry is None:
        return _in_collections(curi, collections, digest)
    curi.revisit = RevisitInfo(
        IDENTICAL_PAYLOAD_DIGEST, entry.uri, entry.warc_date, entry.warc_record_id, digest
    )
    curi.annotate("duplicate:digest")
    return Referent(
        IDENTICAL_PAYLOAD_DIGEST,
        entry.uri,
        entry.warc_date,
        entry.warc_record_id,
        entry.warc_filename,
        entry.warc_offset,
        digest,
        indexed,
    )


def _in_collections(
    curi: CrawlURI, collections: CollectionSet | None, digest: str
) -> Referent | None:
    """An earlier collection's capture of this URI with this payload, as the referent."""
    capture = collections.lookup(curi.uri, digest) if collections is not None else None
    if capture is None:
        return None
    date = capture.warc_date
    curi.revisit = RevisitInfo(IDENTICAL_PAYLOAD_DIGEST, capture.url, date, None, digest)
    curi.annotate("duplicate:digest")
    return Referent(
        IDENTICAL_PAYLOAD_DIGEST, capture.url, date, None, capture.filename, capture.offset, digest
    )


def remember_capture(
    curi: CrawlURI,
    history: CrawlHistory | None,
    referent: Referent | None,
    record_id: str,
    date: str,
    filename: str,
    offset: int,
    digests: DigestIndex | None = None,
    looked_up: bool = False,
) -> None:
    """After writing: this URI's fetch history and its payload's first capture.

    ``record_id``/``date``/``filename``/``offset`` describe the record just written (a full
    response when ``referent`` is None). Truncated or empty payloads never become the original
    capture of a digest. A revisit of a capture the digest index does not hold yet (an earlier
    collection's) adds that capture to it, so later fetches of the payload under any URI find it.
    ``looked_up``: :func:`find_referent` looked the digest up in ``digests`` and found nothing
    (``referent`` None after :func:`digest_checked`), so its read-only layers are not asked again.
    """
    rec = curi.recording
    digest = curi.payload_digest or rec.payload_digest
    if referent is None:
        if history is not None:
            history.record_fetch(curi, record_id, date, filename, offset)
        if digests is not None and digest and not rec.truncated and rec.body_size > 0:
            entry = DigestEntry(curi.uri, date, record_id, filename, offset)
            add_later(digests, digest, entry, looked_up)
        return
    if history is not None:
        history.record_fetch(
            curi,
            referent.record_id,
            referent.date,
            referent.filename,
            referent.offset,
            warc_target_uri=referent.uri,
        )
    if (
        digests is not None
        and digest
        and referent.profile == IDENTICAL_PAYLOAD_DIGEST
        and referent.date
        and not referent.indexed
    ):
        add_later(
            digests,
            digest,
            DigestEntry(
                referent.uri, referent.date, referent.record_id, referent.filename, referent.offset
            ),
        )
