"""Shared fixtures: the bundled sample site (``crawler.demo.SampleSite``), free ports, and real
redis-servers (``redis_server``, ``redis_cluster``: :mod:`support.redis_fixtures`)."""

from __future__ import annotations

import signal
import socket
from collections.abc import Callable, Iterator

import pytest
from support.redis_fixtures import redis_cluster, redis_server

from crawler.demo import SampleSite

__all__ = ["redis_cluster", "redis_server"]


def pytest_configure(config: pytest.Config) -> None:
    """Let the programs the tests stop with SIGINT (as Ctrl-C would) receive it: a suite run in
    the background of a shell without job control (``make test &`` in a script, nohup) starts
    with SIGINT ignored, every child inherits that, and such a child never stops. A handler set
    here is reset to the default in each child started."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def sample_site() -> Iterator[SampleSite]:
    """A fresh three-host sample site (100 pages per host) on free ports, stopped afterwards."""
    with SampleSite() as site:
        yield site


@pytest.fixture
def sample_site_factory() -> Iterator[Callable[..., SampleSite]]:
    """Start sample sites with custom arguments (``SampleSite(**kwargs)``); all stopped after."""
    sites: list[SampleSite] = []

    def start(**kwargs: object) -> SampleSite:
        site = SampleSite(**kwargs)  # type: ignore[arg-type]
        site.start()
        sites.append(site)
        return site

    yield start
    for site in sites:
        site.stop()


@pytest.fixture(scope="session")
def shared_sample_site() -> Iterator[SampleSite]:
    """One sample site for the whole session, for read-only use: its request log is shared,
    so a test that inspects it must call ``clear_log()`` first and must not run concurrently."""
    with SampleSite() as site:
        yield site


def find_free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (another process may take it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def free_port() -> int:
    """A port on 127.0.0.1 nobody listens on (for connection-refused tests)."""
    return find_free_port()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``redis`` every test that asks for a redis-server, wherever it lives (so that
    ``-m "not redis"`` leaves them all out); tests/redis/ marks its own files whole."""
    for item in items:
        names = getattr(item, "fixturenames", ())
        if "redis_server" in names or "redis_cluster" in names:
            item.add_marker(pytest.mark.redis)
