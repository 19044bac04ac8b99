"""recently_seen: which of a page's links the uniq filter surely recorded, without I/O.

The one rule behind ``seen_recently`` of every frontier (the work-queue frontier's intake and a
Redis worker's frontier alike): canonicalize each URI as scheduling would, then ask the uniq
filter's no-I/O fast path (:meth:`~crawler.uniq.uniq_filter.UriUniqFilter.maybe_new`). A True
is final (the URI was recorded, so scheduling it again would do nothing); a False only means
"not known cheaply". A URI that cannot be canonicalized is False (scheduling reports it).

Pure function of its arguments; thread-safe as far as the filter's ``maybe_new`` is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from crawler.frontier.preparer import FrontierPreparer
    from crawler.uniq.uniq_filter import UriUniqFilter


def recently_seen(
    prep: FrontierPreparer, uniq: UriUniqFilter[Any], uris: Sequence[str]
) -> list[bool]:
    """One flag per URI of ``uris``: True where ``uniq`` surely recorded its canonical form."""
    canonical_of = prep.canonical
    canonicals: list[str] = []
    for uri in uris:
        try:
            canonicals.append(canonical_of(uri))
        except ValueError:
            canonicals.append("")
    return [not new for new in uniq.maybe_new(canonicals)]
