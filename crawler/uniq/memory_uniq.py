"""MemoryUriUniqFilter: canonical URIs in a Python set (Heritrix's ``MemUriUniqFilter``).

Exact and fast, but nothing survives the process and memory grows ~100 bytes per URI: for
tests and small crawls. Thread-safe (one lock around the check-and-add).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence

from crawler.params import NoParams
from crawler.uniq.uniq_filter import UriUniqFilter


class MemoryUriUniqFilter(UriUniqFilter[NoParams]):
    """Exact in-memory uniq filter."""

    def __init__(self, params: NoParams | None = None) -> None:
        super().__init__(params)
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def add(self, canonical: str) -> bool:
        seen = self._seen
        with self._lock:
            if canonical in seen:
                return False
            seen.add(canonical)
            return True

    def add_force(self, canonical: str) -> None:
        with self._lock:
            self._seen.add(canonical)

    def add_many(self, canonicals: Iterable[str]) -> list[bool]:
        return self._add_many(list(canonicals), None)

    def add_many_announced(
        self, canonicals: Sequence[str], announce: Callable[[list[str]], None]
    ) -> list[bool]:
        return self._add_many(list(canonicals), announce)

    def _add_many(
        self, canonicals: list[str], announce: Callable[[list[str]], None] | None
    ) -> list[bool]:
        seen = self._seen
        with self._lock:
            fresh = dict.fromkeys(c for c in canonicals if c not in seen)
            if fresh and announce is not None:
                announce(list(fresh))
            out: list[bool] = []
            for canonical in canonicals:
                if canonical in seen:
                    out.append(False)
                else:
                    seen.add(canonical)
                    out.append(True)
        return out

    def recorded(self, canonicals: list[str]) -> list[bool]:
        seen = self._seen  # a set lookup is atomic: no lock needed to read
        return [c in seen for c in canonicals]

    def count(self) -> int:
        return len(self._seen)
