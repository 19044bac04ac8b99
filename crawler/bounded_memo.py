"""remember: put an answer in a bounded memo, emptied when full.

Hot paths remember answers that are pure functions of their key (a queue key per
``scheme://authority``, a SURT prefix answer per host, a scope plan per hop path, a record's
JSON parts, a URL template's path shape) in plain dicts. A dict emptied when it reaches its
bound costs one ``len()`` per miss and nothing per hit (``functools.lru_cache`` keeps an order on
every hit); a crawl's working set refills it at once, and memory stays bounded.

Thread-safety: dict operations are atomic under the GIL; two threads racing on a full memo
only lose entries, never give a wrong answer (each value is a function of its key).
"""

from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def remember(memo: dict[K, V], key: K, value: V, most: int) -> V:
    """Store ``value`` under ``key`` in ``memo``, first emptying ``memo`` if it holds ``most``
    entries; returns ``value``."""
    if len(memo) >= most:
        memo.clear()
    memo[key] = value
    return value
