"""MemoryQueueStore and the sort-key layout shared by every QueueStore."""

from __future__ import annotations

from crawler.frontier import sort_key


def test_sort_key_orders_directive_then_precedence_then_ordinal() -> None:
    keys = [sort_key(3, 1, 5), sort_key(2, 9, 7), sort_key(3, 0, 9), sort_key(3, 1, 4)]
    assert sorted(keys) == [
        sort_key(2, 9, 7),
        sort_key(3, 0, 9),
        sort_key(3, 1, 4),
        sort_key(3, 1, 5),
    ]
    assert sort_key(3, 500, 1) == sort_key(3, 127, 1)  # precedence clipped to 127
