"""RedisUriUniqFilter: an exact already-seen set shared by every worker, ~12 bytes per URL.

Each canonical URI becomes its exact 64-bit fingerprint (the whole-URI part of
:func:`~crawler.uniq.uniq_filter.fingerprint`). The top ``bucket_bits`` bits pick a bucket; a
bucket is one Redis string holding the remaining ``64 - bucket_bits`` bits of each member as a
fixed-width big-endian field (6 bytes with the default 16 bucket bits), unsorted. Membership is
a memchr-speed ``string.find`` with an alignment check inside a Lua script; a new member is
appended by rewriting the string, so the value never carries the slack a growing ``APPEND``
leaves. Redis then spends the fixed per-key cost (~60 bytes) on 2^16 keys and ~6.3 bytes per
member: about 12 bytes per URL at 10^6 URLs, less beyond (measured by ``make bench-scale``).
scrapy-redis keeps a 40-character hex SHA-1 per URL in one set (~88 bytes) that cannot be
sharded.

Cluster: the top 8 bits also name the **shard**; every key of a shard carries the hash tag
``{<ns>u<shard>}`` so one script call (a shard's buckets and its counter) stays in one slot.
On one server, all of a batch goes in one script call; on a Cluster, one call per shard touched,
pipelined per node by the client. Counters: one per shard, summed by :meth:`count` (cached 1 s).

Fast path: a :class:`~crawler.uniq.recent_keys.RecentKeys` cache of fingerprints this process
recorded or saw confirmed answers "already seen" with no round trip.

Links seen long ago: where one script records and queues (the frontier and this filter on one
redis-server: ``ask_ahead``, set by the frontier; not on a Cluster, whose schedule asks again
anyway), once that cache has dropped keys (a crawl larger than it), ``recorded`` asks Redis about a
page's links the cache does not know, when there are at least :data:`ASK_AT_LEAST` of them, in one
round trip, so the candidates step sends only the links that are new through the scope's rules, as
in a young crawl. The fingerprints found absent are kept for :data:`ABSENT_TRUSTED_S`: the
schedule's check (``contains_many(..., trust_absent=True)``, made where one script records and
queues) does not ask about them again, for this page or another page in flight that links to them,
so the round trip moves ahead of the scope rather than being added. A link recorded meanwhile is
caught by that script, which records and queues only what is new.

Keys live under ``namespace`` (set per crawl by ``crawler run --workers`` / ``crawler worker``,
see :mod:`crawler.distributed`), so two crawls never share a set. ``<ns>um`` records the layout
(fingerprint function, bucket bits); reopening with other settings is refused.

Heritrix counterpart: ``BdbUriUniqFilter`` (exact, persistent), shared here across processes.
Thread-safe: the client is; the cache is only filled after Redis confirmed a key.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from crawler.bounded_memo import remember
from crawler.frontier.redis import redis_conn
from crawler.params import Params
from crawler.uniq.recent_keys import RecentKeys
from crawler.uniq.uniq_filter import (
    FingerprintFunction,
    UniqStateError,
    UriUniqFilter,
    fingerprint64,
)

if TYPE_CHECKING:
    from crawler.frontier.redis.redis_ride import Ride

SHARD_BITS = 8
LAYOUT_VERSION = "1"
COUNT_CACHE_S = 1.0
BUCKET_NAMES_KEPT = 65_536
"""Buckets whose key names (the bucket's and its shard counter's) a filter remembers (then all
forgotten and started again): all of them with 16 bucket bits."""
ASK_AT_LEAST = 8
"""Links of a page the cache does not know before :meth:`RedisUriUniqFilter.recorded` asks
Redis: a round trip costs this process ~130 CPU-µs and ~5 more a link, the scope's rules ~20 a
link in a crawl (bench/RESULTS.md), so below this many the round trip would cost more than the
rules it saves."""
ABSENT_KEPT = 65_536
"""Fingerprints :meth:`RedisUriUniqFilter.recorded` found absent that a filter keeps (then all
forgotten and started again)."""
ABSENT_TRUSTED_S = 1.0
"""How long a fingerprint found absent is taken as absent by the schedule's check: long enough
for the page's own schedule and for the other pages in flight that link to it."""

UNIQ_ADD_LUA = """
-- uniq_add(kb, nb, w, ab, count): record ``count`` fingerprints; 1 = new, 0 = recorded already.
-- KEYS[kb + 1 .. kb + nb]: bucket keys; KEYS[kb + nb + 1 .. kb + 2 nb]: each one's shard counter.
-- ARGV[ab + 2 (i - 1)], ARGV[ab + 2 (i - 1) + 1]: the i-th bucket index (1..nb) and field.
local function uniq_add(kb, nb, w, ab, count)
  local out, blobs, dirty, added = {}, {}, {}, {}
  for i = 1, count do
    local bi = tonumber(ARGV[ab + 2 * (i - 1)])
    local rem = ARGV[ab + 2 * (i - 1) + 1]
    local blob = blobs[bi]
    if blob == nil then
      blob = redis.call('GET', KEYS[kb + bi]) or ''
    end
    local pos, found = 1, false
    while true do
      local j = string.find(blob, rem, pos, true)
      if not j then break end
      if (j - 1) % w == 0 then found = true break end
      pos = j + 1
    end
    if found then
      out[i] = 0
    else
      blob = blob .. rem
      dirty[bi] = true
      added[bi] = (added[bi] or 0) + 1
      out[i] = 1
    end
    blobs[bi] = blob
  end
  for bi in pairs(dirty) do redis.call('SET', KEYS[kb + bi], blobs[bi]) end
  for bi, n in pairs(added) do redis.call('INCRBY', KEYS[kb + nb + bi], n) end
  return out
end
"""
"""The add rule as a Lua function, for :data:`_ADD_SCRIPT` and for a script that records and
queues in one step (the Redis frontier's RECORD_SCHEDULE)."""

_ADD_SCRIPT = (
    UNIQ_ADD_LUA
    + """
return uniq_add(0, tonumber(ARGV[2]), tonumber(ARGV[1]), 3, (#ARGV - 2) / 2)
"""
)
"""KEYS: nb bucket keys, then one counter key per bucket key (its shard's counter).
ARGV: field width, nb, then (bucket index, field bytes) per fingerprint. Returns 1 = new."""


_CONTAINS_SCRIPT = """
local w = tonumber(ARGV[1])
local out, blobs = {}, {}
for i = 3, #ARGV, 2 do
  local bi = tonumber(ARGV[i])
  local rem = ARGV[i + 1]
  local blob = blobs[bi]
  if blob == nil then
    blob = redis.call('GET', KEYS[bi]) or ''
    blobs[bi] = blob
  end
  local pos, found = 1, 0
  while true do
    local j = string.find(blob, rem, pos, true)
    if not j then break end
    if (j - 1) % w == 0 then found = 1 break end
    pos = j + 1
  end
  out[#out + 1] = found
end
return out
"""
"""Same KEYS/ARGV as the add script; read-only. Returns 1 = already recorded."""


class RedisUriUniqFilterParams(Params):
    """Where the shared set lives and how it is laid out."""

    url: str = Field(
        "", description="Redis URL (redis://host:6379/0); empty = the frontier store's URL"
    )
    namespace: str = Field(
        "", description="key prefix of this crawl; set by `crawler run --workers`/`crawler worker`"
    )
    bucket_bits: Literal[16, 24] = Field(
        16,
        description="2^bits bucket keys: 16 up to ~10^8 URLs, 24 beyond; fixed once created",
    )
    fingerprint: FingerprintFunction = Field(
        "mmh3", description="hash of the fingerprints: mmh3 or md5; fixed once created"
    )
    cache_size: int = Field(
        200_000, ge=0, description="recent fingerprints kept in RAM per generation (2 generations)"
    )
    outage_timeout_s: float = Field(
        600.0, gt=0, description="how long to wait for an unreachable Redis before failing"
    )
    start_wait_s: float = Field(
        0.0,
        ge=0,
        description="how long opening waits for an unreachable Redis (0: a clear error at once; "
        "a worker that joined a running crawl waits its outage timeout)",
    )


class RedisUriUniqFilter(UriUniqFilter[RedisUriUniqFilterParams]):
    """Exact uniq filter shared through Redis (one server or a Cluster)."""

    shared: ClassVar[bool] = True

    def __init__(self, params: RedisUriUniqFilterParams | None = None) -> None:
        super().__init__(params)
        p = self.params
        self._ns = p.namespace
        self._bits = p.bucket_bits
        self._width = (64 - p.bucket_bits) // 8
        self._rem_mask = (1 << (64 - p.bucket_bits)) - 1
        self._recent: RecentKeys[int] = RecentKeys(p.cache_size)
        # fingerprint -> when recorded() found it absent (monotonic); dict operations are
        # atomic, and a lost entry only costs a look-up
        self._absent: dict[int, float] = {}
        self.ask_ahead = False
        """Whether :meth:`recorded` may ask Redis (set by the frontier when one script records
        and queues, so the schedule's check takes its "absent" instead of asking again)."""
        self._lock = threading.Lock()
        self._client: Any = None
        self._script: Any = None
        self._contains: Any = None
        self._cluster = False
        self._count = 0
        self._count_at = -COUNT_CACHE_S
        # bucket -> (its key, its shard counter's key); single dict operations, thread-safe
        self._bucket_names: dict[int, tuple[str, str]] = {}

    # ------------------------------------------------------------ lifecycle
    def open(self, state_dir: Path) -> None:
        """Connect and check the layout (``state_dir`` is unused: the state is in Redis)."""
        if self._client is not None:
            return
        p = self.params
        if not p.url or not p.namespace:
            raise UniqStateError(
                "RedisUriUniqFilter needs params url and namespace "
                "(start the crawl with `crawler run ORDER --workers N` or `crawler worker`)"
            )
        try:
            client = redis_conn.connect(p.url, outage_timeout_s=p.start_wait_s)
        except redis_conn.RedisUnavailableError as exc:
            raise UniqStateError(str(exc)) from exc
        layout = {"version": LAYOUT_VERSION, "function": p.fingerprint, "bits": str(self._bits)}
        meta_key = f"{self._ns}um"
        client.hsetnx(meta_key, "version", LAYOUT_VERSION)
        client.hsetnx(meta_key, "function", p.fingerprint)
        client.hsetnx(meta_key, "bits", str(self._bits))
        stored = {k.decode(): v.decode() for k, v in client.hgetall(meta_key).items()}
        if stored != layout:
            client.close()
            raise UniqStateError(
                f"the shared uniq filter {meta_key} was created with {stored}, "
                f"this order says {layout}"
            )
        self._cluster = redis_conn.is_cluster(client)
        self._script = client.register_script(_ADD_SCRIPT)
        self._contains = client.register_script(_CONTAINS_SCRIPT)
        self._client = client

    def close(self) -> None:
        client, self._client = self._client, None
        self._recent.clear()
        self._absent.clear()
        if client is not None:
            client.close()

    # ------------------------------------------------------------ adding
    def fp64(self, canonical: str) -> int:
        """The exact 64-bit fingerprint of ``canonical`` (the set's member)."""
        return fingerprint64(canonical, self.params.fingerprint)

    def _fps(self, canonicals: Iterable[str]) -> list[int]:
        """:meth:`fp64` of each."""
        function = self.params.fingerprint
        return [fingerprint64(c, function) for c in canonicals]

    def add(self, canonical: str) -> bool:
        return self.add_many((canonical,))[0]

    def add_force(self, canonical: str) -> None:
        self.add_many((canonical,))

    def add_many(self, canonicals: Iterable[str]) -> list[bool]:
        fps = self._fps(canonicals)
        recent = self._recent
        out = [False] * len(fps)
        todo: dict[int, list[int]] = {}
        for i, fp in enumerate(fps):
            if fp not in recent:
                todo.setdefault(fp, []).append(i)
        if not todo:
            return out
        if self._client is None:
            raise RuntimeError("RedisUriUniqFilter is not open")
        groups = self._group(list(todo))
        retried: list[bool] = []
        results = redis_conn.retrying(
            lambda: self._run(groups),
            outage_timeout_s=self.params.outage_timeout_s,
            what="uniq_add",
            on_retry=lambda: retried.append(True),
        )
        with self._lock:
            for group, flags in zip(groups, results, strict=True):
                for fp, flag in zip(group, flags, strict=True):
                    # After an outage a lost reply may hide our own insert: say "new" (a URI
                    # scheduled twice is fetched twice; one never scheduled would be lost).
                    out[todo[fp][0]] = bool(flag) or bool(retried)
                    recent.remember(fp)
        return out

    def add_many_announced(
        self, canonicals: Sequence[str], announce: Callable[[list[str]], None]
    ) -> list[bool]:
        """Announces the canonicals :meth:`contains_many` did not find, then adds: one round trip
        more than :meth:`add_many`. Exact but for a URI another process records in between,
        which is announced and then reported seen."""
        names = list(canonicals)
        found = self.contains_many(names)
        todo = [c for c, hit in zip(names, found, strict=True) if not hit]
        if todo:
            announce(list(dict.fromkeys(todo)))
        return self.add_many(names)

    def maybe_new(self, canonicals: list[str]) -> list[bool]:
        """False for each canonical this process saw Redis confirm as recorded (no I/O)."""
        recent = self._recent
        return [fp not in recent for fp in self._fps(canonicals)]

    def recorded(self, canonicals: list[str]) -> list[bool]:
        """True for each canonical recorded crawl-wide: the cache's answer, and, with
        :attr:`ask_ahead` once the cache has dropped keys, Redis's for the ones it does not
        know when they are at least :data:`ASK_AT_LEAST` (one round trip; see the module
        docstring). An outage answers from the cache alone (the schedule waits for Redis)."""
        fps = self._fps(canonicals)
        recent = self._recent
        out = [fp in recent for fp in fps]
        if not self.ask_ahead or not recent.dropped or self._client is None:
            return out
        todo = list({fp for fp, hit in zip(fps, out, strict=True) if not hit})
        if len(todo) < ASK_AT_LEAST:
            return out
        try:
            found, missing = self._ask(todo, None, retry=False)
        except redis_conn.OUTAGE_ERRORS:
            return out
        absent = self._absent
        if len(absent) >= ABSENT_KEPT:
            absent.clear()
        now = time.monotonic()
        for fp in missing:
            absent[fp] = now
        return [hit or fp in found for fp, hit in zip(fps, out, strict=True)]

    def contains(self, canonical: str) -> bool:
        """Whether ``canonical`` was recorded (no change). Lets the frontier queue a URI before
        recording it, so a worker killed in between leaves a duplicate, never a lost URI."""
        return self.contains_many((canonical,))[0]

    def contains_many(
        self, canonicals: Iterable[str], ride: Ride | None = None, *, trust_absent: bool = False
    ) -> list[bool]:
        """:meth:`contains` of each, in one round trip (one per node on a Cluster). ``ride``:
        plain commands carried first in that round trip when there is one and it goes to their
        server (:func:`~crawler.frontier.redis.redis_conn.run_calls`). With ``trust_absent``, a
        fingerprint :meth:`recorded` found absent less than :data:`ABSENT_TRUSTED_S` ago is
        answered absent without asking again: for a caller that then records with a script
        that is exact whatever it is told (RECORD_SCHEDULE)."""
        fps = self._fps(canonicals)
        recent = self._recent
        out = [fp in recent for fp in fps]
        misses = {fp for fp, hit in zip(fps, out, strict=True) if not hit}
        absent = self._absent
        if trust_absent and absent and misses:
            since = time.monotonic() - ABSENT_TRUSTED_S
            get = absent.get
            misses = {fp for fp in misses if get(fp, since) <= since}
        todo = list(misses)
        if not todo:
            return out
        if self._client is None:
            raise RuntimeError("RedisUriUniqFilter is not open")
        found, _ = self._ask(todo, ride, retry=True)
        return [hit or fp in found for fp, hit in zip(fps, out, strict=True)]

    def _ask(
        self, todo: list[int], ride: Ride | None, *, retry: bool
    ) -> tuple[set[int], list[int]]:
        """One ``contains`` round trip (per node) for the fingerprints ``todo``: those recorded
        (now in the cache) and those absent. ``retry``: wait out an outage up to the outage
        timeout; else its error is raised at once."""
        groups = self._group(todo)

        def run() -> list[list[int]]:
            return self._run(groups, self._contains, ride)

        results = (
            redis_conn.retrying(
                run, outage_timeout_s=self.params.outage_timeout_s, what="uniq_contains"
            )
            if retry
            else run()
        )
        found: set[int] = set()
        missing: list[int] = []
        for group, flags in zip(groups, results, strict=True):
            for fp, flag in zip(group, flags, strict=True):
                if flag:
                    found.add(fp)
                else:
                    missing.append(fp)
        if found:
            with self._lock:
                for fp in found:
                    self._recent.remember(fp)
        return found, missing

    def record_args(self, canonicals: Sequence[str]) -> tuple[list[int], list[str], list[Any]]:
        """For a script that records with :data:`UNIQ_ADD_LUA` (one fingerprint per canonical,
        in order): the fingerprints, the KEYS (buckets, then counters) and the ARGV (width, the
        number of buckets, then (bucket index, field) per fingerprint). Its caller runs the
        script on this filter's server (:meth:`on_server`), then calls :meth:`remember`."""
        fps = self._fps(canonicals)
        keys, args = self._call_args(fps)
        return fps, keys, args

    def on_server(self, url: str) -> bool:
        """Whether this filter is open on the one redis-server (not a Cluster) at ``url``, so
        a script there may record in it."""
        return self._client is not None and not self._cluster and self.params.url == url

    def remember(self, fps: Iterable[int]) -> None:
        """Fingerprints Redis confirmed recorded (by a script of :meth:`record_args`)."""
        with self._lock:
            for fp in fps:
                self._recent.remember(fp)

    def _group(self, fps: list[int]) -> list[list[int]]:
        """``fps`` split into script calls: one on a server, one per shard on a Cluster."""
        if not self._cluster:
            return [fps]
        groups: dict[int, list[int]] = {}
        shift = 64 - SHARD_BITS
        for fp in fps:
            groups.setdefault(fp >> shift, []).append(fp)
        return list(groups.values())

    def _run(
        self, groups: list[list[int]], script: Any = None, ride: Ride | None = None
    ) -> list[list[int]]:
        calls = [self._call_args(group) for group in groups]
        run = self._script if script is None else script
        return [list(r) for r in redis_conn.run_script(self._client, run, calls, ride)]

    def _call_args(self, fps: list[int]) -> tuple[list[str], list[Any]]:
        width, mask = self._width, self._rem_mask
        bucket_shift = 64 - self._bits
        names, name_of = self._bucket_names, self._names_of
        index: dict[int, int] = {}
        buckets: list[str] = []
        counters: list[str] = []
        args: list[Any] = [width, 0]
        for fp in fps:
            bucket = fp >> bucket_shift
            bi = index.get(bucket)
            if bi is None:
                pair = names.get(bucket) or name_of(bucket)
                buckets.append(pair[0])
                counters.append(pair[1])
                bi = index[bucket] = len(buckets)
            args += (bi, (fp & mask).to_bytes(width, "big"))
        args[1] = len(buckets)
        return buckets + counters, args

    def _names_of(self, bucket: int) -> tuple[str, str]:
        """The key of ``bucket`` and of its shard's counter (remembered)."""
        shard = bucket >> (self._bits - SHARD_BITS)
        tag = f"{{{self._ns}u{shard:02x}}}"
        low = bucket & ((1 << (self._bits - SHARD_BITS)) - 1)
        return remember(self._bucket_names, bucket, (f"{tag}{low:x}", f"{tag}n"), BUCKET_NAMES_KEPT)

    # ------------------------------------------------------------ counting
    def count(self) -> int:
        now = time.monotonic()
        if now - self._count_at < COUNT_CACHE_S or self._client is None:
            return self._count
        keys = [f"{{{self._ns}u{shard:02x}}}n" for shard in range(1 << SHARD_BITS)]

        def read() -> int:
            if not self._cluster:  # one command, not one per shard
                return sum(int(v) for v in self._client.mget(keys) if v is not None)
            pipe = self._client.pipeline(transaction=False)
            for key in keys:
                pipe.get(key)
            return sum(int(v) for v in pipe.execute() if v is not None)

        try:
            self._count = redis_conn.retrying(read, outage_timeout_s=5.0, what="uniq_count")
        except redis_conn.RedisUnavailableError:
            return self._count
        self._count_at = now
        return self._count
