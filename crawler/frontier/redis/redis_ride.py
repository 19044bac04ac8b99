"""Ride: plain Redis commands that travel first in another call's round trip to the same server.

A worker sends a few writes that need no answer of their own but must be in Redis before some
later step (the digest index's entries before a page's links are queued). Instead of a round
trip of their own, a :class:`Ride` hands its commands to the next pipelined call that goes to the
same redis-server anyway (:func:`~crawler.frontier.redis.redis_conn.run_calls` with ``ride=``):
they are written first in that call's single write, so Redis runs them before that call's own
commands, and their replies go back to the ride's owner.

Life of a ride (one thread uses it from start to end):

1. the owner builds it (:meth:`RedisDigestIndex.ride
   <crawler.continuity.redis_digest_index.RedisDigestIndex.ride>`): its commands, the server
   they are for (:func:`server_id`), what to do with their replies (``on_sent``), how to send
   them alone (``send_alone``) and how to give them back unsent (``on_dropped``);
2. each call that may carry it asks :meth:`Ride.commands_for` with its own client: the commands
   while not carried yet and the client is a plain client of the same server, else nothing;
   after the call succeeded it hands the replies to :meth:`Ride.carried`; a call that fails
   (an outage, retried) carries them again, which the owner's commands must bear (idempotent);
3. before the step that needs the commands applied, :meth:`Ride.ready_for` sends them alone if
   the step's client cannot carry them, then runs ``wait`` (the owner waits for what other
   threads were sending at the ride's start);
4. :meth:`Ride.close` at the end: a ride never carried is given back to its owner (sent later).

No Redis Cluster: a pipeline there is split by node, so nothing rides (``server_id`` is None)
and :meth:`Ride.ready_for` sends the commands alone. Thread-safety: one thread per ride.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from crawler.frontier.redis import redis_conn


def server_id(client: Any) -> str | None:
    """Which redis-server (and database) a plain client talks to; None for a Cluster client
    (nothing rides there). Two clients with the same id share one command stream order."""
    if redis_conn.is_cluster(client):
        return None
    kwargs = client.connection_pool.connection_kwargs
    where = kwargs.get("path") or f"{kwargs.get('host')}:{kwargs.get('port')}"
    return f"{where}/{kwargs.get('db', 0)}"


class Ride:
    """Commands riding in another call's round trip (module docstring)."""

    __slots__ = (
        "_commands",
        "_on_dropped",
        "_on_sent",
        "_send_alone",
        "_server",
        "_wait",
        "carried_in",
    )

    def __init__(
        self,
        server: str | None,
        commands: list[tuple[Any, ...]],
        *,
        on_sent: Callable[[list[Any]], None],
        on_dropped: Callable[[], None],
        send_alone: Callable[[], None],
        wait: Callable[[], None],
    ) -> None:
        self._server = server
        self._commands = commands
        self._on_sent = on_sent
        self._on_dropped = on_dropped
        self._send_alone = send_alone
        self._wait = wait
        self.carried_in = "" if commands else "-"
        """Empty while the commands wait to be sent; then what sent them ("-": nothing to send)."""

    @property
    def commands(self) -> list[tuple[Any, ...]]:
        """The commands (each a ``(NAME, *args)`` tuple)."""
        return self._commands

    def commands_for(self, client: Any) -> list[tuple[Any, ...]]:
        """The commands to put first in a call on ``client``: none when carried already or when
        ``client`` is not a plain client of the ride's server."""
        if self.carried_in or self._server is None or server_id(client) != self._server:
            return []
        return self._commands

    def carried(self, replies: list[Any], by: str = "call") -> None:
        """A call on the ride's server sent the commands and got ``replies`` (in order)."""
        if self.carried_in:
            return
        self.carried_in = by
        self._on_sent(replies)

    def ready_for(self, client: Any) -> None:
        """Before a step that needs the commands applied, on ``client``: if a call on ``client``
        cannot carry them, send them alone now; then wait for what the owner waits for. After
        this, a call on ``client`` carrying the ride still puts them first."""
        if not self.carried_in and not self.commands_for(client):
            self._send_alone()
            self.carried_in = "alone"
        self._wait()

    def close(self) -> None:
        """The ride's end: commands never carried go back to the owner (sent later)."""
        if not self.carried_in:
            self.carried_in = "dropped"
            self._on_dropped()
