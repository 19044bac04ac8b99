"""Connections to Redis (one server or a Cluster) for the shared frontier and uniq filter.

:func:`connect` opens a client for a ``redis://`` / ``rediss://`` / ``unix://`` URL, detects a
Redis Cluster (``INFO cluster``) and then returns a cluster client, and fails at once with
:class:`RedisUnavailableError` (a message for the operator) when nothing answers: a crawl must
not start against a missing Redis. Once running, :func:`retrying` waits out an outage (a
restart, a failover) up to ``outage_timeout_s``, so workers pause and resume instead of dying.

This module is the only one that imports ``redis`` (the library is wrapped in one place), and
hiredis's packer (:func:`_packed`).
Thread-safety: redis-py clients hold a connection pool and are thread-safe; the raw calls
(:func:`send_commands`, :func:`run_calls`) use a connection of the pool per thread.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import redis
import redis.cluster
import structlog
from hiredis import pack_command

from crawler.crawler_error import CrawlerError

if TYPE_CHECKING:
    from crawler.frontier.redis.redis_ride import Ride

T = TypeVar("T")

RedisClient = Any
"""``redis.Redis`` or ``redis.RedisCluster`` (redis-py ships no usable common type)."""

OUTAGE_ERRORS: tuple[type[BaseException], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.BusyLoadingError,
    redis.exceptions.TryAgainError,
    redis.exceptions.ClusterDownError,
    redis.exceptions.MasterDownError,
)
"""Errors that mean "Redis is (briefly) not there", as opposed to a bug or a bad command."""

NoScriptError = redis.exceptions.NoScriptError
RedisError = redis.exceptions.RedisError
"""Every error redis-py raises (the outages above included)."""
ResponseError = redis.exceptions.ResponseError
_REDIRECTS = (redis.exceptions.MovedError, redis.exceptions.AskError)


POOL_CONNECTIONS = 2**31 - 1
"""The most connections a client's pool opens (per node on a Cluster). Each thread keeps one
(:func:`send_commands`), so a worker needs one per toe thread and more; redis-py 8 caps a pool
at 100 unless told, and a worker of 300 threads then took its calls failing with "Too many
connections" for an outage and stalled."""


class RedisUnavailableError(CrawlerError, RuntimeError):
    """Redis cannot be reached (at start, or longer than the outage timeout while running)."""


_CONNECT_ERRORS: tuple[type[BaseException], ...] = (*OUTAGE_ERRORS, RedisUnavailableError)


def connect(
    url: str,
    *,
    connect_timeout_s: float = 5.0,
    socket_timeout_s: float = 30.0,
    outage_timeout_s: float = 0.0,
) -> Any:
    """A client for ``url`` (a cluster client if the server is in cluster mode).

    Raises :class:`RedisUnavailableError` when the server does not answer. With
    ``outage_timeout_s`` > 0 an unreachable server is asked again, with back-off, for up to that
    long first: a process that joins a crawl whose Redis answered already (a worker) rides out a
    restart as a running worker does, while a first check (0, the default) fails at once.
    """
    try:
        client = redis.Redis.from_url(
            url,
            socket_connect_timeout=connect_timeout_s,
            socket_timeout=socket_timeout_s,
            health_check_interval=30,
            max_connections=POOL_CONNECTIONS,
        )
        if outage_timeout_s > 0:
            info = retrying(
                lambda: client.info("cluster"), outage_timeout_s=outage_timeout_s, what="connect"
            )
        else:
            info = client.info("cluster")
    except _CONNECT_ERRORS as exc:
        raise RedisUnavailableError(
            f"cannot reach Redis at {redact(url)}: {exc} "
            "(is redis-server running there, and is the URL right?)"
        ) from exc
    except (redis.exceptions.RedisError, ValueError) as exc:
        raise RedisUnavailableError(f"cannot use Redis at {redact(url)}: {exc}") from exc
    if not info.get("cluster_enabled"):
        return client
    client.close()
    try:
        return redis.cluster.RedisCluster.from_url(
            url,
            socket_connect_timeout=connect_timeout_s,
            socket_timeout=socket_timeout_s,
            max_connections=POOL_CONNECTIONS,
        )
    except (redis.exceptions.RedisError, OSError) as exc:
        raise RedisUnavailableError(
            f"cannot reach the Redis Cluster at {redact(url)}: {exc}"
        ) from exc


def is_cluster(client: Any) -> bool:
    """Whether ``client`` talks to a Redis Cluster (scripts must then stay in one slot)."""
    return isinstance(client, redis.cluster.RedisCluster)


def run_script(
    client: Any,
    script: Any,
    calls: list[tuple[list[str], list[Any]]],
    ride: Ride | None = None,
) -> list[Any]:
    """Run ``script`` once per ``(keys, args)`` call, in one round trip per server (``ride``:
    as :func:`run_calls`)."""
    return run_calls(client, [(script, keys, args) for keys, args in calls], ride)


def run_calls(
    client: Any, calls: list[tuple[Any, list[str], list[Any]]], ride: Ride | None = None
) -> list[Any]:
    """Run each ``(script, keys, args)`` call, in order, in one round trip per server.

    redis-py refuses scripts in a cluster pipeline, so on a Cluster the calls are grouped by the
    node owning their first key and pipelined on that node's own connection; a call that meets a
    moved slot (resharding) is redone through the cluster client, which follows redirects.
    Calls to different nodes are not ordered with respect to each other.

    ``ride`` (:class:`~crawler.frontier.redis.redis_ride.Ride`): its commands go first in the
    same write when ``client`` is a plain client of its server (never on a Cluster), and their
    replies to :meth:`Ride.carried <crawler.frontier.redis.redis_ride.Ride.carried>` once the
    whole round trip succeeded.
    """
    if not calls:
        return []
    out: list[Any] = [None] * len(calls)
    if not is_cluster(client):
        lead = ride.commands_for(client) if ride is not None else []
        replies = _pipelined(client, calls, list(range(len(calls))), out, None, lead)
        if lead and ride is not None:
            ride.carried(replies)
        return out
    by_node: dict[str, tuple[Any, list[int]]] = {}
    for i, (_, keys, _) in enumerate(calls):
        node = client.get_node_from_key(keys[0])
        by_node.setdefault(node.name, (node, []))[1].append(i)
    for node, indexes in by_node.values():
        _pipelined(node.redis_connection, calls, indexes, out, client)
    return out


def _pipelined(
    conn: Any,
    calls: list[tuple[Any, list[str], list[Any]]],
    indexes: list[int],
    out: list[Any],
    cluster: Any,
    lead: list[tuple[Any, ...]] | None = None,
) -> list[Any]:
    """EVALSHA ``calls[indexes]`` in one round trip on ``conn`` into ``out``; ``lead``: plain
    commands sent first in the same write. Returns ``lead``'s replies (an error reply raised).

    redis-py's own script pipelining sends a SCRIPT EXISTS round trip before every pipeline;
    here a script Redis does not know (it restarted) is loaded and its calls sent again.
    ``cluster`` (the cluster client, or None) redoes calls that met a moved slot.
    """
    todo = indexes
    first = list(lead or ())
    lead_replies: list[Any] = []
    for attempt in range(2):
        commands = list(first)
        for i in todo:
            script, keys, args = calls[i]
            commands.append(("EVALSHA", script.sha, len(keys), *keys, *args))
        results = _send(conn, commands)
        if first:
            lead_replies, results = results[: len(first)], results[len(first) :]
            for reply in lead_replies:
                if isinstance(reply, Exception):
                    raise reply
            first = []
        missing: list[int] = []
        for i, result in zip(todo, results, strict=True):
            if isinstance(result, NoScriptError) and attempt == 0:
                missing.append(i)
                continue
            if isinstance(result, _REDIRECTS) or (
                isinstance(result, ResponseError) and str(result).startswith(("MOVED", "ASK"))
            ):
                if cluster is None:
                    raise result
                script, keys, args = calls[i]
                result = script(keys=keys, args=args, client=cluster)
            elif isinstance(result, Exception):
                raise result
            out[i] = result
        if not missing:
            break
        for script in {id(calls[i][0]): calls[i][0] for i in missing}.values():
            conn.script_load(script.script)
        todo = missing
    return lead_replies


def send_commands(client: Any, commands: list[tuple[Any, ...]]) -> list[Any]:
    """Send plain ``commands`` (each ``(NAME, *args)``) in one round trip per server and return
    their replies in order; an error reply is raised. On one server, one write on a pooled
    connection (a fraction of redis-py's pipeline's interpreter time); on a Cluster, a cluster
    pipeline (split by node, each command to its key's)."""
    if not commands:
        return []
    if is_cluster(client):
        pipe = client.pipeline(transaction=False)
        for command in commands:
            pipe.execute_command(*command)
        return list(pipe.execute())
    replies = _send(client, commands)
    for reply in replies:
        if isinstance(reply, Exception):
            raise reply
    return replies


def _send(client: Any, commands: list[tuple[Any, ...]]) -> list[Any]:
    """Send ``commands`` in one write on this thread's connection of ``client`` (a plain,
    one-node client) and read every reply, an error reply as its exception object.

    redis-py's pipeline and script objects cost several times the interpreter time of the
    round trip itself; the frontier sends a few of these per page. So does taking a connection
    from redis-py's pool and giving it back (its lock, counters, events and a poll of the
    socket), so each thread keeps one (:func:`_connection`). A connection that fails mid-way is
    dropped (it connects again on its next use), and the error raised for :func:`retrying`
    (see its contract on replays).
    """
    connection = _connection(client.connection_pool)
    try:
        connection.send_packed_command(_packed(connection, commands), check_health=False)
        replies: list[Any] = []
        for _ in commands:
            try:
                replies.append(connection.read_response())
            except ResponseError as exc:
                replies.append(exc)
        return replies
    except BaseException:
        connection.disconnect()
        raise


def _packed(connection: Any, commands: list[tuple[Any, ...]]) -> list[bytes]:
    """``commands`` in the Redis protocol, as the list of chunks ``send_packed_command`` takes:
    the bytes redis-py's hiredis packer makes, without its pass over every argument in Python
    (a script call carries hundreds: a page's links). redis-py's own packer for what hiredis
    does not take (a command name with a space, a ``memoryview``)."""
    try:
        if all(" " not in command[0] for command in commands):
            return [b"".join([pack_command(command) for command in commands])]
    except TypeError:
        pass
    packed: list[bytes] = connection.pack_commands(commands)
    return packed


class _Held:
    """A connection one thread took from a pool; given back when the thread ends (its
    thread-local storage goes) or when the process forked since."""

    __slots__ = ("__weakref__", "connection", "pid", "pool")

    def __init__(self, pool: Any) -> None:
        self.pool = weakref.ref(pool)
        self.pid = os.getpid()
        self.connection = pool.get_connection()

    def __del__(self) -> None:
        pool = self.pool()
        if pool is not None and self.pid == os.getpid():
            with contextlib.suppress(Exception):
                pool.release(self.connection)


_HELD = threading.local()


def _connection(pool: Any) -> Any:
    """This thread's connection of ``pool`` (taken from it on first use, given back when the
    thread ends). Only this thread sends on it, and it reads every reply it asks for, so it
    never holds unread data: one that is readable was closed by the server and is dropped; a
    connection closed (by ``client.close()``, the server, an error) connects again when next
    sent on, as a pooled one would."""
    held: weakref.WeakKeyDictionary[Any, _Held] | None = getattr(_HELD, "by_pool", None)
    if held is None:
        held = _HELD.by_pool = weakref.WeakKeyDictionary()
    entry = held.get(pool)
    if entry is None or entry.pid != os.getpid():
        entry = held[pool] = _Held(pool)
        return entry.connection
    connection = entry.connection
    try:
        # As the pool checks: a connection the server closed (a restart) shows as readable;
        # connect again now rather than fail the call (and retry it as maybe applied).
        if connection.can_read():
            connection.disconnect()
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError):
        connection.disconnect()
    return connection


def retrying(
    call: Callable[[], T],
    *,
    outage_timeout_s: float,
    what: str,
    logger: Any = None,
    on_retry: Callable[[], None] | None = None,
) -> T:
    """``call()``, retried with back-off while Redis is unreachable, up to ``outage_timeout_s``.

    A call retried after an outage may have been applied once already (the reply was lost):
    every script it is used with is idempotent for that reason, or its caller learns of the
    retry through ``on_retry`` and acts on it (see the uniq filter).
    """
    deadline: float | None = None
    delay_s = 0.05
    while True:
        try:
            return call()
        except OUTAGE_ERRORS as exc:
            if on_retry is not None:
                on_retry()
            now = time.monotonic()
            if deadline is None:
                deadline = now + outage_timeout_s
                log = logger if logger is not None else structlog.get_logger("redis")
                log.warning("redis_unavailable", during=what, error=str(exc))
            if now >= deadline:
                raise RedisUnavailableError(
                    f"Redis unreachable for over {outage_timeout_s:.0f}s during {what}: {exc}"
                ) from exc
            time.sleep(delay_s)
            delay_s = min(delay_s * 2, 1.0)


def redact(url: str) -> str:
    """``url`` without its password."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    creds, _, host = rest.rpartition("@")
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user + ':***' if user else '***'}@{host}"
