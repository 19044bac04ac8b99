"""UriUniqFilter: the frontier's "already seen?" set of canonical URIs, and URI fingerprints.

``add`` is an atomic put-if-absent: exactly one caller gets True for a given canonical URI, even
with many threads. ``add_force`` records without asking (force-fetch: the URI is queued anyway).
``add_many_announced`` tells its caller which URIs it is about to record as new *before* it
records them (the frontier's write-ahead for crash recovery,
:mod:`crawler.frontier.store.recovery`).
``count`` is the crawl's "discovered" figure. Implementations are thread-safe. Select one in the
order with ``frontier.uniq_filter: {class: ..., params: {...}}``:
``crawler.uniq.LevelDBUriUniqFilter`` (default, exact), ``crawler.uniq.BloomUriUniqFilter`` (a few
bits per URI, small false-positive rate), ``crawler.uniq.MemoryUriUniqFilter`` (tests, small
crawls), or any subclass by dotted path.

Heritrix counterpart: ``UriUniqFilter`` (``alreadyIncluded``), ``BdbUriUniqFilter``.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import ClassVar, Generic, Literal, TypeVar

import mmh3

from crawler.crawler_error import CrawlerError
from crawler.params import Params, params_model_of

P = TypeVar("P", bound=Params)

FingerprintFunction = Literal["mmh3", "md5"]
"""The hash behind fingerprints: murmur3 x64 128-bit (fast) or MD5 (the textbook's choice)."""


class UniqStateError(CrawlerError, RuntimeError):
    """The filter's state under ``state/`` cannot be used (locked, corrupt, incompatible)."""


def authority_part(canonical: str) -> str:
    """``scheme://authority`` of a canonical URI (up to the first ``/`` after ``://``);
    ``scheme:`` for a URI without ``//`` (``dns:``, ``mailto:``)."""
    sep = canonical.find("://")
    if sep >= 0:
        slash = canonical.find("/", sep + 3)
        return canonical if slash < 0 else canonical[:slash]
    return canonical[: canonical.find(":") + 1]


def digest128(text: str, function: FingerprintFunction = "mmh3") -> bytes:
    """16-byte hash of ``text``'s UTF-8 bytes (murmur3 x64 128 little-endian, or MD5)."""
    data = text.encode("utf-8", "surrogatepass")
    if function == "md5":
        return hashlib.md5(data, usedforsecurity=False).digest()
    raw: bytes = mmh3.hash_bytes(data)
    return raw


FINGERPRINT_MEMO = 4096
"""Canonical URIs whose fingerprint :func:`fingerprint` remembers (a few pages' outlinks)."""


@functools.lru_cache(maxsize=FINGERPRINT_MEMO)
def fingerprint(canonical: str, function: FingerprintFunction = "mmh3") -> bytes:
    """11-byte key of a canonical URI: 3 bytes of the hash of its scheme+authority, then the
    exact 64-bit hash of the whole URI.

    Memoized (a bounded LRU, thread-safe): the frontier asks for a page's outlinks up to three
    times in a row (skip the links surely seen, then the cheap check, then the check-and-add).

    The authority prefix keeps one host's keys adjacent (LevelDB locality, bulk forget per host
    later), as Heritrix's 24-bit fp(scheme+authority) | 40-bit fp(URI) key does; 64 bits over the
    whole URI (not Heritrix's 40) keep collisions negligible even at 10^9 URIs of one host.
    """
    if function == "mmh3":
        return _authority_prefix(authority_part(canonical)) + _whole_part(canonical, function)
    return digest128(authority_part(canonical), function)[:3] + _whole_part(canonical, function)


@functools.lru_cache(maxsize=FINGERPRINT_MEMO)
def fingerprint64(canonical: str, function: FingerprintFunction = "mmh3") -> int:
    """The exact 64-bit hash of the whole canonical URI as an integer: the last 8 bytes of
    :func:`fingerprint` (big-endian), without its authority prefix. The shared (Redis) filter's
    member. Memoized as :func:`fingerprint` is (a page's outlinks are asked for up to four times
    in a row); thread-safe."""
    return int.from_bytes(_whole_part(canonical, function), "big")


def _whole_part(canonical: str, function: FingerprintFunction) -> bytes:
    """The 8 bytes of the whole URI's hash that both fingerprints hold."""
    if function == "mmh3":
        # Always bytes: mmh3 given a str holding a lone surrogate crashes the process.
        whole: bytes = mmh3.hash_bytes(canonical.encode("utf-8", "surrogatepass"))
        return whole[:8]
    return digest128(canonical, function)[:8]


@functools.lru_cache(maxsize=8192)
def _authority_prefix(authority: str) -> bytes:
    """The 3-byte mmh3 prefix of an authority (cached: a crawl has few, each with many URIs)."""
    return mmh3.hash_bytes(authority.encode("utf-8", "surrogatepass"))[:3]


class UriUniqFilter(Generic[P]):
    """Base of the uniq filters; ``cls(params)`` does no I/O, :meth:`open` does."""

    params_model: ClassVar[type[Params]] = Params
    #: True for a filter that processes share (its params take ``url`` and ``namespace``): a
    #: worker launched by ``crawler run --workers`` keeps it and is pointed at the crawl's server.
    shared: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.params_model = params_model_of(cls, UriUniqFilter)

    def __init__(self, params: P | None = None) -> None:
        self.params: P = params if params is not None else self.params_model()  # type: ignore[assignment]

    def open(self, state_dir: Path) -> None:
        """Open (creating if needed) persistent state under ``state_dir``.

        Raises :class:`UniqStateError` with a readable message when that state is unusable.
        """

    def add(self, canonical: str) -> bool:
        """Record ``canonical``; True if it was never seen before."""
        raise NotImplementedError

    def add_force(self, canonical: str) -> None:
        """Record ``canonical`` whether or not it was seen (force-fetch)."""
        self.add(canonical)

    def add_many(self, canonicals: Iterable[str]) -> list[bool]:
        """:meth:`add` for each, in order (subclasses batch the I/O and the locking)."""
        return [self.add(c) for c in canonicals]

    def add_many_announced(
        self, canonicals: Sequence[str], announce: Callable[[list[str]], None]
    ) -> list[bool]:
        """:meth:`add_many`, first calling ``announce`` with the distinct canonicals about to be
        recorded as new (not called if there are none).

        ``announce`` runs before any of them is recorded; if it raises, nothing is recorded and
        the exception propagates. It must not call this filter (it may run under the filter's
        lock). The built-in filters announce exactly the canonicals they then report new. This
        default announces every canonical not known cheaply to be recorded (:meth:`maybe_new`)
        — a superset: the frontier then errs after a crash towards fetching a URI twice, never
        towards losing one.
        """
        names = list(canonicals)
        todo = [c for c, new in zip(names, self.maybe_new(names), strict=True) if new]
        if todo:
            announce(list(dict.fromkeys(todo)))
        return self.add_many(names)

    def maybe_new(self, canonicals: list[str]) -> list[bool]:
        """False for each canonical known, cheaply and without I/O, to be recorded already.

        True means "ask :meth:`add`". Records nothing; a False is final (it was recorded
        durably). The default knows nothing cheaply: all True.
        """
        return [True] * len(canonicals)

    def recorded(self, canonicals: list[str]) -> list[bool]:
        """True for each canonical the filter has recorded, as far as it can tell cheaply;
        records nothing.

        A True is final (as a False of :meth:`maybe_new`); a False means "new, or not known
        here". Lets the frontier skip the scope's rules for the links of a page it saw long
        ago, not only lately, so a page costs the same however many URIs the crawl has seen.
        A filter that looks its own state up locally (LevelDB, a Bloom filter, a set) answers
        exactly; the default answers :meth:`maybe_new`'s no-I/O fast path only. A shared filter
        may make one round trip for a batch its fast path cannot answer (the Redis filter does,
        once its cache no longer holds all it recorded).
        """
        return [not new for new in self.maybe_new(canonicals)]

    def count(self) -> int:
        """How many distinct URIs were recorded (the crawl's "discovered")."""
        raise NotImplementedError

    def close(self) -> None:
        """Flush and release resources. Idempotent."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.params!r})"
