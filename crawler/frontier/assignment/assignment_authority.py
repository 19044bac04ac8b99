"""The two plain authority policies: HostnameQueueAssignmentPolicy (Heritrix 1's default) and
SurtAuthorityQueueAssignmentPolicy (Heritrix 3's default); see :mod:`crawler.frontier.assignment`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawler.frontier.assignment.assignment_base import (
    AuthorityPolicyParams,
    AuthorityQueueAssignmentPolicy,
    hostname_key,
    is_ip_literal,
    split_port,
)
from crawler.frontier.assignment.assignment_domain import surt_host

if TYPE_CHECKING:
    from crawler.curi import CrawlURI


class HostnameQueueAssignmentPolicy(AuthorityQueueAssignmentPolicy[AuthorityPolicyParams]):
    """``host``, ``host#port``, https without a port ``host#443``; ``dns:host`` → ``host``.

    Reads ``uri``, ``via``, ``hop_path``. Thread-safe (its one mutable state is the memo of keys
    by authority, see :class:`AuthorityQueueAssignmentPolicy`).
    """

    keys_by_authority = True

    def authority_key(self, scheme: str, authority: str, curi: CrawlURI) -> str:
        return hostname_key(scheme, authority)


class SurtAuthorityQueueAssignmentPolicy(AuthorityQueueAssignmentPolicy[AuthorityPolicyParams]):
    """SURT authority: ``www.example.org`` → ``org,example,www,``; port as ``#8080``.

    IP addresses are not reversed. http and https of the same host share a queue.
    Reads ``uri``, ``via``, ``hop_path``. Thread-safe (its one mutable state is the memo of keys
    by authority, see :class:`AuthorityQueueAssignmentPolicy`).
    """

    keys_by_authority = True

    def authority_key(self, scheme: str, authority: str, curi: CrawlURI) -> str:
        host, port = split_port(authority)
        surt = host if is_ip_literal(host) else surt_host(host)
        return f"{surt}#{port}" if port else surt
