"""The frontier: work queues, queue stores, queue-assignment policies and politeness.

See :mod:`crawler.frontier.workqueue_frontier` for the model and :mod:`crawler.frontier.frontier`
for the protocol the rest of the crawler uses.
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
from crawler.frontier.frontier import Frontier, FrontierSnapshot, FrontierStateError
from crawler.frontier.frontier_report import QueueDetail, frontier_summary_report
from crawler.frontier.inline_gate import InlineGate, InlinePass, InlineVisit
from crawler.frontier.leveldb_store import LevelDBQueueStore, LevelDBQueueStoreParams
from crawler.frontier.memory_store import MemoryQueueStore
from crawler.frontier.politeness import (
    BACKOFF_MS_KEY,
    SERVER_HOLD_MS_KEY,
    bandwidth_delay_ms,
    politeness_delay_ms,
    retry_after_s,
)
from crawler.frontier.queue_store import QueueStore, QueueStoreBase, StoreBatch, sort_key
from crawler.frontier.retry_policy import RetryPolicy, note_protocol_error
from crawler.frontier.retry_watch import RetriesWaiting, RetryNote, RetryWatch
from crawler.frontier.server_gate import ServerGate
from crawler.frontier.server_pace import PaceState, ServerPace
from crawler.frontier.workqueue_frontier import WorkQueueFrontier

__all__ = [
    "BACKOFF_MS_KEY",
    "SERVER_HOLD_MS_KEY",
    "AssignmentLevelSurtQueueAssignmentPolicy",
    "AuthorityPolicyParams",
    "Frontier",
    "FrontierSnapshot",
    "FrontierStateError",
    "HashQueueAssignmentPolicy",
    "HashQueueAssignmentPolicyParams",
    "HostnameQueueAssignmentPolicy",
    "IPQueueAssignmentPolicy",
    "InlineGate",
    "InlinePass",
    "InlineVisit",
    "LevelDBQueueStore",
    "LevelDBQueueStoreParams",
    "MemoryQueueStore",
    "PaceState",
    "QueueAssignmentPolicy",
    "QueueDetail",
    "QueueStore",
    "QueueStoreBase",
    "RedisQueueStore",
    "RedisQueueStoreParams",
    "RetriesWaiting",
    "RetryNote",
    "RetryPolicy",
    "RetryWatch",
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


def __getattr__(name: str) -> Any:
    """The Redis store loads on first use: it imports the redis client (most crawls never do)."""
    if name in ("RedisQueueStore", "RedisQueueStoreParams"):
        import importlib

        return getattr(importlib.import_module("crawler.frontier.redis.redis_store"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
