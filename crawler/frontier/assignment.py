"""Queue-assignment policies: which work queue a CrawlURI joins (its politeness unit).

Every policy keys a ``P`` (prerequisite) hop by its *via*, so a ``dns:`` or ``robots.txt``
prerequisite lands in the queue of the URI that needs it (Heritrix's "policy basis").
Policies are pure and stateless after construction: one instance serves all threads.

Heritrix counterparts (``engine/.../frontier/*QueueAssignmentPolicy.java``):

* :class:`HostnameQueueAssignmentPolicy` — ``host``, ``host#port``; https without a port gets
  ``#443``; ``dns:host`` keys by host.
* :class:`SurtAuthorityQueueAssignmentPolicy` — reversed host labels, ``org,example,www,``
  (``#port`` appended), so http and https of a host share a queue.
* :class:`HashQueueAssignmentPolicy` — ``<function>-<n>``: a string hash of the whole URI modulo
  ``buckets`` (ELF, BKDR, SDBM or murmur3) to spread one big site over many queues (trading away
  per-host politeness), after the papers summarized in ``seeds-summary.md``.

With ``parallel_queues`` N > 1 the authority policies split a host into N queues by a consistent
hash of the first path segment (only when another ``/`` follows it; else sub-queue 0, which
keeps the plain key); sub-queue k > 0 appends ``+k``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Generic, Literal, TypeVar

import mmh3
from pydantic import Field

from crawler.params import Params, params_model_of

if TYPE_CHECKING:
    from crawler.curi import CrawlURI

P = TypeVar("P", bound=Params)

DEFAULT_KEY = "default..."
WHOIS_KEY = "whois..."
_MASK64 = (1 << 64) - 1


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


def jump_hash(key: int, buckets: int) -> int:
    """Lamping & Veach's jump consistent hash: bucket in ``0..buckets-1``; growing ``buckets``
    moves only ~1/buckets of the keys."""
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


class _AuthorityPolicy(QueueAssignmentPolicy[A]):
    """Key from the authority (``authority_key``), optionally split into parallel queues."""

    def authority_key(self, scheme: str, authority: str) -> str:
        raise NotImplementedError

    def key(self, curi: CrawlURI) -> str:
        params = self.params
        if params.force_queue_assignment:
            return params.force_queue_assignment
        uri = self.basis(curi)
        scheme, authority, path_at = split_authority(uri)
        if scheme == "whois":
            return WHOIS_KEY
        if not authority:
            return DEFAULT_KEY
        key = self.authority_key(scheme, authority).replace("\x00", "")
        n = params.parallel_queues
        if n > 1 and scheme != "dns":
            sub = self._subqueue(uri, path_at, n)
            if sub:
                key = f"{key}+{sub}"
        return key or DEFAULT_KEY

    def _subqueue(self, uri: str, path_at: int, n: int) -> int:
        if self.params.parallel_queues_random_assignment:
            return jump_hash(mmh3.hash64(uri, signed=False)[0], n)
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
        return jump_hash(mmh3.hash64(uri[path_at + 1 : slash], signed=False)[0], n)


def _split_port(authority: str) -> tuple[str, str]:
    """``(host, port)``; port is ``""`` when absent (IPv6 brackets respected)."""
    colon = authority.rfind(":")
    if colon < 0 or authority.rfind("]") > colon:
        return authority, ""
    return authority[:colon], authority[colon + 1 :]


class HostnameQueueAssignmentPolicy(_AuthorityPolicy[AuthorityPolicyParams]):
    """``host``, ``host#port``, https without a port ``host#443``; ``dns:host`` -> ``host``."""

    def authority_key(self, scheme: str, authority: str) -> str:
        host, port = _split_port(authority)
        if scheme == "dns":
            return host
        if port:
            return f"{host}#{port}"
        if scheme == "https":
            return f"{host}#443"
        return host


class SurtAuthorityQueueAssignmentPolicy(_AuthorityPolicy[AuthorityPolicyParams]):
    """SURT authority: ``www.example.org`` -> ``org,example,www,``; port as ``#8080``.

    IP addresses are not reversed. http and https of the same host share a queue.
    """

    def authority_key(self, scheme: str, authority: str) -> str:
        host, port = _split_port(authority)
        if host.startswith("[") or host.replace(".", "").isdigit():
            surt = host
        else:
            surt = ",".join(reversed(host.split("."))) + ","
        return f"{surt}#{port}" if port else surt


def elf_hash(text: str) -> int:
    """ELFHash (PJW): h = (h << 4) + c, folding the top nibble back in; 31-bit result."""
    h = 0
    for ch in text:
        h = ((h << 4) + ord(ch)) & 0xFFFFFFFF
        x = h & 0xF0000000
        if x:
            h ^= x >> 24
            h &= ~x & 0xFFFFFFFF
    return h & 0x7FFFFFFF


def bkdr_hash(text: str) -> int:
    """BKDRHash with seed 131: h = h * 131 + c; 31-bit result."""
    h = 0
    for ch in text:
        h = (h * 131 + ord(ch)) & 0xFFFFFFFF
    return h & 0x7FFFFFFF


def sdbm_hash(text: str) -> int:
    """SDBMHash: h = c + (h << 6) + (h << 16) - h; 31-bit result."""
    h = 0
    for ch in text:
        h = (ord(ch) + (h << 6) + (h << 16) - h) & 0xFFFFFFFF
    return h & 0x7FFFFFFF


def murmur3_hash(text: str) -> int:
    """32-bit murmur3 (unsigned)."""
    return int(mmh3.hash(text, signed=False))


_HASHES = {"elf": elf_hash, "bkdr": bkdr_hash, "sdbm": sdbm_hash, "murmur3": murmur3_hash}


class HashQueueAssignmentPolicyParams(Params):
    """Parameters of :class:`HashQueueAssignmentPolicy`."""

    function: Literal["elf", "bkdr", "sdbm", "murmur3"] = Field(
        "murmur3", description="string hash of the whole URI"
    )
    buckets: int = Field(
        47,
        ge=1,
        le=1_000_000,
        description="number of queues; prefer a prime: ELF/BKDR/SDBM keep the last character in "
        "their low bits, so an even count leaves half the buckets empty for URIs ending alike",
    )


class HashQueueAssignmentPolicy(QueueAssignmentPolicy[HashQueueAssignmentPolicyParams]):
    """``<function>-<hash(uri) % buckets>``: queues independent of hosts.

    Spreads one site over ``buckets`` queues so all threads can work on it; politeness is then
    per bucket, not per host, so use it only for sites that agree to the load.
    """

    def key(self, curi: CrawlURI) -> str:
        params = self.params
        uri = self.basis(curi)
        return f"{params.function}-{_HASHES[params.function](uri) % params.buckets}"
