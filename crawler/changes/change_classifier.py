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


def _tagged(
    stream: HistoryStream, side: int
) -> Iterator[tuple[bytes, int, str, FetchHistoryEntry]]:
    for uri, entry in stream:
        yield uri.encode("utf-8", "surrogateescape"), side, uri, entry


def _latest(entries: list[FetchHistoryEntry]) -> FetchHistoryEntry | None:
    return max(entries, key=lambda e: e.fetch_time_s) if entries else None


def changes(now: Iterable[HistoryStream], earlier: Iterable[HistoryStream]) -> Iterator[Change]:
    """Every URI of either crawl, in URI order, with its :class:`Change` (module docstring)."""
    merged = heapq.merge(
        *(_tagged(s, 0) for s in now),
        *(_tagged(s, 1) for s in earlier),
        key=lambda item: item[0],
    )
    for _key, group in itertools.groupby(merged, key=lambda item: item[0]):
        sides: tuple[list[FetchHistoryEntry], list[FetchHistoryEntry]] = ([], [])
        items = list(group)
        for _, side, _uri, entry in items:
            sides[side].append(entry)
        uri = items[0][2]
        this, before = _latest(sides[0]), _latest(sides[1])
        yield Change(
            classify(this, before),
            uri,
            this.status if this is not None else None,
            before.status if before is not None else None,
        )
