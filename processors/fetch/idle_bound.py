"""IdleBound: how many idle keep-alive connections FetchHTTP keeps, from the hosts in rotation.

A host in rotation is fetched once per cycle (its fetch, then its politeness delay and the wait
for a thread), so the pool must keep one idle connection per host in rotation for the next
fetch of each to reuse it: a bound below the hosts in rotation evicts, oldest first, exactly the
connection the next due host needs (in a round of turns the host due next is the one served
longest ago), and every fetch pays a new TLS handshake. So the bound follows the frontier's count
of queues in rotation (``ProcessorContext.in_rotation``):

    bound = most hosts in rotation within the last keep-alive expiry + connections in flight

One idle connection per host in rotation; the second term (the client's ``pool_size``) covers a
host whose fetches run on more than one connection at once (up to ``host_max_connections``), at
most one per fetching thread. The peak, not the count now: when hosts leave rotation (their
queues exhausted or rotated out) their connections are younger than those of the hosts still
in rotation until a whole cycle has passed, so a bound that fell at once would close, oldest
first, the connections still needed. A connection unused for the keep-alive expiry is closed
anyway (so is a leaving host's), which makes the expiry the window over which the peak is
kept: nothing older could be reused. The bound grows at once with the count and falls within
two expiries of the count falling. Without a figure (a frontier that cannot tell, a processor
tested alone) or with ``max_connections`` set by the order, the bound is the fixed
``max(64, 4 x pool_size)``.

Thread-safety: calling it from several threads at once may lose a peak sample (two plain
attribute writes), never more: the next call takes the count again. The frontier's count is
safe to read from any thread (a value at most one hand-out old).
"""

from __future__ import annotations

import time
from collections.abc import Callable

FIXED_FLOOR = 64
"""Least fixed bound (the pool without a rotation figure)."""
FIXED_PER_CONNECTION = 4
"""Fixed bound per pooled connection slot (the pool without a rotation figure)."""


class IdleBound:
    """The idle pool's bound (see the module docstring); call it for the current figure."""

    __slots__ = (
        "_bucket_end_s",
        "_clock",
        "_fixed",
        "_in_flight",
        "_in_rotation",
        "_last_peak",
        "_peak",
        "_window_s",
    )

    def __init__(
        self,
        pool_size: int,
        in_rotation: Callable[[], int] | None = None,
        window_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``window_s``: the keep-alive expiry (the peak is kept that long, at most twice)."""
        self._in_flight = max(1, pool_size)
        self._in_rotation = in_rotation
        self._fixed = max(FIXED_FLOOR, FIXED_PER_CONNECTION * self._in_flight)
        self._clock = clock
        self._window_s = max(0.0, window_s)
        self._peak = 0  # the most in rotation in this window
        self._last_peak = 0  # ... in the window before
        self._bucket_end_s = -1.0

    @property
    def learnt(self) -> bool:
        """Whether the bound follows the hosts in rotation (else it is the fixed one)."""
        return self._in_rotation is not None

    def __call__(self) -> int:
        """Idle connections the pool may keep now."""
        in_rotation = self._in_rotation
        if in_rotation is None:
            return self._fixed
        now = max(0, in_rotation())
        t = self._clock()
        if t >= self._bucket_end_s:
            # a new window: the last one's peak is kept one more window, an older one dropped
            stale = t >= self._bucket_end_s + self._window_s
            self._last_peak = 0 if stale else self._peak
            self._peak = 0
            self._bucket_end_s = t + self._window_s
        if now > self._peak:
            self._peak = now
        return max(self._peak, self._last_peak) + self._in_flight
