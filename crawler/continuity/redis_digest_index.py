"""RedisDigestIndex: a :class:`~crawler.continuity.digest_index.DigestIndex` every worker of a
``--workers`` crawl shares, in the crawl's Redis under the crawl's key prefix.

Layout: 4,096 hashes ``<prefix>dg:<bucket, 3 hex digits>``; the bucket is the first 12 bits of
the digest's 20 raw bytes (or a CRC-32 of any other key). Field = the digest key, value = the
entry, both :mod:`~crawler.continuity.digest_codec`'s bytes, the WARC file name by its 8-byte
reference: ``<prefix>dgf`` maps each reference to its name, written once per file by each
process that names it (``HSETNX``; the reference is a hash of the name, so no two processes need
agree on it) and read once per file by each process that meets it (cached). A digest costs its
20-byte key, a ~100-byte value (mostly its URI) and Redis's per-field overhead (``make
bench-digest-index`` measures bytes per digest with ``INFO memory``). Buckets keep each hash
small and spread the index over a Cluster's slots (every call touches one key).

:meth:`RedisDigestIndex.add` is one Lua script: ``HGET``, and ``HSET`` only when absent, returning
the stored value if there was one, so the first writer wins across every worker with one round
trip. The script is idempotent: retried after a lost reply (an outage,
:func:`~crawler.frontier.redis.redis_conn.retrying`) it returns the entry it stored, equal to the
one given.

:meth:`RedisDigestIndex.add_later` is how the WARC writer stores a new payload's first capture
(it needs no answer): the entry waits in the process (at most :data:`PENDING_MAX`) and goes out
as an ``HSETNX`` (first writer wins, idempotent) in the same pipeline as the process's next
:meth:`~RedisDigestIndex.lookup`, or by :meth:`~RedisDigestIndex.flush`. The candidates step
calls ``flush(digest)`` with the page's payload digest before it schedules the page's links: it
sends only when that page's own entry still waits (with every other waiting entry), and waits
for another thread already sending it, so a worker fetching a link of the page finds its
payload, as before, while a page whose entry already rode out with a lookup (or that has none: a
revisit) costs no round trip. With the Redis frontier the page's flush sends nothing: the
frontier was given :meth:`~RedisDigestIndex.ride` (:meth:`~RedisDigestIndex.carried_by_frontier`)
and, before it queues any URI, carries every entry waiting first in the round trip it makes
anyway (the already-seen filter's ``CONTAINS``, or the ``SCHEDULE``), after waiting for this
thread's entries another thread was sending (:class:`~crawler.frontier.redis.redis_ride.Ride`):
so a page's entry is in Redis before its links are queued, with no round trip of its own on one
redis-server (on a Cluster the frontier sends it alone, as the flush did). ``flush()`` with no
digest sends whatever waits
(:meth:`~RedisDigestIndex.entries` and :meth:`~RedisDigestIndex.close` call it). A lookup of a
digest still waiting answers from the process. An entry is sent only after its record was
written (never a capture that is not in a WARC); until it is sent, a worker reaching the same
payload by another path may miss it and write it in full once more (as it may between one
worker's lookup and the other's add).

Confirmed entries: the process keeps the last :data:`CONFIRMED_MAX` entries Redis confirmed it
holds (a lookup's answer, this process's ``HSETNX`` that stored its entry, :meth:`add`'s
answer), least recently used out first. An entry never changes once stored (first writer wins,
and nothing but :meth:`~RedisDigestIndex.delete_all` removes one), so a lookup of a confirmed
digest (a site-wide style sheet, script or logo under another URL) answers from the process
without Redis, and an ``add_later`` of one sends nothing. The cache holds only what Redis holds:
losing it loses nothing.

What a worker that dies loses: the entries waiting (at most :data:`PENDING_MAX`: records written
whose entry has not ridden out with a lookup or a page's flush yet, in practice those of the last
few fetches), so a later fetch of such a payload writes it in full once more (missed
deduplication, never a wrong revisit).

Thread-safety: thread-safe (one redis-py client, which is).
"""

from __future__ import annotations

import contextlib
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from crawler.continuity.digest_codec import (
    decode_entry,
    digest_key,
    digest_of_key,
    encode_entry,
    file_ref,
)
from crawler.continuity.digest_entry import DigestEntry
from crawler.frontier.redis import redis_conn
from crawler.frontier.redis.redis_ride import Ride, server_id

BUCKET_BITS = 12
_BUCKETS = 1 << BUCKET_BITS
_BATCH = 1000
PENDING_MAX = 64
"""Entries :meth:`RedisDigestIndex.add_later` keeps before it sends them without a lookup."""
MINE_KEPT = 256
"""Keys a thread remembers adding since its last ride, before it forgets those already sent."""
CONFIRMED_MAX = 4096
"""Entries Redis confirmed holding that a process keeps to answer lookups itself (~0.3 KB each)."""

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
        confirmed_max: int = CONFIRMED_MAX,
    ) -> None:
        """Use ``client`` (:func:`~crawler.frontier.redis.redis_conn.connect`) and keys under
        ``prefix`` (the crawl's namespace, e.g. ``c12:``), keeping at most ``confirmed_max``
        confirmed entries (0: none). The client is closed by :meth:`close`."""
        self.client = client
        self.prefix = prefix
        self._script = client.register_script(_ADD_SCRIPT)
        self._outage_timeout_s = outage_timeout_s
        self._logger = logger
        self._files_key = f"{prefix}dgf"
        self._files: dict[bytes, str] = {}  # reference -> name, registered or read here
        self._files_lock = threading.Lock()
        self._pending: dict[bytes, tuple[str, bytes, DigestEntry]] = {}  # key -> bucket, value
        self._round_trips = 0
        self._sending: dict[bytes, tuple[str, bytes, DigestEntry]] = {}  # taken by a sender
        self._pending_lock = threading.Lock()
        self._sent_cond = threading.Condition(self._pending_lock)  # a send ended
        self._confirmed: OrderedDict[bytes, DigestEntry] = OrderedDict()  # under _pending_lock
        self._confirmed_max = max(0, confirmed_max)
        self._server = server_id(client)
        self._carried = False  # the frontier carries the entries before it queues (ride)
        self._mine = threading.local()  # .keys: what this thread added since its last ride

    @classmethod
    def connect(cls, url: str, prefix: str, **kwargs: Any) -> RedisDigestIndex:
        """An index on a new client for ``url``; ``RedisUnavailableError`` if nothing answers
        (within ``start_wait_s``, when given: see
        :func:`~crawler.frontier.redis.redis_conn.connect`)."""
        wait_s = float(kwargs.pop("start_wait_s", 0.0))
        return cls(redis_conn.connect(url, outage_timeout_s=wait_s), prefix, **kwargs)

    def bucket_key(self, key: bytes) -> str:
        """The hash that holds the digest key ``key``."""
        return f"{self.prefix}dg:{_bucket(key):03x}"

    def lookup(self, payload_digest: str) -> DigestEntry | None:
        """The first capture of ``payload_digest``: answered in the process for a digest waiting
        or confirmed, else one round trip that also sends the entries :meth:`add_later` keeps."""
        key = digest_key(payload_digest)
        known = self._known(key)
        if known is not None:
            return known
        name = self.bucket_key(key)
        sent = self._take()
        get = ("HGET", name, key)
        if not sent:  # the raw write: about half the client CPU of redis-py's hget
            raw = self._call(
                lambda: redis_conn.send_commands(self.client, [get])[0], "digest lookup"
            )
        else:
            commands = [*self._hsetnx(sent), get]
            replies = self._sent(
                sent, lambda: redis_conn.send_commands(self.client, commands), "digest lookup"
            )
            raw = replies[-1]
        if raw is None:
            return None
        found = decode_entry(bytes(raw), self._file_name)
        self._confirm([(key, found)])
        return found

    def add(self, payload_digest: str, entry: DigestEntry) -> DigestEntry:
        key = digest_key(payload_digest)
        known = self._known(key)
        if known is not None:
            return known
        if entry.warc_filename:
            self._register_files([entry.warc_filename])
        value = encode_entry(entry, by_ref=True)
        name = self.bucket_key(key)
        raw = self._call(lambda: self._script(keys=[name], args=[key, value]), "digest add")
        stored = entry if raw is None or bytes(raw) == value else None
        if stored is None:
            stored = decode_entry(bytes(raw), self._file_name)
        self._confirm([(key, stored)])
        return stored

    def add_later(self, payload_digest: str, entry: DigestEntry) -> None:
        """Store ``entry`` unless the digest has one (first writer wins), sent with the next
        lookup (module docstring); past :data:`PENDING_MAX` waiting, sent now. Nothing is sent
        for a digest Redis confirmed holding already."""
        key = digest_key(payload_digest)
        with self._pending_lock:
            if key in self._confirmed:
                return
        if entry.warc_filename:
            self._register_files([entry.warc_filename])  # once per file and process
        value = encode_entry(entry, by_ref=True)
        with self._pending_lock:
            if key not in self._sending:
                self._pending.setdefault(key, (self.bucket_key(key), value, entry))
            full = len(self._pending) >= PENDING_MAX
        if self._carried:
            mine: set[bytes] | None = getattr(self._mine, "keys", None)
            if mine is None:
                mine = self._mine.keys = set()
            elif len(mine) >= MINE_KEPT:  # a thread that schedules nothing (embeds): keep
                with self._pending_lock:  # only what is still unsent
                    mine = self._mine.keys = {
                        k for k in mine if k in self._pending or k in self._sending
                    }
            mine.add(key)
        if full:
            self.flush()

    def flush(self, payload_digest: str | None = None) -> None:
        """Send every entry :meth:`add_later` keeps; given ``payload_digest``, only if that
        digest's entry still waits (then with all others), after waiting for a thread already
        sending it: when this returns, the digest's entry is in Redis (or was never added)."""
        if payload_digest is not None:
            if self._carried:
                return  # the frontier carries every waiting entry before it queues a link
            key = digest_key(payload_digest)
            with self._sent_cond:
                while key in self._sending:
                    self._sent_cond.wait(1.0)
                if key not in self._pending:
                    return
        sent = self._take()
        if not sent:
            return

        commands = self._hsetnx(sent)
        self._sent(sent, lambda: redis_conn.send_commands(self.client, commands), "digest add")

    def carried_by_frontier(self) -> Callable[[], Ride | None]:
        """:meth:`ride`, for the frontier to call before it queues URIs; from now on
        :meth:`flush` with a page's digest sends nothing (the frontier's ride carries it)."""
        self._carried = True
        return self.ride

    def ride(self) -> Ride | None:
        """Every entry waiting, as commands to ride first in the caller's next round trip to
        this server (:class:`~crawler.frontier.redis.redis_ride.Ride`; one thread uses it),
        whose ``wait`` also waits for the entries this thread added that other threads were
        sending when it was taken (and sends those another thread gave back unsent); None when
        nothing waits and none of this thread's entries is being sent. When the ride is done
        every entry this thread's :meth:`add_later` kept before this call is in Redis: the
        page's own, before its links are queued. Other threads' entries are theirs to wait for,
        so a thread does not wait on every round trip in flight."""
        mine: set[bytes] = getattr(self._mine, "keys", None) or set()
        self._mine.keys = set()
        with self._pending_lock:
            sending = self._sending
            others = [key for key in mine if key in sending]
            taken, self._pending = self._pending, {}
            sending.update(taken)
        if not taken and not others:
            return None
        commands = self._hsetnx(taken)

        def send_alone() -> None:
            self._sent(taken, lambda: redis_conn.send_commands(self.client, commands), "digest add")

        def wait() -> None:
            with self._sent_cond:
                while any(key in self._sending for key in others):
                    self._sent_cond.wait(1.0)
                # A thread with nothing to queue gave its ride back unsent: send those here.
                back = {k: self._pending.pop(k) for k in others if k in self._pending}
                self._sending.update(back)
            if back:
                todo = self._hsetnx(back)
                self._sent(back, lambda: redis_conn.send_commands(self.client, todo), "digest add")

        return Ride(
            self._server,
            commands,
            on_sent=lambda replies: self._settle(taken, replies),
            on_dropped=lambda: self._settle(taken, None),
            send_alone=send_alone,
            wait=wait,
        )

    @staticmethod
    def _hsetnx(taken: dict[bytes, tuple[str, bytes, DigestEntry]]) -> list[tuple[Any, ...]]:
        """The ``HSETNX`` of each entry of ``taken``, in order."""
        return [("HSETNX", bucket, field, value) for field, (bucket, value, _) in taken.items()]

    def _known(self, key: bytes) -> DigestEntry | None:
        """The entry for digest key ``key`` waiting, being sent or confirmed, or None."""
        with self._pending_lock:
            found = self._pending.get(key) or self._sending.get(key)
            if found is not None:
                return found[2]
            confirmed = self._confirmed.get(key)
            if confirmed is not None:
                self._confirmed.move_to_end(key)
            return confirmed

    def _confirm(self, stored: Iterable[tuple[bytes, DigestEntry]]) -> None:
        """Keep entries Redis holds (least recently used out past the bound)."""
        if not self._confirmed_max:
            return
        with self._pending_lock:
            confirmed = self._confirmed
            for key, entry in stored:
                confirmed[key] = entry
                confirmed.move_to_end(key)
            while len(confirmed) > self._confirmed_max:
                confirmed.popitem(last=False)

    def _take(self) -> dict[bytes, tuple[str, bytes, DigestEntry]]:
        """The waiting entries, moved to those being sent (each is sent by one thread only)."""
        with self._pending_lock:
            taken, self._pending = self._pending, {}
            self._sending.update(taken)
        return taken

    def _sent(
        self, taken: dict[bytes, tuple[str, bytes, DigestEntry]], send: Any, what: str
    ) -> list[Any]:
        """Run ``send`` (a pipeline carrying ``taken``'s ``HSETNX``es first, in order); the
        entries leave those being sent (back to those waiting if it failed), those it stored
        become confirmed. Returns the pipeline's replies."""
        try:
            replies: list[Any] = self._call(send, what)
        except BaseException:
            self._settle(taken, None)
            raise
        self._settle(taken, replies)
        return replies

    def _settle(
        self, taken: dict[bytes, tuple[str, bytes, DigestEntry]], replies: list[Any] | None
    ) -> None:
        """``taken`` leave those being sent: confirmed where ``replies`` (their ``HSETNX``es'
        replies first, in order) say stored, back to those waiting when ``replies`` is None
        (not sent)."""
        with self._sent_cond:
            for field, item in taken.items():
                self._sending.pop(field, None)
                if replies is None:
                    self._pending.setdefault(field, item)
            self._sent_cond.notify_all()
        if replies is None:
            return
        stored = [
            (field, item[2])
            for (field, item), new in zip(taken.items(), replies, strict=False)
            if new
        ]
        self._confirm(stored)

    def _register_files(self, names: Iterable[str]) -> None:
        """Store the reference -> name of each file not registered by this process yet."""
        with self._files_lock:
            new = {file_ref(n): n for n in names if file_ref(n) not in self._files}
        if not new:
            return

        def send() -> None:
            pipe = self.client.pipeline(transaction=False)
            for ref, name in new.items():
                pipe.hsetnx(self._files_key, ref, name.encode("utf-8", "surrogateescape"))
            pipe.execute()

        self._call(send, "digest index files")
        with self._files_lock:
            self._files.update(new)

    def _file_name(self, ref: bytes) -> str | None:
        with self._files_lock:
            known = self._files.get(ref)
        if known is not None:
            return known
        raw = self._call(lambda: self.client.hget(self._files_key, ref), "digest index files")
        if raw is None:
            return None
        name = bytes(raw).decode("utf-8", "surrogateescape")
        with self._files_lock:
            self._files[ref] = name
        return name

    def add_many(self, pairs: Iterable[tuple[str, DigestEntry]]) -> None:
        """Add many entries, first writer wins each (``HSETNX``), pipelined in batches: how a
        job's index of earlier crawls is loaded before a ``--workers`` crawl starts."""
        batch: list[tuple[str, bytes, bytes]] = []
        names: set[str] = set()
        for digest, entry in pairs:
            key = digest_key(digest)
            if entry.warc_filename:
                names.add(entry.warc_filename)
            batch.append((self.bucket_key(key), key, encode_entry(entry, by_ref=True)))
            if len(batch) >= _BATCH:
                self._register_files(names)
                self._send(batch)
                batch, names = [], set()
        if batch:
            self._register_files(names)
            self._send(batch)

    def _send(self, batch: list[tuple[str, bytes, bytes]]) -> None:
        def send() -> None:
            pipe = self.client.pipeline(transaction=False)
            for name, key, value in batch:
                pipe.hsetnx(name, key, value)
            pipe.execute()

        self._call(send, "digest index load")

    def entries(self) -> Iterator[tuple[str, DigestEntry]]:
        self.flush()
        files = self._call(lambda: self.client.hgetall(self._files_key), "digest index files")
        with self._files_lock:
            for ref, name in files.items():
                self._files[bytes(ref)] = bytes(name).decode("utf-8", "surrogateescape")
        for bucket in range(_BUCKETS):
            name = f"{self.prefix}dg:{bucket:03x}"
            cursor = 0
            while True:
                cursor, fields = self._call(
                    lambda n=name, c=cursor: self.client.hscan(n, c, count=500), "digest scan"
                )
                for key, raw in fields.items():
                    yield digest_of_key(bytes(key)), decode_entry(bytes(raw), self._file_name)
                if int(cursor) == 0:
                    break

    def delete_all(self) -> None:
        """Remove every key of this index (after it was copied into the job's index)."""
        with self._pending_lock:
            self._confirmed.clear()
        names = [f"{self.prefix}dg:{b:03x}" for b in range(_BUCKETS)] + [self._files_key]
        for start in range(0, len(names), 500):
            part = names[start : start + 500]
            self._call(lambda p=part: [self.client.delete(n) for n in p], "digest index delete")

    @property
    def round_trips(self) -> int:
        """Calls sent to Redis so far (each one round trip, or one per Cluster node touched)."""
        return self._round_trips

    def _call(self, call: Any, what: str) -> Any:
        with self._files_lock:
            self._round_trips += 1
        return redis_conn.retrying(
            call, outage_timeout_s=self._outage_timeout_s, what=what, logger=self._logger
        )

    def close(self) -> None:
        """Send the entries still waiting, then close the client (never raises)."""
        with contextlib.suppress(Exception):
            self.flush()
        with contextlib.suppress(Exception):
            self.client.close()
