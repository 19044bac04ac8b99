"""Fixtures of the contract tests: the frontier's behaviour, written once, run on every store.

``stores`` is a :class:`support.stores.FrontierMaker` on the memory, LevelDB, Redis or Redis
Cluster store (test ids ``[memory]``, ``[leveldb]``, ``[redis]``, ``[redis-cluster]``);
``persistent_stores`` the same on the stores whose state outlives a frontier (all but memory).
The Redis cases carry the ``redis`` marker and skip only when no redis-server can start.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.stores import PERSISTENT_STORE_PARAMS, STORE_PARAMS, FrontierMaker, frontier_maker


@pytest.fixture(params=STORE_PARAMS)
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FrontierMaker]:
    """Frontiers and queue stores on each store in turn."""
    yield from frontier_maker(request, tmp_path)


@pytest.fixture(params=PERSISTENT_STORE_PARAMS)
def persistent_stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FrontierMaker]:
    """Frontiers on each store that keeps its state across a reopen."""
    yield from frontier_maker(request, tmp_path)
