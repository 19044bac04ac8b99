"""TallyStore: the storage a crawl-wide rule counts in, written once for every backend.

A rule (a quota, a trap budget, a form login) decides; the store only keeps what it counts:

* :meth:`~TallyStore.read` / :meth:`~TallyStore.add` — counters: per key a count and a byte
  total (a :data:`Tally`); a key never added reads ``(0, 0)``;
* :meth:`~TallyStore.join` — a capped set of 64-bit members per key: True if the member is in
  the set already or was added because the set held fewer than ``cap`` members; the test and the
  insertion are one atomic step, so two processes never both take the last place;
* :meth:`~TallyStore.put_text` / :meth:`~TallyStore.text` — a short text per key (the last
  written wins).

Keys are plain strings chosen by the rule (``h:<host>``, ``trap0:s:<series>`` …); a shared store
puts them under its crawl's prefix. A store may forget whole sets when bounded (least recently
used first), never single members or counts. Every method is thread-safe.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

Tally = tuple[int, int]
"""A counter's value: (count, bytes)."""


@runtime_checkable
class TallyStore(Protocol):
    """Counters, capped member sets and texts under string keys (module docstring)."""

    def read(self, keys: Sequence[str]) -> list[Tally]:
        """The tally of each key, in order (``(0, 0)`` for a key never added)."""
        ...

    def add(self, keys: Sequence[str], count: int, size: int = 0) -> None:
        """Add ``count`` and ``size`` to the tally of each key."""
        ...

    def join(self, key: str, member: int, cap: int) -> bool:
        """Whether ``member`` is in ``key``'s set, adding it while the set has fewer than
        ``cap`` members (atomically)."""
        ...

    def put_text(self, key: str, text: str) -> None:
        """Store ``text`` under ``key``."""
        ...

    def text(self, key: str) -> str | None:
        """The text stored under ``key``, or None."""
        ...

    def close(self) -> None:
        """Release the store's resources; idempotent, never raises."""
        ...
