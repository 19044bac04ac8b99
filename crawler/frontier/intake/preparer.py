"""FrontierPreparer: what a CrawlURI needs before it can join a queue.

Sets, in Heritrix's order (``FrontierPreparer.prepare``): the canonical string for the uniq filter
(``frontier.canonicalization`` rules), the URI precedence (``uri_precedence_policy``) and the
queue key (the QueueAssignmentPolicy; a ``P`` hop joins the queue of its in-flight via and sorts
ahead of it, one directive higher). A URI that cannot be canonicalized or has no queue raises
``ValueError`` with the reason, which the frontier sends to uri-errors.log.

Reads ``curi.uri``, ``via``, ``hop_path``, ``queue_key``; writes ``canonical``, ``precedence``,
``queue_key`` (and ``directive`` of a prerequisite). Immutable after construction, thread-safe.

The canonical keys of the last :data:`CANONICAL_MEMO` URIs are remembered (a bounded LRU): a
page's outlinks are canonicalized first to skip those surely seen (``seen_recently``), then again
as they are scheduled, and the second time costs a dictionary lookup. Canonicalization is a
pure function of the URI, so the memo changes no answer.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from crawler.canonicalizer import Canonicalizer
from crawler.frontier.intake.precedence import COST_POLICIES, sort_ahead_of, uri_precedence_function

if TYPE_CHECKING:
    from crawler.curi import CrawlURI
    from crawler.frontier.assignment import QueueAssignmentPolicy
    from crawler.order.schema import FrontierConfig

_NEEDS_HOST = frozenset({"http", "https", "ftp", "dns"})
CANONICAL_MEMO = 4096
"""URIs whose canonical key :class:`FrontierPreparer` remembers (a few pages' outlinks)."""


class FrontierPreparer:
    """Canonical key, precedence and queue key of new URIs (see the module docstring).

    ``canonical(uri)`` is the uniq key of ``uri`` (memoized; ``ValueError`` if it has no scheme
    or needs a missing host).
    """

    def __init__(self, config: FrontierConfig, policy: QueueAssignmentPolicy[Any]) -> None:
        self.canonicalize = Canonicalizer(config.canonicalization).canonicalize
        self.cost = COST_POLICIES[config.cost_policy]
        self._uri_precedence = uri_precedence_function(config, self.cost)
        self._policy = policy
        # A ValueError is not remembered: a bad URI raises each time it is asked.
        self.canonical: Callable[[str], str] = functools.lru_cache(maxsize=CANONICAL_MEMO)(
            self._canonical
        )

    def _canonical(self, uri: str) -> str:
        """The uniq key of ``uri``; ``ValueError`` if it has no scheme or needs a missing host."""
        canonical = self.canonicalize(uri)
        colon = canonical.find(":")
        scheme = canonical[:colon] if colon > 0 else ""
        if not scheme:
            raise ValueError(f"no scheme in {uri[:200]!r}")
        if scheme in _NEEDS_HOST:
            rest = canonical[colon + 1 :]
            host = rest[2:] if rest.startswith("//") else rest
            if not host or host[0] in "/?#":
                raise ValueError(f"no host in {uri[:200]!r}")
        return canonical

    def queue_key(self, curi: CrawlURI, via_queue: tuple[str, int] | None) -> str:
        """Set the URI's precedence and return its queue key (``ValueError`` if none).

        ``via_queue`` is ``(queue key, sort key)`` of the via when it is in flight.
        """
        if self._uri_precedence is not None:
            curi.precedence = self._uri_precedence(curi)
        if via_queue is not None and curi.hop_path.endswith("P"):
            sort_ahead_of(curi, via_queue[1])
            return via_queue[0]
        try:
            key = curi.queue_key or self._policy.key(curi)
        except ValueError as exc:
            raise ValueError(f"no queue for URI: {exc}") from exc
        if not key:
            raise ValueError("no queue for URI")
        return key
