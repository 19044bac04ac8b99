"""Change and changes(): each URI of two crawls' fetch histories classified by what it did.

The rules (a URI's latest fetch in this crawl, ``now``, against the earlier crawl's):

* **new** — the URI is not in the earlier crawl's history;
* **gone** — this crawl got 404 or 410 for it, or did not fetch it (no longer linked, or not
  reached: out of budget, a fetch that failed);
* **unchanged** — this crawl got 304 (Not Modified), or the same payload digest as before, or
  404/410 again (it was gone already);
* **changed** — any other answer: a different payload digest.

:func:`changes` reads sorted ``(uri, entry)`` streams — one per history database, as
:func:`~crawler.history.scan_fetch_history` yields them; a ``--workers`` crawl has one per
worker — merged by the URIs' UTF-8 bytes (LevelDB's order), so memory does not grow with the
number of URIs. A URI in several streams of one crawl (a worker took over another's URI) counts
once, with its latest fetch. Pure functions over iterators: one thread per call.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from crawler.history import FetchHistoryEntry

NEW = "new"
CHANGED = "changed"
UNCHANGED = "unchanged"
GONE = "gone"
KINDS = (NEW, CHANGED, UNCHANGED, GONE)
GONE_STATUSES = frozenset({404, 410})
NOT_MODIFIED = 304

HistoryStream = Iterable[tuple[str, FetchHistoryEntry]]


@dataclass(frozen=True, slots=True)
class Change:
    """One URI's classification; ``status`` is this crawl's (None: not fetched now),
    ``earlier_status`` the earlier crawl's (None: not in it)."""

    kind: str
    uri: str
    status: int | None
    earlier_status: int | None


def classify(now: FetchHistoryEntry | None, earlier: FetchHistoryEntry | None) -> str:
    """The kind of change from ``earlier`` to ``now`` (see the module docstring); at least one
    of them is given."""
    if earlier is None:
        return NEW
    if now is not None and now.status in GONE_STATUSES and earlier.status in GONE_STATUSES:
        return UNCHANGED
    if now is None or now.status in GONE_STATUSES:
        return GONE
    if now.status == NOT_MODIFIED:
        return UNCHANGED
    if now.payload_digest and now.payload_digest == earlier.payload_digest:
        return UNCHANGED
    return CHANGED


_Keyed = tuple[bytes, str, FetchHistoryEntry]
_END: _Keyed = (b"", "", FetchHistoryEntry(0, 0.0))


def _keyed(stream: HistoryStream) -> Iterator[_Keyed]:
    for uri, entry in stream:
        yield uri.encode("utf-8", "surrogateescape"), uri, entry


def _one_crawl(streams: Iterable[HistoryStream]) -> Iterator[_Keyed]:
    """One crawl's streams as one, in key order, each URI once (its latest fetch)."""
    keyed = [_keyed(s) for s in streams]
    if len(keyed) == 1:
        return keyed[0]
    return _latest_per_uri(heapq.merge(*keyed, key=lambda item: item[0]))


def _latest_per_uri(merged: Iterator[_Keyed]) -> Iterator[_Keyed]:
    for _key, group in itertools.groupby(merged, key=lambda item: item[0]):
        yield max(group, key=lambda item: item[2].fetch_time_s)


def changes(now: Iterable[HistoryStream], earlier: Iterable[HistoryStream]) -> Iterator[Change]:
    """Every URI of either crawl, in URI order, with its :class:`Change` (module docstring)."""
    this, before = _one_crawl(now), _one_crawl(earlier)
    a, b = next(this, _END), next(before, _END)
    while a is not _END or b is not _END:
        if b is _END or (a is not _END and a[0] < b[0]):
            entry = a[2]
            yield Change(classify(entry, None), a[1], entry.status, None)
            a = next(this, _END)
        elif a is _END or b[0] < a[0]:
            old = b[2]
            yield Change(classify(None, old), b[1], None, old.status)
            b = next(before, _END)
        else:
            entry, old = a[2], b[2]
            yield Change(classify(entry, old), a[1], entry.status, old.status)
            a, b = next(this, _END), next(before, _END)
