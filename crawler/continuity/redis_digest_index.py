"""RedisDigestIndex: a :class:`~crawler.continuity.digest_index.DigestIndex` every worker of a
``--workers`` crawl shares, in the crawl's Redis under the crawl's key prefix.

Layout: 4,096 hashes ``<prefix>dg:<bucket, 3 hex digits>``; the bucket is the first 12 bits of
the digest's 20 raw bytes (or a CRC-32 of any other key). Field = the digest key, value = the
entry, both exactly :mod:`~crawler.continuity.digest_codec`'s bytes (the same as in LevelDB), so
a digest costs its ~20-byte key, its ~100-byte value and Redis's per-field overhead (``make
bench-digest-index`` measures bytes per digest with ``INFO memory``). Buckets keep each hash
small and spread the index over a Cluster's slots (every call touches one key).

:meth:`RedisDigestIndex.add` is one Lua script: ``HGET``, and ``HSET`` only when absent, returning
the stored value if there was one, so the first writer wins across every worker with one round
trip. The script is idempotent: retried after a lost reply (an outage,
:func:`~crawler.frontier.redis.redis_conn.retrying`) it returns the entry it stored, equal to the
one given.

Thread-safety: thread-safe (one redis-py client, which is).
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Iterable, Iterator
from typing import Any

from crawler.continuity.digest_codec import decode_entry, digest_key, digest_of_key, encode_entry
from crawler.continuity.digest_entry import DigestEntry
from crawler.frontier.redis import redis_conn

BUCKET_BITS = 12
_BUCKETS = 1 << BUCKET_BITS
_BATCH = 1000

_ADD_SCRIPT = """
local v = redis.call('HGET', KEYS[1], ARGV[1])
if v then return v end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return false
"""
"""KEYS: the bucket. ARGV: field, value. Returns the value already stored, or nil."""


def _bucket(key: bytes) -> int:
    if len(key) == 20:
        return (key[0] << 4) | (key[1] >> 4)
    return zlib.crc32(key) & (_BUCKETS - 1)


class RedisDigestIndex:
    """Payload digest -> first capture, shared through Redis (module docstring)."""

    def __init__(
        self,
        client: Any,
        prefix: str,
        *,
        outage_timeout_s: float = 600.0,
        logger: Any = None,
    ) -> None:
        """Use ``client`` (:func:`~crawler.frontier.redis.redis_conn.connect`) and keys under
        ``prefix`` (the crawl's namespace, e.g. ``c12:``). The client is closed by :meth:`close`."""
        self.client = client
        self.prefix = prefix
        self._script = client.register_script(_ADD_SCRIPT)
        self._outage_timeout_s = outage_timeout_s
        self._logger = logger

    @classmethod
    def connect(cls, url: str, prefix: str, **kwargs: Any) -> RedisDigestIndex:
        """An index on a new client for ``url``; ``RedisUnavailableError`` if nothing answers."""
        return cls(redis_conn.connect(url), prefix, **kwargs)

    def bucket_key(self, key: bytes) -> str:
        """The hash that holds the digest key ``key``."""
        return f"{self.prefix}dg:{_bucket(key):03x}"

    def lookup(self, payload_digest: str) -> DigestEntry | None:
        key = digest_key(payload_digest)
        name = self.bucket_key(key)
        raw = self._call(lambda: self.client.hget(name, key), "digest lookup")
        return decode_entry(raw) if raw is not None else None

    def add(self, payload_digest: str, entry: DigestEntry) -> DigestEntry:
        key = digest_key(payload_digest)
        value = encode_entry(entry)
        name = self.bucket_key(key)
        raw = self._call(lambda: self._script(keys=[name], args=[key, value]), "digest add")
        if raw is None or bytes(raw) == value:
            return entry
        return decode_entry(raw)

    def add_many(self, pairs: Iterable[tuple[str, DigestEntry]]) -> None:
        """Add many entries, first writer wins each (``HSETNX``), pipelined in batches: how a
        job's index of earlier crawls is loaded before a ``--workers`` crawl starts."""
        batch: list[tuple[str, bytes, bytes]] = []
        for digest, entry in pairs:
            key = digest_key(digest)
            batch.append((self.bucket_key(key), key, encode_entry(entry)))
            if len(batch) >= _BATCH:
                self._send(batch)
                batch = []
        if batch:
            self._send(batch)

    def _send(self, batch: list[tuple[str, bytes, bytes]]) -> None:
        def send() -> None:
            pipe = self.client.pipeline(transaction=False)
            for name, key, value in batch:
                pipe.hsetnx(name, key, value)
            pipe.execute()

        self._call(send, "digest index load")

    def entries(self) -> Iterator[tuple[str, DigestEntry]]:
        for bucket in range(_BUCKETS):
            name = f"{self.prefix}dg:{bucket:03x}"
            cursor = 0
            while True:
                cursor, fields = self._call(
                    lambda n=name, c=cursor: self.client.hscan(n, c, count=500), "digest scan"
                )
                for key, raw in fields.items():
                    yield digest_of_key(bytes(key)), decode_entry(bytes(raw))
                if int(cursor) == 0:
                    break

    def delete_all(self) -> None:
        """Remove every key of this index (after it was copied into the job's index)."""
        names = [f"{self.prefix}dg:{b:03x}" for b in range(_BUCKETS)]
        for start in range(0, len(names), 500):
            part = names[start : start + 500]
            self._call(lambda p=part: [self.client.delete(n) for n in p], "digest index delete")

    def _call(self, call: Any, what: str) -> Any:
        return redis_conn.retrying(
            call, outage_timeout_s=self._outage_timeout_s, what=what, logger=self._logger
        )

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close()
