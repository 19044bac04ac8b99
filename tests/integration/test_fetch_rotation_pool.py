"""FetchHTTP's idle pool follows the hosts in rotation: with more hosts in rotation than a fixed
pool holds, each host's TLS connection is still idle in the pool when its next turn comes, and
hosts beyond those in rotation hold no idle socket, so idle sockets stay bounded."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.fetch_support import make_ctx, self_signed_cert
from support.tls_hosts import TlsHosts

from crawler import CrawlURI
from processors.fetch import FetchHTTP, FetchHTTPParams

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

HOSTS = 70
"""Hosts in rotation: more than the fixed idle pool of 2 threads (64)."""
THREADS = 2


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return self_signed_cert(tmp_path_factory.mktemp("rotation-pool"))


@pytest.fixture
def hosts(cert: tuple[Path, Path]) -> Iterator[TlsHosts]:
    site = TlsHosts(cert, HOSTS)
    yield site
    site.close()


class Rotation:
    """The frontier's count of hosts in rotation, as the test sets it."""

    def __init__(self, hosts: int) -> None:
        self.hosts = hosts

    def __call__(self) -> int:
        return self.hosts


def start_fetcher(tmp_path: Path, rotation: Rotation | None) -> FetchHTTP:
    ctx = make_ctx(tmp_path, toe_threads=THREADS)
    if rotation is not None:
        ctx = dataclasses.replace(ctx, in_rotation=rotation)
    proc = FetchHTTP("fetch_http", FetchHTTPParams(timeout_s=10, keepalive_expiry_s=60))
    proc.start(ctx)
    return proc


def take_turns(proc: FetchHTTP, bases: list[str], rounds: int) -> None:
    """Fetch one page of each host in turn, ``rounds`` times: each host's politeness gap is
    the other hosts' fetches."""
    for r in range(rounds):
        for base in bases:
            curi = CrawlURI(f"{base}/p{r}.html")
            proc.process(curi)
            assert curi.status == 200, (curi.uri, curi.annotations)


def open_settles(site: TlsHosts, at_most: int) -> int:
    """Connections open once the server saw the client's closes (within 5 s)."""
    deadline = time.monotonic() + 5
    while site.open_connections() > at_most and time.monotonic() < deadline:
        time.sleep(0.02)
    return site.open_connections()


def test_connection_of_a_host_in_rotation_is_reused_across_its_turn(
    tmp_path: Path, hosts: TlsHosts
) -> None:
    proc = start_fetcher(tmp_path, Rotation(HOSTS))
    try:
        take_turns(proc, hosts.bases, rounds=3)
    finally:
        proc.stop()
    # one handshake per host: every later fetch reused the host's idle connection (a fixed
    # pool of 64 would have closed, oldest first, the connection of the host due next)
    assert hosts.connections() == HOSTS
    assert hosts.requests == 3 * HOSTS
    assert open_settles(hosts, 0) == 0


def test_hosts_beyond_those_in_rotation_hold_no_idle_sockets(
    tmp_path: Path, hosts: TlsHosts
) -> None:
    proc = start_fetcher(tmp_path, Rotation(10))
    try:
        take_turns(proc, hosts.bases, rounds=1)
        # 10 in rotation: the idle pool keeps 10 + one per thread, the others were closed
        assert open_settles(hosts, 10 + THREADS) == 10 + THREADS
        # the hosts fetched last are the ones kept: fetched again, they need no handshake
        take_turns(proc, hosts.bases[-(10 + THREADS) :], rounds=1)
        assert hosts.connections() == HOSTS
    finally:
        proc.stop()
