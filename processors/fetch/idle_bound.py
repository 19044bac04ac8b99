"""IdleBound: how many idle keep-alive connections FetchHTTP keeps, from the hosts in rotation.

A host in rotation is fetched once per cycle (its fetch, then its politeness delay and the wait
for a thread), so the pool must keep one idle connection per host in rotation for the next
fetch of each to reuse it: a bound below the hosts in rotation evicts, oldest first, exactly the
connection the next due host needs, and every fetch pays a new TLS handshake. A bound far above
them lets hosts that left rotation (exhausted, rotated out) keep sockets until their keep-alive
expires. So the bound follows the frontier's count of queues in rotation
(``ProcessorContext.in_rotation``):

    bound = hosts in rotation + connections in flight (the client's ``pool_size``)

One idle connection per host in rotation; the second term covers a host whose fetches run on
more than one connection at once (up to ``host_max_connections``), at most one per fetching
thread. The oldest idle connections go first, and a host out of rotation holds the oldest, so
they are the ones closed. The figure is read on every check-in (the frontier's count is one
attribute read, no lock); without one (a frontier that cannot tell, a processor tested alone)
or with ``max_connections`` set by the order, the bound is the fixed ``max(64, 4 x pool_size)``.

Thread-safety: immutable after construction; calling it reads the frontier's count, which is
safe from any thread (a value at most one hand-out old).
"""

from __future__ import annotations

from collections.abc import Callable

FIXED_FLOOR = 64
"""Least fixed bound (the pool without a rotation figure)."""
FIXED_PER_CONNECTION = 4
"""Fixed bound per pooled connection slot (the pool without a rotation figure)."""


class IdleBound:
    """The idle pool's bound (see the module docstring); call it for the current figure."""

    __slots__ = ("_fixed", "_in_flight", "_in_rotation")

    def __init__(self, pool_size: int, in_rotation: Callable[[], int] | None = None) -> None:
        self._in_flight = max(1, pool_size)
        self._in_rotation = in_rotation
        self._fixed = max(FIXED_FLOOR, FIXED_PER_CONNECTION * self._in_flight)

    @property
    def learnt(self) -> bool:
        """Whether the bound follows the hosts in rotation (else it is the fixed one)."""
        return self._in_rotation is not None

    def __call__(self) -> int:
        """Idle connections the pool may keep now."""
        in_rotation = self._in_rotation
        if in_rotation is None:
            return self._fixed
        return max(0, in_rotation()) + self._in_flight
