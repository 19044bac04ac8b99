"""The Redis tests (real redis-servers on free loopback ports: the ``redis_server`` and
``redis_cluster`` fixtures of :mod:`support.redis_fixtures`) are marked ``redis`` automatically."""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.redis)
