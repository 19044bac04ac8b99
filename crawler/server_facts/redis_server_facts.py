"""RedisServerFacts: robots.txt and DNS outcomes every worker of a ``--workers`` crawl shares.

A worker that fetched a server's robots.txt, or looked a host up, publishes the outcome here;
another worker that meets the server or host asks before it schedules its own prerequisite
(:meth:`~crawler.servers.ServerCache.adopt_shared`), so a host's robots.txt is fetched and its
name looked up once for the whole crawl rather than once per worker (Heritrix's one server
cache per crawl).

Layout: one string per fact, ``<prefix>sf:robots:<host:port>`` and ``<prefix>sf:dns:<host>``,
holding the entry as JSON (the same entries as the crawl's ``servers.jsonl`` journal, a robots
body base64-encoded, at most ``robots.max_size_bytes`` + 1), with an expiry: the robots
validity for robots, the IP validity for hosts. Redis's memory is so bounded by the facts of
the last day, and a fact past its validity is judged stale by the worker anyway. On a Cluster
the keys spread over the slots; a look-up of a server's two facts is one pipelined round trip
per node.

A worker about to fetch a prerequisite claims it crawl-wide (``<prefix>sf:claim:<fact>``, set if
absent, expiring after ``prerequisite_wait_s``): a worker that finds another's claim waits for
the fact, as the queues of one worker wait for one robots.txt fetch. So the queues of one big
site spread over the workers (the hash queue policies) fetch its robots.txt once, not once per
worker. A claimer that dies holds the others back for at most that long.

Never raises: a fact that cannot be published or read (Redis away, a malformed value) is
logged once per outage and treated as unknown, so the worker fetches for itself, as a worker
without a share would. A publish or look-up is one attempt, no retry: it never holds a toe
thread through an outage (the frontier's own calls wait for Redis).

Thread-safety: thread-safe (redis-py's client is, and :func:`redis_conn.send_commands` keeps
one connection per thread).
"""

from __future__ import annotations

import contextlib
import json
import math
import threading
import uuid
from typing import Any

import structlog

from crawler.frontier.redis import redis_conn

_ERRORS: tuple[type[BaseException], ...] = (redis_conn.RedisError, OSError)


class RedisServerFacts:
    """Robots and DNS outcomes shared through Redis (module docstring)."""

    def __init__(self, client: Any, prefix: str, *, logger: Any = None) -> None:
        """Use ``client`` (:func:`~crawler.frontier.redis.redis_conn.connect`; closed by
        :meth:`close`) and keys under ``prefix`` (the crawl's namespace)."""
        self.client = client
        self.prefix = prefix
        self._logger = logger if logger is not None else structlog.get_logger("crawler")
        self._lock = threading.Lock()
        self._failing = False
        self.published = 0
        self.found = 0
        self.missed = 0
        self.waited = 0
        """Prerequisites this worker left to the worker that claimed them first."""
        self._token = uuid.uuid4().hex.encode("ascii")
        self._counts_logged = False

    @classmethod
    def connect(cls, url: str, prefix: str, **kwargs: Any) -> RedisServerFacts:
        """Facts on a new client for ``url``; ``RedisUnavailableError`` if nothing answers
        (within ``start_wait_s``, when given)."""
        wait_s = float(kwargs.pop("start_wait_s", 0.0))
        return cls(redis_conn.connect(url, outage_timeout_s=wait_s), prefix, **kwargs)

    def key(self, fact: str) -> str:
        """The Redis key of ``fact`` (``robots:<server>`` or ``dns:<host>``)."""
        return f"{self.prefix}sf:{fact}"

    def publish(self, key: str, entry: dict[str, Any], keep_s: float) -> None:
        """``SET`` the entry under ``key`` for ``keep_s`` seconds (at least 1)."""
        value = json.dumps(entry, separators=(",", ":"))
        command = ("SET", self.key(key), value, "EX", max(1, int(keep_s)))
        try:
            redis_conn.send_commands(self.client, [command])
        except _ERRORS as exc:
            self._failed("publish", exc)
            return
        with self._lock:
            self.published += 1
            self._failing = False

    def lookup(self, keys: list[str]) -> list[dict[str, Any] | None]:
        """The entries under ``keys``, None where none is (or Redis cannot be reached)."""
        commands = [("GET", self.key(k)) for k in keys]
        try:
            replies = redis_conn.send_commands(self.client, commands)
        except _ERRORS as exc:
            self._failed("lookup", exc)
            return [None] * len(keys)
        out: list[dict[str, Any] | None] = []
        for raw in replies:
            entry = None
            if raw is not None:
                with contextlib.suppress(ValueError, TypeError):
                    decoded = json.loads(raw)
                    entry = decoded if isinstance(decoded, dict) else None
            out.append(entry)
        found = sum(1 for e in out if e is not None)
        with self._lock:
            self.found += found
            self.missed += len(out) - found
            self._failing = False
        return out

    def claim(self, key: str, hold_s: float) -> bool:
        """``SET <prefix>sf:claim:<key> <token> NX EX hold_s``, then read it back in the same
        round trip: True if this share's token holds it (just taken, or taken earlier by this
        worker: its own retry of a failed fetch does not wait for itself), or Redis cannot
        say (the worker then fetches for itself)."""
        name = self.key("claim:" + key)
        commands = [
            ("SET", name, self._token, "NX", "EX", max(1, math.ceil(hold_s))),
            ("GET", name),
        ]
        try:
            _, holder = redis_conn.send_commands(self.client, commands)
        except _ERRORS as exc:
            self._failed("claim", exc)
            return True
        mine = holder is None or bytes(holder) == self._token
        with self._lock:
            if not mine:
                self.waited += 1
            self._failing = False
        return mine

    def _failed(self, what: str, exc: BaseException) -> None:
        with self._lock:
            first, self._failing = not self._failing, True
        if first:
            self._logger.warning("server_facts_unavailable", during=what, error=str(exc))

    def close(self) -> None:
        """Log what was shared (``server_facts``: published, found, missed, waited), then close
        the client (never raises). Idempotent."""
        with self._lock:
            counts, self._counts_logged = not self._counts_logged, True
        if counts:
            self._logger.info(
                "server_facts",
                published=self.published,
                found=self.found,
                missed=self.missed,
                waited=self.waited,
            )
        with contextlib.suppress(Exception):
            self.client.close()
