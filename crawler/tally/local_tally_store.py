"""LocalTallyStore: a :class:`~crawler.tally.tally_store.TallyStore` in this process's memory.

Sets are kept in a least-recently-joined order and, past ``max_sets``, the oldest is forgotten
whole (bounded memory: a forgotten set starts empty again); counters and texts are never
forgotten. :meth:`LocalTallyStore.state` and :meth:`LocalTallyStore.restore` save and take back
everything as JSON-ready data, so a resumed crawl keeps its tallies.

Thread-safety: one lock, held for a dictionary update or a scan of one set's members.
"""

from __future__ import annotations

import threading
from array import array
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from crawler.tally.tally_store import Tally


class LocalTallyStore:
    """Tallies, sets and texts in memory (module docstring); ``max_sets`` None = unbounded."""

    def __init__(self, max_sets: int | None = None) -> None:
        self._lock = threading.Lock()
        self._max_sets = max_sets
        self._counts: dict[str, list[int]] = {}
        self._sets: OrderedDict[str, array[int]] = OrderedDict()
        self._texts: dict[str, str] = {}

    def read(self, keys: Sequence[str]) -> list[Tally]:
        with self._lock:
            got = [self._counts.get(key) for key in keys]
        return [(t[0], t[1]) if t is not None else (0, 0) for t in got]

    def add(self, keys: Sequence[str], count: int, size: int = 0) -> None:
        with self._lock:
            for key in keys:
                tally = self._counts.get(key)
                if tally is None:
                    self._counts[key] = [count, size]
                else:
                    tally[0] += count
                    tally[1] += size

    def join(self, key: str, member: int, cap: int) -> bool:
        with self._lock:
            members = self._sets.get(key)
            if members is None:
                members = self._sets[key] = array("q")
                if self._max_sets is not None and len(self._sets) > self._max_sets:
                    self._sets.popitem(last=False)
            else:
                self._sets.move_to_end(key)
            if member in members:
                return True
            if len(members) < cap:
                members.append(member)
                return True
            return False

    def put_text(self, key: str, text: str) -> None:
        with self._lock:
            self._texts[key] = text

    def text(self, key: str) -> str | None:
        with self._lock:
            return self._texts.get(key)

    def close(self) -> None:
        return None

    def sets(self) -> list[tuple[str, list[int]]]:
        """Every set, least recently joined first."""
        with self._lock:
            return [(key, list(members)) for key, members in self._sets.items()]

    def state(self) -> dict[str, Any]:
        """Everything kept, as JSON-ready data (see :meth:`restore`)."""
        with self._lock:
            return {
                "counts": {key: list(tally) for key, tally in self._counts.items()},
                "sets": [[key, list(members)] for key, members in self._sets.items()],
                "texts": dict(self._texts),
            }

    def restore(self, state: dict[str, Any]) -> None:
        """Take back what :meth:`state` gave (sets beyond ``max_sets``: the oldest dropped);
        bad data raises ValueError and leaves the store as it was."""
        try:
            counts = {
                str(key): [int(tally[0]), int(tally[1])]
                for key, tally in dict(state.get("counts", {})).items()
            }
            sets = OrderedDict(
                (str(key), array("q", (int(m) for m in members)))
                for key, members in state.get("sets", [])
            )
            texts = {str(key): str(text) for key, text in dict(state.get("texts", {})).items()}
        except (TypeError, ValueError, OverflowError, IndexError, AttributeError) as exc:
            raise ValueError(f"unusable tally state: {exc}") from None
        while self._max_sets is not None and len(sets) > self._max_sets:
            sets.popitem(last=False)
        with self._lock:
            self._counts, self._sets, self._texts = counts, sets, texts
