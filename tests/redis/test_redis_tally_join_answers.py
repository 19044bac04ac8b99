"""RedisTallyStore.join keeps its answers in the process (real redis-server): a member asked again
costs no round trip, and a kept answer is still the store's answer after other workers changed
the set (members are never removed and a full set stays full)."""

from __future__ import annotations

import pytest
from support.redis_servers import RedisServer

from crawler.tally.redis_tally_store import RedisTallyStore

pytestmark = pytest.mark.timeout(30)


def test_join_answers_kept_and_still_true_after_other_workers(redis_server: RedisServer) -> None:
    a = RedisTallyStore.connect(redis_server.url, "c1:")
    b = RedisTallyStore.connect(redis_server.url, "c1:")
    try:
        assert a.join("s:1", 7, 3)
        trips = a.round_trips
        assert a.join("s:1", 7, 3)  # a link found again on another page
        assert a.round_trips == trips

        assert b.join("s:1", 8, 3) and b.join("s:1", 9, 3)  # the other worker fills the set
        assert not a.join("s:1", 10, 3)  # asks Redis: the set is full now
        trips = a.round_trips
        assert not a.join("s:1", 10, 3)
        assert a.join("s:1", 7, 3)
        assert a.round_trips == trips
        assert not b.join("s:1", 10, 3)  # the kept answers are the store's answers

        assert a.join("s:1", 10, 4)  # a raised cap (sheets changed the budget) asks again
        assert a.round_trips == trips + 1
    finally:
        a.close()
        b.close()
