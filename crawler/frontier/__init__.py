"""The frontier: work queues, queue stores, queue-assignment policies and politeness.

See :mod:`crawler.frontier.workqueue_frontier` for the model and :mod:`crawler.frontier.frontier`
for the protocol the rest of the crawler uses.
"""

from crawler.frontier.assignment import (
    AuthorityPolicyParams,
    HashQueueAssignmentPolicy,
    HashQueueAssignmentPolicyParams,
    HostnameQueueAssignmentPolicy,
    QueueAssignmentPolicy,
    SurtAuthorityQueueAssignmentPolicy,
)
from crawler.frontier.frontier import Frontier, FrontierSnapshot
from crawler.frontier.leveldb_store import LevelDBQueueStore, LevelDBQueueStoreParams
from crawler.frontier.memory_store import MemoryQueueStore
from crawler.frontier.politeness import bandwidth_delay_ms, politeness_delay_ms
from crawler.frontier.queue_store import QueueStore, QueueStoreBase, StoreBatch, sort_key
from crawler.frontier.workqueue_frontier import WorkQueueFrontier

__all__ = [
    "AuthorityPolicyParams",
    "Frontier",
    "FrontierSnapshot",
    "HashQueueAssignmentPolicy",
    "HashQueueAssignmentPolicyParams",
    "HostnameQueueAssignmentPolicy",
    "LevelDBQueueStore",
    "LevelDBQueueStoreParams",
    "MemoryQueueStore",
    "QueueAssignmentPolicy",
    "QueueStore",
    "QueueStoreBase",
    "StoreBatch",
    "SurtAuthorityQueueAssignmentPolicy",
    "WorkQueueFrontier",
    "bandwidth_delay_ms",
    "politeness_delay_ms",
    "sort_key",
]
