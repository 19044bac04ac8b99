"""UriUniqFilter: the frontier's "already seen?" set of canonical URIs.

``add`` is an atomic put-if-absent: exactly one caller gets True for a given canonical URI, even
with many threads. ``add_force`` records without asking (force-fetch: the URI is queued anyway).
``count`` is the crawl's "discovered" figure. Implementations are thread-safe.

Heritrix counterpart: ``UriUniqFilter`` (``alreadyIncluded``), ``BdbUriUniqFilter``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar, Generic, TypeVar

import mmh3

from crawler.params import Params, params_model_of

P = TypeVar("P", bound=Params)


def fingerprint(canonical: str) -> bytes:
    """11-byte key of a canonical URI: 3 bytes of the scheme+authority's murmur3 hash, then the
    exact 64-bit murmur3 hash of the whole URI.

    The authority prefix keeps one host's keys adjacent (locality in LevelDB, bulk forget per
    host later); 64 bits over the whole URI make collisions negligible even within one host.
    """
    sep = canonical.find("://")
    if sep >= 0:
        slash = canonical.find("/", sep + 3)
        prefix = canonical if slash < 0 else canonical[:slash]
    else:
        prefix = canonical[: canonical.find(":") + 1]
    return mmh3.hash_bytes(prefix)[:3] + mmh3.hash_bytes(canonical)[:8]


class UriUniqFilter(Generic[P]):
    """Base of the uniq filters; ``cls(params)`` does no I/O, :meth:`open` does."""

    params_model: ClassVar[type[Params]] = Params

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.params_model = params_model_of(cls, UriUniqFilter)

    def __init__(self, params: P | None = None) -> None:
        self.params: P = params if params is not None else self.params_model()  # type: ignore[assignment]

    def open(self, state_dir: Path) -> None:
        """Open (creating if needed) persistent state under ``state_dir``."""

    def add(self, canonical: str) -> bool:
        """Record ``canonical``; True if it was never seen before."""
        raise NotImplementedError

    def add_force(self, canonical: str) -> None:
        """Record ``canonical`` whether or not it was seen (force-fetch)."""
        self.add(canonical)

    def add_many(self, canonicals: Iterable[str]) -> list[bool]:
        """:meth:`add` for each, in order (subclasses may batch the I/O)."""
        return [self.add(c) for c in canonicals]

    def count(self) -> int:
        """How many distinct URIs were recorded (the crawl's "discovered")."""
        raise NotImplementedError

    def close(self) -> None:
        """Flush and release resources. Idempotent."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.params!r})"
