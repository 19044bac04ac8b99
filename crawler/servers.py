"""ServerCache: what the crawl knows about each server (robots.txt) and host (IP address).

A *server* is ``host:port`` (robots.txt rules belong to one scheme/port, so https has its own);
a *host* is the bare host name (its IP is shared by every port). The cache is shared by all
ToeThreads: one lock guards the maps and is held only for dictionary updates — robots.txt is
parsed before the lock is taken. Heritrix counterpart: ``ServerCache`` with ``CrawlServer``
(robots) and ``CrawlHost`` (IP).

Both maps are bounded (``max_servers``, ``max_hosts``; 0: unbounded) so that a crawl of millions
of hosts keeps a flat memory: past the bound, the entry updated longest ago goes — the one
nearest to its expiry anyway. A server or host whose entry went is treated exactly like one whose
entry expired: its robots.txt is fetched (its name looked up) again before its next URI.
Prerequisite claims older than their hold time are dropped as the claims grow.

Workers of one crawl (``--workers``) share what they learn through a :class:`ServerFactsShare`
(:meth:`ServerCache.attach_share`; Redis in :mod:`crawler.server_facts`): every accepted robots
outcome and every lookup is published there, and a worker that meets a server or host it knows
nothing valid about asks the share (:meth:`ServerCache.adopt_shared`) before it schedules a
prerequisite, so a host's robots.txt is fetched (its name looked up) once for the whole crawl,
not once per worker.
"""

from __future__ import annotations

import base64
import json
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from crawler.logs.growing_file import complete_lines
from crawler.logs.line_file import LineFile
from crawler.robots import DEFAULT_MAX_SIZE_BYTES, RobotsRules
from crawler.urls import UriError, server_key

DEFAULT_MAX_SERVERS = 50_000
"""Servers whose robots state is kept (a parsed robots.txt is ~1-3 KB)."""
DEFAULT_MAX_HOSTS = 200_000
"""Hosts whose address is kept (~200 bytes each)."""
CLAIMS_SWEEP_AT = 10_000
"""Claims held before the expired ones are swept (a claim whose prerequisite never came back)."""

MIN_ROBOTS_ATTEMPTS = 3
"""Failed robots fetches (status <= 0) are accepted as "no robots" only after this many."""


class ServerFactsShare(Protocol):
    """Where the workers of one crawl share robots and DNS outcomes (the entries of the
    journal, keyed ``robots:<server>`` / ``dns:<host>``). Both methods are thread-safe and never
    raise: a share that cannot be reached publishes nothing and finds nothing, so a worker
    fetches for itself, as without a share."""

    def publish(self, key: str, entry: dict[str, Any], keep_s: float) -> None:
        """Store ``entry`` under ``key`` for about ``keep_s`` seconds (the newest one wins)."""

    def lookup(self, keys: list[str]) -> list[dict[str, Any] | None]:
        """The entries stored under ``keys`` (None where none is), in one round trip."""

    def claim(self, key: str, hold_s: float) -> bool:
        """Whether this worker may fetch the prerequisite ``key``: True unless another worker
        claimed it less than ``hold_s`` seconds ago (or the share cannot say)."""

    def close(self) -> None:
        """Release the connection. Idempotent."""


@dataclass(frozen=True, slots=True)
class RobotsState:
    """One server's robots.txt as last seen.

    ``rules`` is None until a fetch was accepted (a response, or ``MIN_ROBOTS_ATTEMPTS``
    failures); ``fetched_s`` is the epoch time it was accepted; ``failed_attempts`` counts
    consecutive fetches with a non-positive status; ``status`` is the last fetch's status.
    """

    rules: RobotsRules | None
    fetched_s: float | None
    failed_attempts: int
    status: int

    def is_valid(self, now_s: float, validity_s: float) -> bool:
        """Accepted, and accepted less than ``validity_s`` ago."""
        return (
            self.rules is not None
            and self.fetched_s is not None
            and now_s - self.fetched_s < validity_s
        )


@dataclass(frozen=True, slots=True)
class HostState:
    """What is known of a host's address: its IP, when it was learnt, and for how long it holds."""

    ip: str | None
    looked_up_s: float
    ttl_s: float

    def is_expired(self, now_s: float, validity_s: float) -> bool:
        """Whether a new lookup is due: older than ``max(validity_s, ttl_s)``.

        ``validity_s <= 0`` or an infinite TTL (an IP-literal host) never expire (Heritrix's
        ``isIpExpired``).
        """
        if validity_s <= 0 or math.isinf(self.ttl_s):
            return False
        return now_s - self.looked_up_s >= max(validity_s, self.ttl_s)


class ServerCache:
    """Thread-safe per-server robots state and per-host IP state. The constructor does no I/O.

    ``resolver_active`` is set by an enabled FetchDNS when it starts: only then does the
    PreconditionEnforcer schedule ``dns:`` prerequisites and FetchHTTP connect to cached IPs.
    """

    def __init__(
        self,
        robots_max_size_bytes: int = DEFAULT_MAX_SIZE_BYTES,
        max_servers: int = DEFAULT_MAX_SERVERS,
        max_hosts: int = DEFAULT_MAX_HOSTS,
    ) -> None:
        self.robots_max_size_bytes = robots_max_size_bytes
        self.max_servers = max_servers
        self.max_hosts = max_hosts
        self.evicted_servers = 0
        self.evicted_hosts = 0
        self.resolver_active = False
        self._claims_sweep_at = CLAIMS_SWEEP_AT
        self._lock = threading.Lock()
        # Oldest update first (an update moves its key to the end): eviction order.
        self._robots: OrderedDict[str, RobotsState] = OrderedDict()
        self._hosts: OrderedDict[str, HostState] = OrderedDict()
        self._claims: dict[str, float] = {}
        self._journal: LineFile | None = None
        self._journal_lock = threading.Lock()
        self._share: ServerFactsShare | None = None
        self._robots_keep_s = 0.0
        self._hosts_keep_s = 0.0
        self.adopted = 0
        """Robots and host entries taken from the share instead of fetched or looked up here."""

    # ------------------------------------------------------------------- share
    def attach_share(
        self, share: ServerFactsShare, robots_keep_s: float, hosts_keep_s: float
    ) -> None:
        """Publish every accepted robots outcome (kept there ``robots_keep_s``: the robots
        validity) and every lookup (``hosts_keep_s``) to ``share``, and let
        :meth:`adopt_shared` read it. Call before the crawl's threads start."""
        self._share = share
        self._robots_keep_s = robots_keep_s
        self._hosts_keep_s = hosts_keep_s

    def close_share(self) -> None:
        """Stop sharing and close the share. Idempotent."""
        share, self._share = self._share, None
        if share is not None:
            share.close()

    def adopt_shared(self, keys: list[str]) -> int:
        """Ask the share for ``keys`` (``robots:<server>``, ``dns:<host>``) and take in what it
        holds; returns how many entries were taken (0 without a share). The caller then reads
        the state again and decides as before: an entry taken in is judged by the same validity
        as one learnt here."""
        share = self._share
        if share is None or not keys:
            return 0
        taken = 0
        for entry in share.lookup(keys):
            if entry is None:
                continue
            try:
                taken += self._take_shared(entry)
            except (ValueError, KeyError, TypeError):
                continue
        if taken:
            with self._lock:
                self.adopted += taken
        return taken

    def _take_shared(self, entry: dict[str, Any]) -> int:
        if entry["t"] == "robots":
            status = int(entry["status"])
            now_s = float(entry["now"])
            key = str(entry["key"])
            if status > 0:
                body = base64.b64decode(entry["body"]) if entry.get("body") is not None else None
                self.update_robots(key, status, body, now_s, publish=False)
            else:  # failures accepted as "no robots" where they happened
                state = RobotsState(RobotsRules.ALLOW_ALL, now_s, int(entry["failures"]), status)
                with self._lock:
                    self._put(self._robots, key, state, self.max_servers, "servers")
                    self._claims.pop("robots:" + key, None)
            return 1
        if entry["t"] == "host":
            ttl = float(entry["ttl"]) if entry["ttl"] is not None else math.inf
            self.update_host(entry["host"], entry["ip"], float(entry["now"]), ttl, publish=False)
            return 1
        return 0

    # ----------------------------------------------------------------- journal
    def attach_journal(self, path: Path) -> int:
        """Replay ``path`` (robots and DNS outcomes of an earlier run of this crawl), then append
        every new outcome to it, so a resumed crawl — even after kill -9 — does not fetch a
        server's robots.txt or look a host up again. Returns how many entries were replayed;
        a line cut short by a crash is skipped."""
        replayed = 0
        for line in complete_lines(path):
            try:
                replayed += self._replay(json.loads(line))
            except (ValueError, KeyError, TypeError):
                continue
        path.parent.mkdir(parents=True, exist_ok=True)
        # A LineFile: a full disk keeps an entry in memory until there is room, never raises.
        self._journal = LineFile(path)
        return replayed

    def close_journal(self) -> None:
        """Stop journaling. Idempotent."""
        with self._journal_lock:
            if self._journal is not None:
                self._journal.close()
                self._journal = None

    def _replay(self, entry: dict[str, Any]) -> int:
        if entry["t"] == "robots":
            body = base64.b64decode(entry["body"]) if entry.get("body") is not None else None
            self.update_robots(entry["key"], int(entry["status"]), body, float(entry["now"]))
            return 1
        if entry["t"] == "host":
            ttl = float(entry["ttl"]) if entry["ttl"] is not None else math.inf
            self.update_host(entry["host"], entry["ip"], float(entry["now"]), ttl)
            return 1
        return 0

    def _write_journal(self, entry: dict[str, Any]) -> None:
        if self._journal is None:
            return
        line = json.dumps(entry, separators=(",", ":"))
        with self._journal_lock:
            if self._journal is not None:
                self._journal.write(line)

    # ------------------------------------------------------------ prerequisites
    def claim_prerequisite(self, key: str, now_s: float, hold_s: float) -> bool:
        """Whether the caller should schedule the prerequisite ``key`` (``robots:<server>`` or
        ``dns:<host>``): True unless another URI claimed it less than ``hold_s`` ago and it
        was not resolved since. Lets many queues of one server share one robots.txt fetch;
        with a share attached, the queues of every worker of the crawl (the claim is also taken
        crawl-wide, after the local one: a worker that loses it waits like a local queue)."""
        with self._lock:
            claims = self._claims
            claimed = claims.get(key)
            if claimed is not None and now_s - claimed < hold_s:
                return False
            claims[key] = now_s
            if len(claims) >= self._claims_sweep_at:
                for stale in [k for k, t in claims.items() if now_s - t >= hold_s]:
                    del claims[stale]
                self._claims_sweep_at = max(CLAIMS_SWEEP_AT, 2 * len(claims))
        share = self._share
        return share is None or share.claim(key, hold_s)

    def release_prerequisite(self, key: str) -> None:
        """Drop this process's claim on ``key`` without an outcome (the claimer gave up before
        fetching), so the next URI of the server need not wait out the hold. A claim taken in
        the share stays until it expires; this worker's own retry does not wait for it."""
        with self._lock:
            self._claims.pop(key, None)

    # ------------------------------------------------------------------ robots
    def robots_state(self, server_key: str) -> RobotsState | None:
        """The server's robots state, or None if no robots fetch was ever recorded."""
        return self._robots.get(server_key)

    def update_robots(
        self,
        server_key: str,
        status: int,
        body: bytes | None,
        now_s: float,
        max_size_bytes: int | None = None,
        *,
        publish: bool = True,
    ) -> RobotsState:
        """Record the outcome of fetching ``server_key``'s /robots.txt and return the new state.

        2xx → parse ``body`` (at most ``max_size_bytes``, default the cache's); any other
        positive status → allow all; a non-positive status (no response) counts a failed
        attempt and is accepted as allow-all only at the ``MIN_ROBOTS_ATTEMPTS``-th failure,
        before which the previous rules (if any) stay but are no longer valid. An accepted
        outcome goes to the share too, when one is attached.
        """
        if 200 <= status < 300:
            limit = self.robots_max_size_bytes if max_size_bytes is None else max_size_bytes
            rules: RobotsRules | None = RobotsRules.parse(body or b"", limit)
        elif status > 0:
            rules = RobotsRules.ALLOW_ALL
        else:
            rules = None
        with self._lock:
            old = self._robots.get(server_key)
            if rules is not None:
                state = RobotsState(rules, now_s, 0, status)
            else:
                failures = (old.failed_attempts if old is not None else 0) + 1
                if failures >= MIN_ROBOTS_ATTEMPTS:
                    state = RobotsState(RobotsRules.ALLOW_ALL, now_s, failures, status)
                else:
                    state = RobotsState(old.rules if old else None, None, failures, status)
            self._put(self._robots, server_key, state, self.max_servers, "servers")
            self._claims.pop("robots:" + server_key, None)
        limit = self.robots_max_size_bytes if max_size_bytes is None else max_size_bytes
        if publish and self._share is not None and state.fetched_s is not None:
            # One byte over the limit, as fetched: the parser there drops a cut last line too.
            sent = body[: limit + 1] if body is not None and 200 <= status < 300 else None
            self._share.publish(
                "robots:" + server_key,
                {
                    "t": "robots",
                    "key": server_key,
                    "status": status,
                    "now": now_s,
                    "failures": state.failed_attempts,
                    "body": base64.b64encode(sent).decode("ascii") if sent is not None else None,
                },
                self._robots_keep_s,
            )
        if self._journal is not None:
            kept = body[:limit] if body is not None and 200 <= status < 300 else None
            self._write_journal(
                {
                    "t": "robots",
                    "key": server_key,
                    "status": status,
                    "now": now_s,
                    "body": base64.b64encode(kept).decode("ascii") if kept is not None else None,
                }
            )
        return state

    def _put(
        self, table: OrderedDict[str, Any], key: str, value: Any, bound: int, kind: str
    ) -> None:
        """Set ``table[key]`` as its newest entry; past ``bound`` the oldest goes. Lock held.
        The key is never absent meanwhile: lock-free readers see the old value or the new."""
        table[key] = value
        table.move_to_end(key)
        if bound and len(table) > bound:
            table.popitem(last=False)
            if kind == "servers":
                self.evicted_servers += 1
            else:
                self.evicted_hosts += 1

    def is_robots_valid(self, server_key: str, now_s: float, validity_s: float) -> bool:
        """Whether the server's robots were accepted less than ``validity_s`` seconds ago."""
        state = self._robots.get(server_key)
        return state is not None and state.is_valid(now_s, validity_s)

    def rules(self, server_key: str) -> RobotsRules:
        """The server's current rules; ALLOW_ALL if none were accepted."""
        state = self._robots.get(server_key)
        if state is None or state.rules is None:
            return RobotsRules.ALLOW_ALL
        return state.rules

    def allowed(self, uri: str, user_agent: str, server: str | None = None) -> bool:
        """Whether robots.txt lets ``user_agent`` fetch ``uri`` (True when nothing is known).

        Pass ``server`` (the URI's server key) when already computed, to skip re-parsing.
        """
        if server is None:
            try:
                server = server_key(uri)
            except (UriError, ValueError):
                return True
        return self.rules(server).allowed(uri, user_agent)

    def crawl_delay_s(self, server_key: str, user_agent: str) -> float | None:
        """The server's robots Crawl-delay for ``user_agent``, in seconds, if any."""
        return self.rules(server_key).crawl_delay_s(user_agent)

    def sitemaps(self, server_key: str) -> list[str]:
        """Sitemap URLs declared in the server's robots.txt."""
        return list(self.rules(server_key).sitemaps)

    # ------------------------------------------------------------------- hosts
    def host_state(self, host: str) -> HostState | None:
        """What is known of ``host``'s address, if anything."""
        return self._hosts.get(host.lower())

    def update_host(
        self, host: str, ip: str | None, now_s: float, ttl_s: float, *, publish: bool = True
    ) -> None:
        """Record a lookup of ``host`` (``ip`` None: looked up, no address; ``ttl_s`` inf:
        never expires, for IP literals). A lookup goes to the share too, when one is attached
        (an IP literal needs none)."""
        with self._lock:
            self._put(
                self._hosts, host.lower(), HostState(ip, now_s, ttl_s), self.max_hosts, "hosts"
            )
            self._claims.pop("dns:" + host.lower(), None)
        entry = {
            "t": "host",
            "host": host,
            "ip": ip,
            "now": now_s,
            "ttl": None if math.isinf(ttl_s) else ttl_s,
        }
        if publish and self._share is not None and not math.isinf(ttl_s):
            self._share.publish("dns:" + host.lower(), entry, self._hosts_keep_s)
        self._write_journal(entry)

    def note_ip(self, host: str, ip: str, now_s: float) -> None:
        """Remember the address a connection to ``host`` reached, unless one is known already."""
        key = host.lower()
        if key in self._hosts:
            return
        with self._lock:
            if key not in self._hosts:
                self._put(self._hosts, key, HostState(ip, now_s, 0.0), self.max_hosts, "hosts")

    def host_ip(self, host: str) -> str | None:
        """The last known IP of ``host``."""
        state = self._hosts.get(host.lower())
        return state.ip if state is not None else None

    def server_count(self) -> int:
        """How many servers have robots state (for reports)."""
        return len(self._robots)
