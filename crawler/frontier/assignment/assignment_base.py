"""Base of the queue-assignment policies, and the authority-based policy with parallel queues.

A policy maps a CrawlURI to its queue key, the frontier's politeness unit. Every policy keys a
``P`` (prerequisite) hop by its *via*, so a ``dns:`` or ``robots.txt`` prerequisite lands in the
queue of the URI that needs it (Heritrix's "policy basis"). Policies are pure after construction
(apart from :meth:`QueueAssignmentPolicy.bind_servers`, and a memo of keys by authority that
changes no answer): one instance serves all threads.

Heritrix counterparts: ``QueueAssignmentPolicy``, ``URIAuthorityBasedQueueAssignmentPolicy``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Generic, Protocol, TypeVar

import mmh3
from pydantic import Field

from crawler.bounded_memo import remember
from crawler.params import Params, params_model_of

if TYPE_CHECKING:
    from crawler.curi import CrawlURI

P = TypeVar("P", bound=Params)

DEFAULT_KEY = "default..."
"""Key of a URI without an authority (Heritrix's ``DEFAULT_CLASS_KEY``)."""
WHOIS_KEY = "whois..."
"""Key of every ``whois:`` URI."""
_MASK64 = (1 << 64) - 1
AUTHORITY_KEYS_KEPT = 65_536
"""Authorities whose queue key a policy keyed by the authority alone remembers (then forgets all
and starts again): ~10 MB at most."""


class HostIpSource(Protocol):
    """Where a policy may look up the last known IP of a host (``crawler.servers.ServerCache``)."""

    def host_ip(self, host: str) -> str | None:
        """The last known IP of ``host``, None when not (yet) known."""
        ...


def split_authority(uri: str) -> tuple[str, str, int]:
    """``(scheme, authority without userinfo, index where the path starts)``, lower-cased.

    ``dns:host`` gives ``("dns", "host", len(uri))``; a URI without ``//`` gives an empty
    authority. Never raises.
    """
    sep = uri.find("://")
    if sep < 0:
        colon = uri.find(":")
        scheme = uri[:colon].lower() if colon > 0 else ""
        return scheme, (uri[colon + 1 :].lower() if scheme == "dns" else ""), len(uri)
    start = sep + 3
    end = len(uri)
    for delim in "/?#":
        at = uri.find(delim, start, end)
        if at >= 0:
            end = at
    authority = uri[start:end]
    at = authority.rfind("@")
    if at >= 0:
        authority = authority[at + 1 :]
    return uri[:sep].lower(), authority.lower(), end


def split_port(authority: str) -> tuple[str, str]:
    """``(host, port)``; port is ``""`` when absent (IPv6 brackets respected)."""
    colon = authority.rfind(":")
    if colon < 0 or authority.rfind("]") > colon:
        return authority, ""
    return authority[:colon], authority[colon + 1 :]


def is_ip_literal(host: str) -> bool:
    """True for a bracketed IPv6 literal or a dotted-decimal IPv4 address."""
    return host.startswith("[") or (host[-1:].isdigit() and host.replace(".", "").isdigit())


def hostname_key(scheme: str, authority: str) -> str:
    """Heritrix's hostname key: ``host``, ``host#port``; https without a port ``host#443``;
    ``dns:host`` → ``host``."""
    host, port = split_port(authority)
    if scheme == "dns":
        return host
    if port:
        return f"{host}#{port}"
    if scheme == "https":
        return f"{host}#443"
    return host


def _hash64(text: str) -> int:
    # Bytes, never str: mmh3 given a str holding a lone surrogate crashes the process.
    h: int = mmh3.hash64(text.encode("utf-8", "surrogatepass"), signed=False)[0]
    return h


def jump_hash(key: int, buckets: int) -> int:
    """Lamping & Veach's jump consistent hash: bucket in ``0..buckets-1``.

    Consistent: growing ``buckets`` from N to N+1 moves only ~1/(N+1) of the keys, all of them
    to the new bucket (Heritrix uses a ring, ``LongToIntConsistentHash``, for the same property).
    """
    b, j = -1, 0
    key &= _MASK64
    while j < buckets:
        b = j
        key = (key * 2862933555777941757 + 1) & _MASK64
        j = int((b + 1) * (float(1 << 31) / float((key >> 33) + 1)))
    return b


class QueueAssignmentPolicy(Generic[P]):
    """Base of all policies: ``key(curi)`` names the queue. Thread-safe (no mutable state)."""

    params_model: ClassVar[type[Params]] = Params

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.params_model = params_model_of(cls, QueueAssignmentPolicy)

    def __init__(self, params: P | None = None) -> None:
        self.params: P = params if params is not None else self.params_model()  # type: ignore[assignment]

    @staticmethod
    def basis(curi: CrawlURI) -> str:
        """The URI the key is computed from: the via for a prerequisite, else the URI itself."""
        if curi.via and curi.hop_path.endswith("P"):
            return curi.via
        return curi.uri

    def bind_servers(self, servers: HostIpSource) -> None:
        """Give the policy the crawl's host → IP knowledge; ignored unless the policy keys by IP.

        Called once by whoever builds the frontier, before the first :meth:`key`.
        """

    def key(self, curi: CrawlURI) -> str:
        """The queue key of ``curi`` (non-empty, no NUL). Never raises."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.params!r})"


class AuthorityPolicyParams(Params):
    """Parameters shared by the authority-based policies."""

    parallel_queues: int = Field(1, ge=1, le=10_000, description="queues per host (N)")
    parallel_queues_random_assignment: bool = Field(
        False, description="spread by a hash of the whole URI, not its first path segment"
    )
    force_queue_assignment: str = Field("", description="if set, every URI gets this key")


A = TypeVar("A", bound=AuthorityPolicyParams)


class AuthorityQueueAssignmentPolicy(QueueAssignmentPolicy[A]):
    """Key from the URI's authority (:meth:`authority_key`), optionally split into N queues.

    ``whois:`` URIs get ``whois...``; a URI without an authority ``default...``. With
    ``parallel_queues`` N > 1 a host is split into N queues by the jump consistent hash of the
    murmur3 hash of its first path segment (only when another ``/`` follows it; else sub-queue 0)
    or, with ``parallel_queues_random_assignment``, of the whole URI. Sub-queue 0 keeps the plain
    key, sub-queue k > 0 appends ``+k``; ``dns:`` URIs are never split. Because the hash is
    consistent, raising N on a resumed crawl moves only ~1/N of a host's directories.

    A policy whose :meth:`authority_key` depends on the scheme and authority alone says so with
    :attr:`keys_by_authority`; its keys are then remembered per ``scheme://authority`` text as the
    URI spells it (:data:`AUTHORITY_KEYS_KEPT` of them), so a host's every other URI costs a
    dictionary lookup. The memo changes no key: an entry is made only for a prefix that ends
    where :func:`split_authority` ends the authority, and any URI with that prefix has the same
    scheme, authority and path start. Lookups and additions are single dictionary operations
    (atomic under the GIL): thread-safe.
    """

    keys_by_authority: ClassVar[bool] = False
    """True when :meth:`authority_key` reads only its ``scheme`` and ``authority`` (not the
    CrawlURI, nor any state that changes): its results may be remembered."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        # A subclass that overrides authority_key says again whether it keys by authority alone.
        if "authority_key" in cls.__dict__ and "keys_by_authority" not in cls.__dict__:
            cls.keys_by_authority = False

    def __init__(self, params: A | None = None) -> None:
        super().__init__(params)
        # scheme://authority as spelled -> (authority key, may split into parallel queues)
        self._authority_keys: dict[str, tuple[str, bool]] = {}

    def authority_key(self, scheme: str, authority: str, curi: CrawlURI) -> str:
        """The key of a URI whose lower-cased ``scheme`` and ``authority`` (no userinfo) are
        given; ``curi`` is passed for policies that look at more than the URI text."""
        raise NotImplementedError

    def key(self, curi: CrawlURI) -> str:
        params = self.params
        if params.force_queue_assignment:
            return params.force_queue_assignment
        uri = self.basis(curi)
        memo = self._authority_keys if self.keys_by_authority else None
        if memo is not None:
            # The prefix up to the first "/" after "://": remembered only when that is where
            # the authority ends (no "?" or "#" before it), so a hit needs no further scan.
            sep = uri.find("://")
            end = uri.find("/", sep + 3) if sep > 0 else -1
            hit = memo.get(uri[:end]) if end > 0 else None
            if hit is not None:
                if params.parallel_queues == 1:
                    return hit[0] or DEFAULT_KEY
                return self._finish(hit[0], hit[1], uri, end)
        scheme, authority, path_at = split_authority(uri)
        if scheme == "whois":
            return WHOIS_KEY
        if not authority:
            return DEFAULT_KEY
        key = self.authority_key(scheme, authority, curi).replace("\x00", "")
        splits = scheme != "dns"
        if memo is not None and uri[path_at : path_at + 1] == "/":
            remember(memo, uri[:path_at], (key, splits), AUTHORITY_KEYS_KEPT)
        return self._finish(key, splits, uri, path_at)

    def _finish(self, key: str, splits: bool, uri: str, path_at: int) -> str:
        """``key`` with the URI's sub-queue (``splits``: not a ``dns:`` URI), or the default."""
        n = self.params.parallel_queues
        if n > 1 and splits:
            sub = self._subqueue(uri, path_at, n)
            if sub:
                key = f"{key}+{sub}"
        return key or DEFAULT_KEY

    def _subqueue(self, uri: str, path_at: int, n: int) -> int:
        if self.params.parallel_queues_random_assignment:
            return jump_hash(_hash64(uri), n)
        if uri[path_at : path_at + 1] != "/":
            return 0
        path_end = len(uri)
        for delim in "?#":
            at = uri.find(delim, path_at, path_end)
            if at >= 0:
                path_end = at
        slash = uri.find("/", path_at + 1, path_end)
        if slash < 0:
            return 0
        return jump_hash(_hash64(uri[path_at + 1 : slash]), n)
