"""AssignmentLevelSurtQueueAssignmentPolicy: one queue per registrable domain.

The SURT authority reduced to the "assignment level" domain, the one a registrar hands out, found
with the public suffix list shipped in the ``publicsuffixlist`` package (no network):
``www.example.co.uk``, ``img.example.co.uk:8080`` → ``uk,co,example,``. As in Heritrix the port
of a reduced domain is dropped (one queue for all servers of the domain); a host that is itself a
public suffix or has a single label (``localhost``) keeps its whole SURT authority with
``#port``, and an IP address is kept as is (``10.0.0.1#8080``), like
:class:`~crawler.frontier.assignment.SurtAuthorityQueueAssignmentPolicy`. Unknown top-level
domains count as public suffixes (``x.a.test`` → ``test,a,``).

Heritrix counterpart: ``AssignmentLevelSurtQueueAssignmentPolicy`` (H3),
``TopmostAssignedSurtQueueAssignmentPolicy`` (H1), over ``PublicSuffixes``.
Thread-safe: the list is loaded once, on first use (not in the constructor: no I/O there).
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import TYPE_CHECKING

from publicsuffixlist import PublicSuffixList
from pydantic import Field

from crawler.frontier.assignment.assignment_base import (
    AuthorityPolicyParams,
    AuthorityQueueAssignmentPolicy,
    is_ip_literal,
    split_port,
)

if TYPE_CHECKING:
    from crawler.curi import CrawlURI

_PSL: dict[bool, PublicSuffixList] = {}
_PSL_LOCK = threading.Lock()


def public_suffix_list(only_icann: bool = False) -> PublicSuffixList:
    """The bundled public suffix list, parsed once per process (~50 ms)."""
    psl = _PSL.get(only_icann)
    if psl is None:
        with _PSL_LOCK:
            psl = _PSL.get(only_icann)
            if psl is None:
                psl = _PSL[only_icann] = PublicSuffixList(only_icann=only_icann)
    return psl


def surt_host(host: str) -> str:
    """``www.example.org`` → ``org,example,www,``."""
    return ",".join(reversed(host.split("."))) + ","


@lru_cache(maxsize=65_536)
def registrable_domain(host: str, only_icann: bool = False) -> str | None:
    """The registrable domain of a lower-case ``host`` (``a.b.example.co.uk`` →
    ``example.co.uk``); None for an IP, a public suffix itself or a single label."""
    if not host or is_ip_literal(host) or "." not in host.strip("."):
        return None
    try:
        domain = public_suffix_list(only_icann).privatesuffix(host.rstrip("."))
    except (ValueError, UnicodeError):
        return None
    return domain if isinstance(domain, str) else None


class AssignmentLevelSurtQueueAssignmentPolicyParams(AuthorityPolicyParams):
    """Parameters of :class:`AssignmentLevelSurtQueueAssignmentPolicy`."""

    only_icann: bool = Field(
        False,
        description="use only the ICANN section of the list: private suffixes such as "
        "blogspot.com then do not split their users' sites into separate queues",
    )


class AssignmentLevelSurtQueueAssignmentPolicy(
    AuthorityQueueAssignmentPolicy[AssignmentLevelSurtQueueAssignmentPolicyParams]
):
    """``uk,co,example,`` for every host of ``example.co.uk``: politeness per registrable domain.

    Reads ``uri``, ``via``, ``hop_path``. Accepts ``parallel_queues`` like every authority policy.
    """

    keys_by_authority = True

    def authority_key(self, scheme: str, authority: str, curi: CrawlURI) -> str:
        host, port = split_port(authority)
        domain = registrable_domain(host, self.params.only_icann)
        if domain is not None:
            return surt_host(domain)
        surt = host if is_ip_literal(host) else surt_host(host)
        return f"{surt}#{port}" if port else surt
