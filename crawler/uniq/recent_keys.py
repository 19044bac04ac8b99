"""RecentKeys: a bounded in-memory set of recently recorded keys, the uniq filters' fast path.

Most links of a page were seen before (navigation, headers, footers), so the common answer of a
uniq filter is "already seen". Keys recorded or confirmed recently answer it from a Python set
without touching disk. Two generations bound the memory: when the young set fills, it becomes
the old one and the previous old set is dropped, so between ``capacity`` and ``2 * capacity`` of
the most recent keys are remembered (about 70-100 bytes per fingerprint; a batch added by
:meth:`~RecentKeys.remember_many` may take the young set one batch past ``capacity``).
``dropped`` turns True at the first turn-over that drops keys: until then every key remembered
is held, so a filter opened empty may take a miss as "not recorded".

Thread-safety: membership tests may run without a lock (a set lookup is atomic under the GIL; a
miss during a generation swap only sends the caller to the slow, locked path). :meth:`remember`
must be called under the owning filter's lock, and only after the key is durably recorded, so a
hit always means "recorded".
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)


class RecentKeys(Generic[K]):
    """Two-generation set of keys (fingerprint bytes, hash ints); ``capacity`` 0 disables it."""

    __slots__ = ("_old", "_young", "capacity", "dropped")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._young: set[K] = set()
        self._old: set[K] = set()
        self.dropped = False
        """True once a turn-over has dropped keys: every key remembered is held until then."""

    def __contains__(self, key: K) -> bool:
        return key in self._young or key in self._old

    def unknown(self, keys: list[K]) -> list[bool]:
        """True for each key not remembered (one call for a page's worth of keys)."""
        young, old = self._young, self._old
        return [not (key in young or key in old) for key in keys]

    def remember(self, key: K) -> None:
        """Add ``key`` (caller holds the filter's lock)."""
        if not self.capacity:
            return
        young = self._young
        young.add(key)
        if len(young) >= self.capacity:
            self._turn_over(young)

    def remember_many(self, keys: Iterable[K]) -> None:
        """:meth:`remember` each of ``keys`` (caller holds the filter's lock); the generations
        turn over once all are added, so the young one may pass ``capacity`` by one batch."""
        if not self.capacity:
            return
        young = self._young
        young.update(keys)
        if len(young) >= self.capacity:
            self._turn_over(young)

    def _turn_over(self, young: set[K]) -> None:
        if self._old:
            self.dropped = True
        self._old = young
        self._young = set()

    def clear(self) -> None:
        """Forget everything (on close)."""
        self._young = set()
        self._old = set()
        self.dropped = False

    def __len__(self) -> int:
        return len(self._young) + len(self._old)
