"""DigestIndex: payload digest -> the first capture of that payload (URL-agnostic dedup).

The contract every backend keeps (``tests/contracts/test_digest_index_contract.py`` runs it
against each):

* :meth:`DigestIndex.lookup` returns the entry stored for a digest, or None.
* :meth:`DigestIndex.add` stores an entry only if the digest has none: **the first writer wins**,
  atomically, also between threads and (for a shared backend) between processes. It returns the
  entry that is stored afterwards, the given one or the earlier one, so a writer learns in the
  same call whether its capture became the original.
* :meth:`DigestIndex.entries` yields every ``(digest, entry)`` (any order; used to copy an
  index into another with :func:`copy_entries`).
* :meth:`DigestIndex.close` is idempotent and never raises.

:func:`add_later` stores an entry when the caller needs no answer: a backend with an
``add_later`` method (:class:`~crawler.continuity.redis_digest_index.RedisDigestIndex`) may send
it with its next call, any other adds it at once. :func:`flush` sends what waits: the WARC
writer's caller flushes with the page's payload digest before a page's outlinks reach the
frontier, so a worker that fetches a link of the page finds the page's payload in the index, as
when the entry was added at once.

Every method is thread-safe. :class:`LayeredDigestIndex` composes one writable index with
read-only ones consulted after it (the job's index of earlier crawls, an imported crawl's).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol, runtime_checkable

from crawler.continuity.digest_entry import DigestEntry


@runtime_checkable
class DigestIndex(Protocol):
    """Payload digest -> first capture (see the module docstring)."""

    def lookup(self, payload_digest: str) -> DigestEntry | None:
        """The first capture of ``payload_digest``, or None."""
        ...

    def add(self, payload_digest: str, entry: DigestEntry) -> DigestEntry:
        """Store ``entry`` unless the digest has one; the entry stored afterwards."""
        ...

    def entries(self) -> Iterator[tuple[str, DigestEntry]]:
        """Every ``(payload digest, entry)`` stored here."""
        ...

    def close(self) -> None:
        """Release the index (idempotent, never raises)."""
        ...


def add_later(
    index: DigestIndex, payload_digest: str, entry: DigestEntry, missed: bool = False
) -> None:
    """Store ``entry`` unless the digest has one (first writer wins), by ``index.add_later`` when
    it has one (sent with its next call), else ``index.add``.

    ``missed``: a lookup of this digest in ``index`` just found nothing, so an index with
    read-only layers (``add_missed``: :class:`LayeredDigestIndex`) need not ask them again
    (nothing is added to them while the run writes); its writable layer still decides."""
    if missed:
        add_missed = getattr(index, "add_missed", None)
        if add_missed is not None:
            add_missed(payload_digest, entry)
            return
    later = getattr(index, "add_later", None)
    if later is not None:
        later(payload_digest, entry)
    else:
        index.add(payload_digest, entry)


def flush(index: DigestIndex, payload_digest: str | None = None) -> None:
    """Send the entries :func:`add_later` left waiting in ``index`` (nothing when none wait or
    the backend has no ``flush``); given ``payload_digest``, the backend may skip the round trip
    when that digest's entry is not waiting (it is stored, or was never added), as before a
    page's links are scheduled."""
    send = getattr(index, "flush", None)
    if send is not None:
        if payload_digest is None:
            send()
        else:
            send(payload_digest)


def copy_entries(source: Iterable[tuple[str, DigestEntry]], target: DigestIndex) -> int:
    """Add each of ``source``'s entries to ``target`` (first writer wins there too); returns how
    many were new to ``target``."""
    added = 0
    for digest, entry in source:
        if target.add(digest, entry) is entry:
            added += 1
    return added


class LayeredDigestIndex:
    """One writable index and read-only ones behind it, as one :class:`DigestIndex`.

    A lookup asks ``primary`` and then each of ``behind`` in order; :meth:`add` first looks the
    digest up behind (a payload an earlier crawl captured stays that crawl's) and otherwise adds
    to ``primary``. :meth:`entries` is ``primary``'s alone (what this crawl added).
    :meth:`close` closes every layer. Thread-safe as its layers are.
    """

    def __init__(self, primary: DigestIndex, behind: Sequence[DigestIndex] = ()) -> None:
        self.primary = primary
        self.behind = list(behind)

    def lookup(self, payload_digest: str) -> DigestEntry | None:
        found = self.primary.lookup(payload_digest)
        if found is not None:
            return found
        return self._lookup_behind(payload_digest)

    def _lookup_behind(self, payload_digest: str) -> DigestEntry | None:
        for layer in self.behind:
            found = layer.lookup(payload_digest)
            if found is not None:
                return found
        return None

    def add(self, payload_digest: str, entry: DigestEntry) -> DigestEntry:
        earlier = self._lookup_behind(payload_digest)
        if earlier is not None:
            return earlier
        return self.primary.add(payload_digest, entry)

    def add_later(self, payload_digest: str, entry: DigestEntry) -> None:
        """:meth:`add` when no answer is needed: the primary may send it later
        (:func:`add_later`)."""
        if self._lookup_behind(payload_digest) is None:
            add_later(self.primary, payload_digest, entry)

    def add_missed(self, payload_digest: str, entry: DigestEntry) -> None:
        """:meth:`add_later` of a digest a :meth:`lookup` just missed: the layers behind (read
        only, so still without it) are not asked again; the primary adds it unless another
        writer did meanwhile (first writer wins)."""
        add_later(self.primary, payload_digest, entry)

    def flush(self, payload_digest: str | None = None) -> None:
        """Send what :meth:`add_later` left waiting in the primary (:func:`flush`)."""
        flush(self.primary, payload_digest)

    def entries(self) -> Iterator[tuple[str, DigestEntry]]:
        return self.primary.entries()

    def close(self) -> None:
        for layer in (self.primary, *self.behind):
            layer.close()
