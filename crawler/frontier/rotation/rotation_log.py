"""RotationLog: the ``queues_rotated_late`` event, one rule for every frontier.

The lateness guard (:mod:`~crawler.frontier.policy.lateness_guard`) rotates out a gross excess
of active queues; a rotated host's next visit comes after its turn in the inactive line, one long
gap that is not lateness in rotation. So that a reader of crawler.jsonl (``bench/web/
politeness.py``) can tell the two apart, the frontier logs which queues were rotated out, and
when:

``queues_rotated_late`` with ``rotated`` (queues rotated out since the last event), ``active``
(queues active now; crawl-wide on Redis), ``cap`` (the guard's cap) and ``queues``: ``[[queue
key, wall-clock ms of its rotation], ...]``, the keys the guard noted
(:meth:`LatenessGuard.take_rotated_out`).

At most one event per :data:`LOG_EVERY_S` (of the guard's clock): the rotations in between wait in
the guard and go in the next one. The work-queue frontier asks :meth:`RotationLog.due` after
each hand-out, a Redis worker after each round trip of its exchange, and calls
:meth:`RotationLog.log` when it is; each process logs its own rotations (with workers, under
``workers/wNN/logs/``).

Not thread-safe: call it under the lock that guards the guard.
"""

from __future__ import annotations

import math
from typing import Any

from crawler.frontier.policy.lateness_guard import LatenessGuard

LOG_EVERY_S = 10.0
"""Least time between two events (the guard's clock)."""


class RotationLog:
    """Logs the queues a :class:`LatenessGuard` rotated out (see the module docstring)."""

    def __init__(self, logger: Any, every_s: float = LOG_EVERY_S) -> None:
        self._logger = logger
        self._every_s = every_s
        self._logged = 0  # the guard's rotation count at the last event
        self._logged_at = -math.inf

    def due(self, guard: LatenessGuard, now_s: float) -> bool:
        """Whether :meth:`log` would log now: ``guard`` rotated queues out since the last event
        and that event is at least ``every_s`` old (``now_s``: the guard's clock). Cheap: the
        callers ask after every hand-out or round trip."""
        return guard.rotated != self._logged and now_s >= self._logged_at + self._every_s

    def log(self, guard: LatenessGuard, active: int, now_s: float, wall_s: float) -> None:
        """Log the rotations ``guard`` made since the last event. ``now_s`` is the guard's clock
        now (the clock of the times :meth:`LatenessGuard.take_rotation` was given), ``wall_s``
        the wall clock now: each rotation is logged at its wall-clock ms."""
        self._logged_at = now_s
        self._logger.info(
            "queues_rotated_late",
            rotated=guard.rotated - self._logged,
            active=active,
            cap=guard.cap,
            queues=[[key, int((wall_s - now_s + t) * 1000)] for key, t in guard.take_rotated_out()],
        )
        self._logged = guard.rotated
