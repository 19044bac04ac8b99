"""Queue-assignment policies: which work queue a CrawlURI joins (its politeness unit).

Select one in the order with ``frontier.queue_assignment: {class: ..., params: {...}}``; any
subclass of :class:`QueueAssignmentPolicy` named by dotted path works. The built-in ones:

* :class:`HostnameQueueAssignmentPolicy` — ``host``, ``host#port``; https without a port gets
  ``#443``; ``dns:host`` keys by host (Heritrix 1's default).
* :class:`SurtAuthorityQueueAssignmentPolicy` — reversed host labels, ``org,example,www,``
  (``#port`` appended), so http and https of a host share a queue (Heritrix 3's default).
* :class:`AssignmentLevelSurtQueueAssignmentPolicy` — one queue per registrable domain from the
  bundled public suffix list: ``uk,co,example,`` for every host of ``example.co.uk``.
* :class:`IPQueueAssignmentPolicy` — the server's IP once known, else the hostname key.
* :class:`HashQueueAssignmentPolicy` — ``<function>-<n>``: ELF, BKDR, SDBM or murmur3 hash of the
  whole URI modulo ``buckets``, spreading one big site over many queues (with one queue per host, a
  single-site crawl fetches one URI at a time however many threads it has).

The four authority policies take ``parallel_queues`` N > 1: a host is split into N queues by a
consistent (jump) hash of the first path segment (only when another ``/`` follows it; else
sub-queue 0, which keeps the plain key); sub-queue k > 0 appends ``+k``. Spreading a site over
many queues multiplies the load on it; the frontier's server cap
(``frontier.politeness.host_max_connections``) bounds it whatever the policy.

Heritrix counterparts: ``engine/.../frontier/*QueueAssignmentPolicy.java``.
"""

from __future__ import annotations

from crawler.frontier.assignment.assignment_authority import (
    HostnameQueueAssignmentPolicy,
    SurtAuthorityQueueAssignmentPolicy,
)
from crawler.frontier.assignment.assignment_base import (
    DEFAULT_KEY,
    WHOIS_KEY,
    AuthorityPolicyParams,
    AuthorityQueueAssignmentPolicy,
    HostIpSource,
    QueueAssignmentPolicy,
    hostname_key,
    jump_hash,
    split_authority,
    split_port,
)
from crawler.frontier.assignment.assignment_domain import (
    AssignmentLevelSurtQueueAssignmentPolicy,
    AssignmentLevelSurtQueueAssignmentPolicyParams,
    registrable_domain,
    surt_host,
)
from crawler.frontier.assignment.assignment_hash import (
    STRING_HASHES,
    HashQueueAssignmentPolicy,
    HashQueueAssignmentPolicyParams,
    bkdr_hash,
    elf_hash,
    murmur3_hash,
    sdbm_hash,
)
from crawler.frontier.assignment.assignment_ip import IPQueueAssignmentPolicy

__all__ = [
    "DEFAULT_KEY",
    "STRING_HASHES",
    "WHOIS_KEY",
    "AssignmentLevelSurtQueueAssignmentPolicy",
    "AssignmentLevelSurtQueueAssignmentPolicyParams",
    "AuthorityPolicyParams",
    "AuthorityQueueAssignmentPolicy",
    "HashQueueAssignmentPolicy",
    "HashQueueAssignmentPolicyParams",
    "HostIpSource",
    "HostnameQueueAssignmentPolicy",
    "IPQueueAssignmentPolicy",
    "QueueAssignmentPolicy",
    "SurtAuthorityQueueAssignmentPolicy",
    "bkdr_hash",
    "elf_hash",
    "hostname_key",
    "jump_hash",
    "murmur3_hash",
    "registrable_domain",
    "sdbm_hash",
    "split_authority",
    "split_port",
    "surt_host",
]
