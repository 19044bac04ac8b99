"""The HTTP client's idle pool: CPU per check-in when the pool is at its bound.

FetchHTTP's pool keeps at most ``max_idle`` idle keep-alive connections (the hosts in rotation,
:class:`~processors.fetch.idle_bound.IdleBound`). In a crawl of many hosts the pool sits at
that bound: most check-ins push it one over, and one connection, the oldest, must go. This
measures :meth:`Http11Client.checkin` and the checkout before it on such a pool, without
sockets (connections over a stream that only counts closes), one thread:

* ``rotation``: ``--pool`` origins in turn, each fetched once per round (check out its
  connection, check it in again): the pool stays at the bound, nothing is evicted;
* ``new hosts``: every fetch goes to an origin not seen before, so every check-in evicts the
  oldest connection (a crawl reaching new hosts, or one whose rotation exceeds the bound).

Prints CPU-µs per fetch (``time.thread_time``, best of ``--repeat``) for each pool size::

    .venv/bin/python bench/idle_pool.py [--pools 100,1000,5000] [--fetches 20000] [--repeat 3]

Asserts nothing.
"""

from __future__ import annotations

import argparse
import ssl
import threading
import time

from processors.fetch.guarded_backend import GuardedBackend
from processors.fetch.http11_client import Http11Client
from processors.fetch.http11_response import Http11Connection


class _Stream:
    """Stands for a socket stream: nothing to read, closing is counted."""

    closed = 0

    def close(self) -> None:
        _Stream.closed += 1

    def get_extra_info(self, name: str) -> bool:
        return False  # not readable: an idle connection the server kept open


def _client(pool: int) -> Http11Client:
    return Http11Client(
        GuardedBackend(None, threading.Event()),
        ssl.create_default_context(),
        connect_timeout_s=5,
        read_timeout_s=5,
        keepalive_expiry_s=3600,
        max_idle=pool,
    )


def _origin(i: int) -> tuple[str, str, int]:
    return ("https", f"h{i}.example", 443)


def rotation(pool: int, fetches: int) -> float:
    """CPU-µs per fetch, ``pool`` origins in turn, the pool at its bound."""
    client = _client(pool)
    for i in range(pool):
        client.checkin(_origin(i), Http11Connection(_Stream()))
    origins = [_origin(i) for i in range(pool)]
    start = time.thread_time()
    for n in range(fetches):
        origin = origins[n % pool]
        conn = client._checkout(origin)
        assert conn is not None
        client.checkin(origin, conn)
    return (time.thread_time() - start) * 1e6 / fetches


def new_hosts(pool: int, fetches: int) -> float:
    """CPU-µs per fetch, each to a new origin: every check-in evicts the oldest."""
    client = _client(pool)
    for i in range(pool):
        client.checkin(_origin(i), Http11Connection(_Stream()))
    origins = [_origin(pool + n) for n in range(fetches)]
    start = time.thread_time()
    for origin in origins:
        assert client._checkout(origin) is None
        client.checkin(origin, Http11Connection(_Stream()))
    elapsed = time.thread_time() - start
    assert client.idle_connections() == pool
    return elapsed * 1e6 / fetches


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pools", default="100,1000,5000")
    ap.add_argument("--fetches", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print("| idle pool (its bound) | rotation CPU-µs/fetch | new hosts CPU-µs/fetch |")
    print("|--:|--:|--:|")
    for pool in (int(p) for p in args.pools.split(",")):
        rot = min(rotation(pool, args.fetches) for _ in range(args.repeat))
        new = min(new_hosts(pool, args.fetches) for _ in range(args.repeat))
        print(f"| {pool:,} | {rot:.2f} | {new:.2f} |")


if __name__ == "__main__":
    main()
