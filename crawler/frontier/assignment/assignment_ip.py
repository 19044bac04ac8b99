"""IPQueueAssignmentPolicy: one queue per server IP address once it is known.

Several host names served by one machine then share one politeness queue. The IP comes from, in
order: the host itself when it is an IP literal; ``curi.ip_address`` when the URI was already
fetched (a retry, a re-queued URI); the crawl's server cache bound with :meth:`bind_servers`
(``ServerCache.host_ip``, filled by the DNS fetcher). Until then the URI gets the hostname key
(``host``, ``host#port``), as in Heritrix, so the first URIs of a host (its ``dns:`` and
``robots.txt`` prerequisites above all) queue under the name. The IP key has no port.

Heritrix counterpart: ``IPQueueAssignmentPolicy`` (there URIs queued under the name migrate to
the IP queue when re-peeked; here they stay where they were queued).
Reads ``uri``, ``via``, ``hop_path``, ``ip_address``. Thread-safe: the bound cache is only read.
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

if TYPE_CHECKING:
    from crawler.curi import CrawlURI
    from crawler.frontier.assignment.assignment_base import HostIpSource


class IPQueueAssignmentPolicy(AuthorityQueueAssignmentPolicy[AuthorityPolicyParams]):
    """IP address (``10.0.0.7``, ``[2001:db8::1]``) once known, else the hostname key."""

    def __init__(self, params: AuthorityPolicyParams | None = None) -> None:
        super().__init__(params)
        self._servers: HostIpSource | None = None

    def bind_servers(self, servers: HostIpSource) -> None:
        self._servers = servers

    def authority_key(self, scheme: str, authority: str, curi: CrawlURI) -> str:
        host, _ = split_port(authority)
        if is_ip_literal(host):
            return host
        ip = curi.ip_address if curi.uri == self.basis(curi) else None
        if not ip and self._servers is not None:
            ip = self._servers.host_ip(host)
        if ip:
            return f"[{ip}]" if ":" in ip and not ip.startswith("[") else ip
        return hostname_key(scheme, authority)
