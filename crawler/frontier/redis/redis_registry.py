"""CrawlRegistry: which crawls live in a Redis, their key namespaces, control state and workers.

A crawl named ``N`` that starts (``crawler run ORDER --workers``) takes the lock
``crawler:lock:N`` (``SET NX`` with a TTL the launcher keeps renewing), then a fresh id from
``crawler:next-id``: its keys all start with the namespace ``c<id>:``. So a second crawl with the
same name is refused while the first runs, and one started after it gets other keys: two crawls
never write each other's state. ``crawler:crawl:N`` (a hash) says which id is current, for
``crawler worker ORDER --redis URL`` to join.

Per crawl: ``<ns>ctl`` is the operator's wish (RUNNING, PAUSED, STOP) that every worker polls;
``<ns>workers`` maps a worker id to its last heartbeat (JSON: host, pid, state, counts, time);
``<ns>seeds`` lists the seeds that joined the running crawl (a seed's redirect, ``uri via``
lines), which every worker adds to its own scope.
Thread-safety: thread-safe (one redis-py client).
"""

from __future__ import annotations

import json
import secrets
import socket
import time
from dataclasses import dataclass
from typing import Any

from crawler.crawler_error import CrawlerError
from crawler.frontier.redis import redis_conn

LOCK_TTL_S = 15.0
HEARTBEAT_STALE_S = 30.0
CONTROL_STATES = ("RUNNING", "PAUSED", "STOP")


class CrawlRegistryError(CrawlerError, RuntimeError):
    """A crawl cannot be started or joined; ``str()`` is a message for the operator."""


@dataclass(frozen=True)
class CrawlEntry:
    """A crawl registered in Redis."""

    name: str
    crawl_id: int
    namespace: str
    state: str
    started_s: float


class CrawlRegistry:
    """Crawl names -> namespaces in one Redis (server or Cluster)."""

    def __init__(self, url: str, *, outage_timeout_s: float = 0.0) -> None:
        """Connect to ``url``; with ``outage_timeout_s`` > 0 an unreachable Redis is waited for
        that long (:func:`~crawler.frontier.redis.redis_conn.connect`)."""
        self.url = url
        self.client: Any = redis_conn.connect(url, outage_timeout_s=outage_timeout_s)
        self._token = secrets.token_hex(8)

    def close(self) -> None:
        self.client.close()

    # ------------------------------------------------------------ crawls
    def start(self, name: str) -> CrawlEntry:
        """Register a new crawl of ``name`` and take its lock; refuse if one is running."""
        lock = f"crawler:lock:{name}"
        if not self.client.set(lock, self._token, nx=True, px=int(LOCK_TTL_S * 1000)):
            current = self.find(name)
            since = (
                time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(current.started_s))
                if current
                else "?"
            )
            raise CrawlRegistryError(
                f"a crawl named {name!r} is already running on {redis_conn.redact(self.url)} "
                f"(started {since}): join it with `crawler worker ORDER --redis URL`, or give "
                "this one another name"
            )
        crawl_id = int(self.client.incr("crawler:next-id"))
        entry = CrawlEntry(name, crawl_id, f"c{crawl_id}:", "RUNNING", time.time())
        self.client.hset(
            f"crawler:crawl:{name}",
            mapping={
                "id": crawl_id,
                "namespace": entry.namespace,
                "state": entry.state,
                "started": entry.started_s,
            },
        )
        self.client.set(f"{entry.namespace}ctl", "RUNNING")
        return entry

    def keep_lock(self, name: str) -> bool:
        """Renew the lock of a crawl this registry started; False if it was lost."""
        script = (
            "if redis.call('GET', KEYS[1]) == ARGV[1] then "
            "return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end"
        )
        renewed = self.client.eval(
            script, 1, f"crawler:lock:{name}", self._token, int(LOCK_TTL_S * 1000)
        )
        return bool(renewed)

    def end(self, name: str, entry: CrawlEntry) -> None:
        """Mark ``entry`` finished and release the lock (if still ours)."""
        current = self.find(name)
        if current is not None and current.crawl_id == entry.crawl_id:
            self.client.hset(f"crawler:crawl:{name}", "state", "FINISHED")
        script = (
            "if redis.call('GET', KEYS[1]) == ARGV[1] then "
            "return redis.call('DEL', KEYS[1]) else return 0 end"
        )
        self.client.eval(script, 1, f"crawler:lock:{name}", self._token)

    def find(self, name: str) -> CrawlEntry | None:
        """The current crawl of ``name``, or None."""
        raw = {
            k.decode(): v.decode() for k, v in self.client.hgetall(f"crawler:crawl:{name}").items()
        }
        if "id" not in raw:
            return None
        return CrawlEntry(
            name, int(raw["id"]), raw["namespace"], raw.get("state", "?"), float(raw["started"])
        )

    def join(self, name: str) -> CrawlEntry:
        """The running crawl of ``name`` to join; CrawlRegistryError if there is none."""
        entry = self.find(name)
        if entry is None or entry.state == "FINISHED":
            raise CrawlRegistryError(
                f"no crawl named {name!r} is running on {redis_conn.redact(self.url)}: "
                "start it with `crawler run ORDER --workers N` first"
            )
        return entry

    # ------------------------------------------------------------ control
    def set_control(self, namespace: str, state: str) -> None:
        """Ask every worker of the crawl to run, pause or stop."""
        if state not in CONTROL_STATES:
            raise ValueError(f"unknown control state {state!r}")
        self.client.set(f"{namespace}ctl", state)

    def control(self, namespace: str) -> str:
        raw = self.client.get(f"{namespace}ctl")
        return raw.decode() if raw else "RUNNING"

    def add_seed(self, namespace: str, uri: str, via: str | None) -> None:
        """Tell every worker that ``uri`` joined the crawl's seeds."""
        self.client.rpush(f"{namespace}seeds", f"{uri} {via or '-'}")

    def seeds_since(self, namespace: str, start: int) -> list[tuple[str, str | None]]:
        """``(uri, via)`` of the added seeds from the ``start``-th on (0 = the first)."""
        out: list[tuple[str, str | None]] = []
        for raw in self.client.lrange(f"{namespace}seeds", start, -1):
            uri, _, via = raw.decode().partition(" ")
            out.append((uri, None if via in ("", "-") else via))
        return out

    def publish_sheets(self, namespace: str, document: str) -> int:
        """Make ``document`` (every sheet in force, YAML) the crawl-wide sheets; returns the
        new version, which every worker's control follower polls for."""
        pipe = self.client.pipeline(transaction=True)
        pipe.set(f"{namespace}sheets", document)
        pipe.incr(f"{namespace}sheets_version")
        return int(pipe.execute()[1])

    def sheets(self, namespace: str) -> tuple[int, str]:
        """``(version, document)`` of the crawl-wide sheets; ``(0, "")`` before any change."""
        version, document = self.client.mget([f"{namespace}sheets_version", f"{namespace}sheets"])
        return (int(version) if version else 0), (document.decode() if document else "")

    def heartbeat(self, namespace: str, worker: str, doc: dict[str, Any]) -> None:
        """Publish a worker's state (host, pid and time are added)."""
        doc = {"host": socket.gethostname(), "time": time.time()} | doc
        self.client.hset(f"{namespace}workers", worker, json.dumps(doc))

    def workers(self, namespace: str) -> dict[str, dict[str, Any]]:
        """Last heartbeat of every worker that ever joined, with ``alive`` (recent heartbeat)."""
        now = time.time()
        out: dict[str, dict[str, Any]] = {}
        for wid, raw in sorted(self.client.hgetall(f"{namespace}workers").items()):
            doc = json.loads(raw)
            doc["alive"] = now - float(doc.get("time", 0)) < HEARTBEAT_STALE_S and doc.get(
                "state"
            ) not in ("FINISHED", "DIED")
            out[wid.decode()] = doc
        return out
