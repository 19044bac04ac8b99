"""Every store (a Redis Cluster too) counts the servers its server cap holds
(``crawler_held_servers`` in the metrics): a server with every connection taken and queues
parked on it, and those queues."""

from __future__ import annotations

import pytest
from support.stores import FrontierMaker

from crawler.curi import CrawlURI
from crawler.frontier import QueueAssignmentPolicy
from crawler.order.schema import PolitenessConfig
from crawler.params import NoParams

pytestmark = pytest.mark.timeout(60)


class OneQueuePerUri(QueueAssignmentPolicy[NoParams]):
    """Every URI its own queue, as a hash policy spreads one site: the cap then binds."""

    def key(self, curi: CrawlURI) -> str:
        return curi.uri


def test_a_server_at_its_cap_is_held_until_its_fetch_ends(stores: FrontierMaker) -> None:
    h = stores.frontier(
        politeness=PolitenessConfig(
            delay_factor=0, min_delay_ms=0, max_delay_ms=0, host_max_connections=1
        ),
        policy=OneQueuePerUri(),
    )
    frontier = h.frontier
    held_servers = getattr(frontier, "held_servers")  # noqa: B009 - both frontiers have it
    for n in range(4):
        h.add(f"http://a.test/{n}")
    h.add("http://b.test/1")
    assert held_servers() == (0, 0)

    taken = [h.take(), h.take(), h.take()]  # one of a.test, b.test; the rest wait for a.test
    got = [c for c in taken if c is not None]
    assert sorted(c.uri.split("/")[2] for c in got) == ["a.test", "b.test"]
    assert held_servers() == (1, 3)  # a.test: its one connection taken, three queues parked

    for curi in got:
        h.done(curi)
    nxt = h.take(timeout_s=10.0)
    assert nxt is not None and nxt.uri.startswith("http://a.test/")
    assert held_servers() == (1, 2)
    h.done(nxt)
    for _ in range(2):  # the last two, one at a time
        nxt = h.take(timeout_s=10.0)
        assert nxt is not None and nxt.uri.startswith("http://a.test/")
        h.done(nxt)
    assert held_servers() == (0, 0)
    assert h.take() is None
