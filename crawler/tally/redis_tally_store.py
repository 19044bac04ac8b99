"""RedisTallyStore: a :class:`~crawler.tally.tally_store.TallyStore` every worker of a
``--workers`` crawl shares, in the crawl's Redis under the crawl's key prefix.

Layout (``P`` = the crawl's prefix + ``tl:``): a counter is the hash ``P c:<key>`` with fields
``n`` (count) and ``b`` (bytes), changed by ``HINCRBY`` only (one small script adds both); a
set is the Redis set ``P s:<key>``; a text is the string ``P x:<key>``. One key per counter or
set spreads the tallies over a Cluster's slots. The keys outlive any worker: a worker that dies
loses nothing, and a worker that joins, or a crawl that goes on, counts on from there.

Round trips: :meth:`~RedisTallyStore.read` and :meth:`~RedisTallyStore.add` send all their keys
in one call or one pipeline (one round trip; one per Cluster node touched);
:meth:`~RedisTallyStore.join` is one Lua script (``SISMEMBER``, ``SCARD``, ``SADD``) so that the
test and the insertion are atomic across workers, and idempotent when retried after a lost
reply; the cap is the rule's, passed in. Its answers are kept in the process (up to
:data:`JOIN_ANSWERS_KEPT`): a member once in a set stays in it and a set once full stays full
(nothing removes members), so the answer for a key, member and cap never changes, and a link
found on many pages (a trap budget asks about every candidate it counts) costs one round trip,
not one per page. An :meth:`~RedisTallyStore.add` retried after a lost
reply (an outage, waited out up to ``outage_timeout_s``) may count twice: a quota then stops one
URI early, never late.

Thread-safety: thread-safe (one redis-py client, which is).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence
from typing import Any

from crawler.frontier.redis import redis_conn
from crawler.tally.tally_store import Tally

KEY_PART = "tl:"
"""What follows the crawl's prefix in every key of this store."""

_JOIN_SCRIPT = """
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 1 end
if redis.call('SCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('SADD', KEYS[1], ARGV[1])
  return 1
end
return 0
"""
"""KEYS: the set. ARGV: member, cap. Returns 1 if the member is (now) in the set."""


_ADD_SCRIPT = """
redis.call('HINCRBY', KEYS[1], 'n', ARGV[1])
if ARGV[2] ~= '0' then redis.call('HINCRBY', KEYS[1], 'b', ARGV[2]) end
return 1
"""
"""KEYS: the counter. ARGV: count, bytes. Both added in one call."""

JOIN_ANSWERS_KEPT = 50_000
"""Answers of :meth:`RedisTallyStore.join` a process keeps (all forgotten at once when full:
~15 MB at most, and a forgotten answer only costs its round trip again)."""


class RedisTallyStore:
    """Tallies shared through Redis (module docstring)."""

    def __init__(
        self, client: Any, prefix: str, *, outage_timeout_s: float = 600.0, logger: Any = None
    ) -> None:
        """Use ``client`` (:func:`~crawler.frontier.redis.redis_conn.connect`) and keys under
        ``prefix`` (the crawl's namespace, e.g. ``c12:``). :meth:`close` closes the client."""
        self.client = client
        self.prefix = prefix + KEY_PART
        self._join = client.register_script(_JOIN_SCRIPT)
        self._add = client.register_script(_ADD_SCRIPT)
        self._outage_timeout_s = outage_timeout_s
        self._logger = logger
        self._sent = 0
        self._sent_lock = threading.Lock()
        self._joined: dict[tuple[str, int, int], bool] = {}

    @classmethod
    def connect(cls, url: str, prefix: str, **kwargs: Any) -> RedisTallyStore:
        """A store on a new client for ``url``; ``RedisUnavailableError`` if nothing answers
        (within ``start_wait_s``, when given: see
        :func:`~crawler.frontier.redis.redis_conn.connect`)."""
        wait_s = float(kwargs.pop("start_wait_s", 0.0))
        return cls(redis_conn.connect(url, outage_timeout_s=wait_s), prefix, **kwargs)

    def read(self, keys: Sequence[str]) -> list[Tally]:
        if not keys:
            return []
        names = [f"{self.prefix}c:{key}" for key in keys]

        def send() -> list[Any]:
            if len(names) == 1:  # no pipeline: a third of the client's CPU
                return [self.client.hmget(names[0], "n", "b")]
            pipe = self.client.pipeline(transaction=False)
            for name in names:
                pipe.hmget(name, "n", "b")
            return list(pipe.execute())

        replies = self._call(send, "tally read")
        return [(int(n or 0), int(b or 0)) for n, b in replies]

    def add(self, keys: Sequence[str], count: int, size: int = 0) -> None:
        if not keys:
            return
        calls = [([f"{self.prefix}c:{key}"], [count, size]) for key in keys]
        if len(calls) == 1:
            keys_, args = calls[0]
            self._call(lambda: self._add(keys=keys_, args=args), "tally add")
        else:
            self._call(lambda: redis_conn.run_script(self.client, self._add, calls), "tally add")

    def join(self, key: str, member: int, cap: int) -> bool:
        asked = (key, member, cap)
        known = self._joined.get(asked)
        if known is not None:
            return known
        name = f"{self.prefix}s:{key}"
        got = self._call(lambda: self._join(keys=[name], args=[member, cap]), "tally join")
        answer = bool(int(got))
        with self._sent_lock:
            if len(self._joined) >= JOIN_ANSWERS_KEPT:
                self._joined.clear()
            self._joined[asked] = answer
        return answer

    def put_text(self, key: str, text: str) -> None:
        name = f"{self.prefix}x:{key}"
        self._call(lambda: self.client.set(name, text.encode("utf-8")), "tally text")

    def text(self, key: str) -> str | None:
        name = f"{self.prefix}x:{key}"
        raw = self._call(lambda: self.client.get(name), "tally text")
        return None if raw is None else bytes(raw).decode("utf-8", "replace")

    @property
    def round_trips(self) -> int:
        """Calls sent to Redis so far (each one round trip, or one per Cluster node touched)."""
        return self._sent

    def _call(self, call: Any, what: str) -> Any:
        with self._sent_lock:
            self._sent += 1
        return redis_conn.retrying(
            call, outage_timeout_s=self._outage_timeout_s, what=what, logger=self._logger
        )

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close()
