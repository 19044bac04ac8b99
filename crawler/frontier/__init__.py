"""The frontier: work queues, queue stores, queue-assignment policies and politeness.

See :mod:`crawler.frontier.workqueue_frontier` for the model and :mod:`crawler.frontier.frontier`
for the protocol the rest of the crawler uses. Packages by concept: ``store`` (queue stores and
the structures over them, crash recovery), ``intake`` (how a URI joins a queue), ``rotation``
(which queue next, a queue given back), ``politeness`` (delays, the server gate and pace),
``retry``, ``assignment`` (queue-assignment policies), ``policy`` (the decisions every store
calls) and ``redis`` (the shared frontier). The names below are the public API; orders name
them by dotted path (``crawler.frontier.LevelDBQueueStore``).
"""

from typing import Any

from crawler.frontier.assignment import (
    AssignmentLevelSurtQueueAssignmentPolicy,
    AuthorityPolicyParams,
    HashQueueAssignmentPolicy,
    HashQueueAssignmentPolicyParams,
    HostnameQueueAssignmentPolicy,
    IPQueueAssignmentPolicy,
    QueueAssignmentPolicy,
    SurtAuthorityQueueAssignmentPolicy,
)
from crawler.frontier.frontier import FrontierStateError
from crawler.frontier.frontier_report import frontier_summary_report
from crawler.frontier.politeness.inline_gate import InlinePass, InlineVisit
from crawler.frontier.politeness.politeness import (
    BACKOFF_MS_KEY,
    SERVER_HOLD_MS_KEY,
    bandwidth_delay_ms,
    politeness_delay_ms,
    retry_after_s,
)
from crawler.frontier.politeness.server_gate import ServerGate
from crawler.frontier.politeness.server_pace import PaceState, ServerPace
from crawler.frontier.retry.retry_policy import RetryPolicy, note_protocol_error
from crawler.frontier.store.leveldb_store import LevelDBQueueStore
from crawler.frontier.store.memory_store import MemoryQueueStore
from crawler.frontier.store.queue_store import QueueStore, StoreBatch, sort_key
from crawler.frontier.workqueue_frontier import WorkQueueFrontier

__all__ = [
    "BACKOFF_MS_KEY",
    "SERVER_HOLD_MS_KEY",
    "AssignmentLevelSurtQueueAssignmentPolicy",
    "AuthorityPolicyParams",
    "FrontierStateError",
    "HashQueueAssignmentPolicy",
    "HashQueueAssignmentPolicyParams",
    "HostnameQueueAssignmentPolicy",
    "IPQueueAssignmentPolicy",
    "InlinePass",
    "InlineVisit",
    "LevelDBQueueStore",
    "MemoryQueueStore",
    "PaceState",
    "QueueAssignmentPolicy",
    "QueueStore",
    "RedisFrontier",
    "RedisQueueStore",
    "RetryPolicy",
    "ServerGate",
    "ServerPace",
    "StoreBatch",
    "SurtAuthorityQueueAssignmentPolicy",
    "WorkQueueFrontier",
    "bandwidth_delay_ms",
    "frontier_summary_report",
    "note_protocol_error",
    "politeness_delay_ms",
    "retry_after_s",
    "sort_key",
]


_REDIS_HOMES = {
    "RedisQueueStore": "crawler.frontier.redis.redis_store",
    "RedisFrontier": "crawler.frontier.redis.redis_frontier",
}


def __getattr__(name: str) -> Any:
    """The Redis store and frontier (names an order may give) load on first use: they import
    the redis client, which most crawls never need."""
    home = _REDIS_HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(home), name)
