"""RedirectChain: follows a redirect back into its own chain at most once.

A redirect (an R outlink) carries the canonical keys of the URIs of its chain so far in
``child.data["redirectChain"]``: the chain starts at the first URI that redirected (the last
one reached by a hop other than R) and grows by one key per redirect. Only redirect children
carry it, and the frontier stores it with the URI, so it costs nothing for ordinary links and
survives a restart or a hand-over to another worker.

A redirect whose target is already in the chain (``A → A``, ``A → B → A``, ``A → A;jsessionid=…``
which canonicalizes to ``A``) is force-fetched once, as a server that sets a cookie and sends
the client back expects; once the chain holds a repeat, the next redirect into the chain is
not followed (:meth:`RedirectChain.admit` returns False), so the last fetch of the loop is the
last line of it in crawl.log. A redirect that leaves the chain (``A → A → C``) is followed
as usual. Chains longer than :data:`MAX_CHAIN_KEYS` keep their last keys only (the scope's
``max_redirect_hops`` cuts long chains well before).

Thread-safety: immutable after construction; reads and writes only the CrawlURIs passed in.
"""

from __future__ import annotations

from collections.abc import Callable

from crawler import CrawlURI, Hop
from crawler.urls import UriError

REDIRECT_CHAIN_KEY = "redirectChain"
"""Key of ``CrawlURI.data`` holding the canonical keys of the redirect chain before the URI."""

MAX_CHAIN_KEYS = 50
"""Most canonical keys kept in a chain."""

LOOP_ANNOTATION = "redirectLoop"
"""crawl.log annotation of a URI whose redirect back into its chain was not followed."""


class RedirectChain:
    """Decides whether a redirect is followed, and sets its chain and force-fetch."""

    __slots__ = ("_canonicalize",)

    def __init__(self, canonicalize: Callable[[str], str]) -> None:
        self._canonicalize = canonicalize

    def _key(self, uri: str) -> str:
        try:
            return self._canonicalize(uri)
        except (UriError, ValueError):
            return uri

    def admit(self, via: CrawlURI, child: CrawlURI) -> bool:
        """Whether the redirect ``via`` → ``child`` is followed.

        When it is, ``child.data`` gets the chain and ``child.force_fetch`` is set if the target
        is already in the chain (the uniq filter would drop it otherwise). When it is not, ``via``
        gets the ``redirectLoop`` annotation.
        """
        previous = via.data.get(REDIRECT_CHAIN_KEY) if via.last_hop == Hop.REFER else None
        chain: list[str] = list(previous) if isinstance(previous, list) else []
        chain.append(via.canonical or self._key(via.uri))
        target = self._key(child.uri)
        if target in chain:
            if len(set(chain)) < len(chain):
                via.annotate(LOOP_ANNOTATION)
                return False
            child.force_fetch = True
        child.data[REDIRECT_CHAIN_KEY] = chain[-MAX_CHAIN_KEYS:]
        return True
