"""RecentlySeen: which of a page's links the uniq filter surely recorded, before their scope.

The one rule behind ``seen_recently`` of every frontier (the work-queue frontier's intake and a
Redis worker's frontier alike): canonicalize each URI as scheduling would, then ask the uniq
filter which it recorded (:meth:`~crawler.uniq.uniq_filter.UriUniqFilter.recorded`: its no-I/O
fast path first, then, for a filter whose state is local, an exact look-up; the shared Redis
filter asks its server in one round trip once its cache no longer holds all it recorded). A
True is final (the URI was recorded, and no filter forgets, so scheduling it again would do
nothing); a False only means "new, or not known here". A URI that cannot be canonicalized is
False (scheduling reports it).

The exact look-up keeps a page's cost flat as the crawl grows: a link seen long ago (out of the
filter's cache of recent keys) is answered here, before the scope's rules, instead of going
through them and then being found seen by the schedule.

A URI the frontier's crash recovery says may have been lost (recorded by the filter, never
queued: :meth:`~crawler.frontier.store.recovery.RecoveryLog.maybe_lost`, given as
``may_be_lost``) is False whatever the filter says: scheduling it is what queues it again.

The URIs answered True are remembered as they are (:data:`SEEN_URIS_KEPT`, two generations):
the same link on the next page (navigation, headers, footers) is answered with one set lookup,
without its canonical key and fingerprint.

Thread-safe: lookups read the remembered sets without a lock; additions take one.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from crawler.uniq.recent_keys import RecentKeys

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from crawler.frontier.intake.preparer import FrontierPreparer
    from crawler.uniq.uniq_filter import UriUniqFilter

#: URIs answered "seen" kept as they are, per generation (a few MB at most).
SEEN_URIS_KEPT = 16_384


class RecentlySeen:
    """``seen(uris)``: one flag per URI, True where the uniq filter surely recorded it."""

    def __init__(
        self,
        prep: FrontierPreparer,
        uniq: UriUniqFilter[Any],
        kept: int = SEEN_URIS_KEPT,
        may_be_lost: Callable[[list[str]], list[bool]] | None = None,
    ) -> None:
        self._prep = prep
        self._uniq = uniq
        self._may_be_lost = may_be_lost
        self._known: RecentKeys[str] = RecentKeys(kept)
        self._lock = threading.Lock()

    def seen(self, uris: Sequence[str]) -> list[bool]:
        """One flag per URI of ``uris`` (see the module docstring)."""
        known = self._known
        out = [uri in known for uri in uris]
        todo = [i for i, seen in enumerate(out) if not seen]
        if not todo:
            return out
        canonical_of = self._prep.canonical
        canonicals: list[str] = []
        for i in todo:
            try:
                canonicals.append(canonical_of(uris[i]))
            except ValueError:
                canonicals.append("")
        found: list[str] = []
        flags = self._uniq.recorded(canonicals)
        if self._may_be_lost is not None and any(flags):
            lost = self._may_be_lost(canonicals)
            flags = [flag and not gone for flag, gone in zip(flags, lost, strict=True)]
        for i, recorded in zip(todo, flags, strict=True):
            if recorded:
                out[i] = True
                found.append(uris[i])
        if found:
            with self._lock:
                for uri in found:
                    known.remember(uri)
        return out
