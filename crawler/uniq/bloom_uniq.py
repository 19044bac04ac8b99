"""BloomUriUniqFilter: a Bloom filter of canonical URIs, a few bits each, in a mapped file.

Sized from ``expected_items`` n and ``false_positive_rate`` p (the usual Bloom filter sizing):
m = ceil(-n ln p / (ln 2)^2) bits, k = round(m / n ln 2) hash positions — 1% gives 9.6 bits and
k = 7 per URI, 0.01% 19.2 bits and k = 13. Each URI is hashed once to 128 bits (murmur3 x64 or
MD5, param ``fingerprint``) and split into two 64-bit hashes; the k positions are
g_i = h1 + i * h2 (Kirsch-Mitzenmacher, as Guava): see :mod:`crawler.uniq.bloom_bits`.

No false negatives: a URI is never queued twice. A false positive makes the filter answer
"already seen" for a new URI, which is then silently not crawled; the rate grows past
``expected_items``, so a warning (``bloom_filter_over_capacity``) is logged when the count passes
it, and again at each doubling. The bit array lives in ``state/<dir_name>/bloom.bits``, mapped
shared: a resumed crawl (even after kill -9) keeps it, with the geometry it was created with
(changed ``expected_items``/``false_positive_rate`` are then ignored, with a warning).
``count`` is the number of adds that set at least one new bit (false positives are not counted).

Fast path: recent 128-bit hashes answer "already seen" from a set (``cache_size``), without the
lock. Thread-safe: one lock around check-and-set. Heritrix counterpart: ``BloomUriUniqFilter``
(``BloomFilter64bit``, 125 million items at 2^-22).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import mmh3
import structlog
from pydantic import Field

from crawler.params import Params
from crawler.uniq.bloom_bits import BloomBits, expected_fpr
from crawler.uniq.recent_keys import RecentKeys
from crawler.uniq.uniq_filter import FingerprintFunction, UniqStateError, UriUniqFilter, digest128

BITS_FILE = "bloom.bits"


class BloomUriUniqFilterParams(Params):
    """Size, false-positive rate, hash and location of the Bloom filter."""

    dir_name: str = Field("uniq-bloom", min_length=1, description="directory under state/")
    expected_items: int = Field(
        10_000_000, ge=1, description="URIs the filter is sized for (n); warns when exceeded"
    )
    false_positive_rate: float = Field(
        1e-6, gt=0, lt=1, description="target rate of new URIs wrongly taken as seen (p) at n"
    )
    fingerprint: FingerprintFunction = Field(
        "mmh3", description="128-bit hash split into two: mmh3 (fast) or md5"
    )
    cache_size: int = Field(
        50_000, ge=0, description="recent hashes kept in RAM per generation (2 generations)"
    )


class BloomUriUniqFilter(UriUniqFilter[BloomUriUniqFilterParams]):
    """Probabilistic persistent uniq filter (no false negatives)."""

    def __init__(self, params: BloomUriUniqFilterParams | None = None) -> None:
        super().__init__(params)
        self._bits: BloomBits | None = None
        self._lock = threading.Lock()
        self._recent: RecentKeys[int] = RecentKeys(self.params.cache_size)
        self._function: FingerprintFunction = self.params.fingerprint
        self._warn_at = 0
        self._logger: Any = structlog.get_logger("crawler.uniq")

    @property
    def bits(self) -> BloomBits | None:
        """The mapped bit array once open (geometry, ``size_bytes``)."""
        return self._bits

    def open(self, state_dir: Path) -> None:
        params = self.params
        with self._lock:
            if self._bits is not None:
                return
            path = Path(state_dir) / params.dir_name / BITS_FILE
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                bits = BloomBits.create_or_open(
                    path, params.expected_items, params.false_positive_rate, self._function
                )
            except (OSError, ValueError) as exc:
                raise UniqStateError(f"cannot open the Bloom uniq filter: {exc}") from exc
            if bits.function != self._function:
                bits.close()
                raise UniqStateError(
                    f"the Bloom filter {path} was built with fingerprint {bits.function!r}, the "
                    f"order says {self._function!r}: set "
                    "frontier.uniq_filter.params.fingerprint to the first"
                )
            if (bits.expected_items, bits.false_positive_rate) != (
                params.expected_items,
                params.false_positive_rate,
            ):
                self._logger.warning(
                    "bloom_filter_geometry_kept",
                    path=str(path),
                    expected_items=bits.expected_items,
                    false_positive_rate=bits.false_positive_rate,
                )
            self._bits = bits
            self._warn_at = bits.expected_items
            while self._warn_at < bits.count:
                self._warn_at *= 2

    def _hash(self, canonical: str) -> int:
        if self._function == "mmh3":
            h: int = mmh3.hash128(canonical.encode("utf-8", "surrogatepass"), signed=False)
            return h
        return int.from_bytes(digest128(canonical, self._function), "little")

    def _require(self) -> BloomBits:
        if self._bits is None:
            raise RuntimeError("BloomUriUniqFilter is not open")
        return self._bits

    def add(self, canonical: str) -> bool:
        h = self._hash(canonical)
        recent = self._recent
        if h in recent:
            return False
        with self._lock:
            bits = self._require()
            new = bits.add(h)
            recent.remember(h)
            if new and bits.count > self._warn_at:
                self._over_capacity(bits)
            return new

    def maybe_new(self, canonicals: list[str]) -> list[bool]:
        return self._recent.unknown([self._hash(c) for c in canonicals])

    def add_many(self, canonicals: Iterable[str]) -> list[bool]:
        return self._add_many(list(canonicals), None)

    def add_many_announced(
        self, canonicals: Sequence[str], announce: Callable[[list[str]], None]
    ) -> list[bool]:
        return self._add_many(list(canonicals), announce)

    def _add_many(
        self, canonicals: list[str], announce: Callable[[list[str]], None] | None
    ) -> list[bool]:
        hashes = [self._hash(c) for c in canonicals]
        recent = self._recent
        out: list[bool] = []
        with self._lock:
            bits = self._require()
            if announce is not None:
                fresh = {
                    h: c
                    for h, c in zip(hashes, canonicals, strict=True)
                    if h not in recent and not bits.contains(h)
                }
                if fresh:
                    announce(list(fresh.values()))
            for h in hashes:
                if h in recent:
                    out.append(False)
                    continue
                out.append(bits.add(h))
                recent.remember(h)
            if bits.count > self._warn_at:
                self._over_capacity(bits)
        return out

    def recorded(self, canonicals: list[str]) -> list[bool]:
        """:meth:`contains` of each (the Bloom filter's false positives included, as its add
        reports them), under one hold of the lock."""
        hashes = [self._hash(c) for c in canonicals]
        recent = self._recent
        with self._lock:
            bits = self._require()
            return [h in recent or bits.contains(h) for h in hashes]

    def contains(self, canonical: str) -> bool:
        """True if ``canonical`` was (probably) added; never False for an added URI."""
        h = self._hash(canonical)
        with self._lock:
            return self._require().contains(h)

    def _over_capacity(self, bits: BloomBits) -> None:
        while self._warn_at < bits.count:
            self._warn_at *= 2
        self._logger.warning(
            "bloom_filter_over_capacity",
            count=bits.count,
            expected_items=bits.expected_items,
            false_positive_rate_now=expected_fpr(bits.bits, bits.hashes, bits.count),
            target_false_positive_rate=bits.false_positive_rate,
        )

    def count(self) -> int:
        bits = self._bits
        return bits.count if bits is not None else 0

    def close(self) -> None:
        with self._lock:
            bits, self._bits = self._bits, None
            self._recent.clear()
        if bits is not None:
            bits.close()
