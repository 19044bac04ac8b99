"""QuotaEnforcer: no more fetches from a host or a registrable domain past its URI or byte quota.

Before a URI is fetched, the successes (status > 0, as Heritrix counts them) already recorded for
its host and for its registrable domain are compared with the quotas; a URI whose host or
domain has reached one gets status -5003 (BLOCKED_BY_QUOTA), the annotation ``Q:<quota>``
(``Q:host_max_urls``, ``Q:domain_max_bytes`` …) and skips to the post chain, so it is never
fetched. 0 means no quota; with every quota at 0 the processor does nothing.

* the *host* is the URI's host with a non-default port, as hosts-report.txt names it;
* the *domain* is the registrable domain (eTLD+1: ``news.example.co.uk`` → ``example.co.uk``) from
  the Public Suffix List bundled in the ``publicsuffixlist`` package, read offline; an IP
  address, ``localhost`` or a public suffix itself is its own domain.

The tallies are the crawl statistics' (:class:`crawler.stats.CrawlStats`, fed by every final
disposition and rebuilt from crawl.log on ``crawler resume``), so the quotas hold across a
resume; per-domain tallies are kept only while a domain quota is set. Quotas are checked
before the fetch: a byte quota is passed by at most the URIs of that host or domain in flight
when it is reached, a URI quota by at most those in flight (none with one queue per host).
Prerequisites (dns:, robots.txt) are never blocked. Sheets may set any quota for some hosts
(``chains.pre.quota_enforcer.params.host_max_urls`` …): the URI's own quotas are checked.
In a crawl scaled out over several workers (``--workers``, a Redis frontier) the tallies are
the crawl's shared ones (:class:`~crawler.tally.redis_tally_store.RedisTallyStore`, given as
``ctx.tallies``; :meth:`crawler.stats.CrawlStats.share_tallies`): every worker counts its
successes there and reads them there, so a quota holds crawl-wide (a host's queue is served by
one worker at a time, so N URIs pass, not N per worker) and outlives a worker's death. Cost per
URI checked: one Redis round trip before the fetch (host and domain read together), one more
when it succeeds (its counts added); none while no quota is set.

Reads ``uri`` and ``hop_path``; writes ``status`` and ``annotations`` of a blocked URI.
Thread-safe: the statistics have their own lock; the report counters one of their own.
Heritrix counterpart: ``org.archive.crawler.prefetch.QuotaEnforcer`` (its host and group
successes and success-bytes quotas).
"""

from __future__ import annotations

import threading
from collections import Counter
from functools import lru_cache

from pydantic import Field

from crawler.curi import CrawlURI, FetchStatus, Hop
from crawler.decide.decide_rule import DecideRuleSequence
from crawler.frontier.assignment.assignment_base import split_port
from crawler.frontier.assignment.assignment_domain import registrable_domain
from crawler.params import Params
from crawler.processor import Processor, ProcessorContext, ProcessResult
from crawler.stats import host_of
from crawler.tally import Tally


class QuotaEnforcerParams(Params):
    """Parameters of :class:`QuotaEnforcer`; 0 = no quota."""

    host_max_urls: int = Field(0, ge=0, description="successful fetches per host; 0 = no quota")
    host_max_bytes: int = Field(
        0, ge=0, description="bytes of successful fetches per host; 0 = no quota"
    )
    domain_max_urls: int = Field(
        0, ge=0, description="successful fetches per registrable domain (eTLD+1); 0 = no quota"
    )
    domain_max_bytes: int = Field(
        0, ge=0, description="bytes of successful fetches per registrable domain; 0 = no quota"
    )


@lru_cache(maxsize=65_536)
def domain_of_host(host: str) -> str:
    """The registrable domain of a statistics host (``a.example.co.uk:8080`` →
    ``example.co.uk``); the host without its port when it has none (IP, ``localhost``)."""
    name = split_port(host)[0]
    return registrable_domain(name) or name


def over_quota(p: QuotaEnforcerParams, host: Tally, domain: Tally) -> str | None:
    """The quota rule, whatever keeps the tallies: the name of the first quota of ``p`` that the
    successes ``host`` and ``domain`` (count, bytes) have reached, or None."""
    if p.host_max_urls and host[0] >= p.host_max_urls:
        return "host_max_urls"
    if p.host_max_bytes and host[1] >= p.host_max_bytes:
        return "host_max_bytes"
    if p.domain_max_urls and domain[0] >= p.domain_max_urls:
        return "domain_max_urls"
    if p.domain_max_bytes and domain[1] >= p.domain_max_bytes:
        return "domain_max_bytes"
    return None


class QuotaEnforcer(Processor[QuotaEnforcerParams]):
    """Blocks URIs of hosts and domains over quota with -5003 (see the module docstring)."""

    sheet_params = frozenset(
        {"host_max_urls", "host_max_bytes", "domain_max_urls", "domain_max_bytes"}
    )

    def __init__(
        self,
        name: str,
        params: QuotaEnforcerParams | None = None,
        *,
        enabled: bool = True,
        should_process_rule: DecideRuleSequence | None = None,
    ) -> None:
        super().__init__(name, params, enabled=enabled, should_process_rule=should_process_rule)
        p = self.params
        self._host_quotas = p.host_max_urls > 0 or p.host_max_bytes > 0
        self._domain_quotas = p.domain_max_urls > 0 or p.domain_max_bytes > 0
        self._lock = threading.Lock()
        self._blocked: Counter[str] = Counter()

    def start(self, ctx: ProcessorContext) -> None:
        super().start(ctx)
        # Domain tallies are kept only when some quota needs them: the order's, or a sheet's
        # known at start (a domain quota in a sheet added later counts from then on).
        if not self._domain_quotas and ctx.sheets is not None:
            self._domain_quotas = any(
                key.startswith("domain_max_") and value
                for overrides in ctx.sheets.processor_overrides(self.name)
                for key, value in overrides.items()
            )
        if self._domain_quotas:
            ctx.stats.track_domains(domain_of_host)
        sheets = ctx.sheets
        if ctx.tallies is not None and (
            self._host_quotas or self._domain_quotas or (sheets is not None and sheets.active)
        ):
            ctx.stats.share_tallies(ctx.tallies)

    def should_process(self, curi: CrawlURI) -> bool:
        sheets = self._sheets
        return (
            self._host_quotas or self._domain_quotas or (sheets is not None and sheets.active)
        ) and not (curi.hop_path[-1:] == Hop.PREREQ or curi.uri.startswith("dns:"))

    def inner_process(self, curi: CrawlURI) -> ProcessResult | None:
        quota = self._over_quota(curi.uri, self.params_for(curi))
        if quota is None:
            return None
        curi.status = FetchStatus.BLOCKED_BY_QUOTA
        curi.annotate("Q:" + quota)
        with self._lock:
            self._blocked[quota] += 1
        return ProcessResult.SKIP_TO_POST

    def _over_quota(self, uri: str, p: QuotaEnforcerParams) -> str | None:
        """The name of the first quota of ``p`` ``uri``'s host or domain has reached, or None."""
        host_quota = p.host_max_urls or p.host_max_bytes
        domain_quota = (p.domain_max_urls or p.domain_max_bytes) and self._domain_quotas
        if not (host_quota or domain_quota):
            return None
        host = host_of(uri)
        host_tally, domain_tally = self.context.stats.success_tallies(
            host, domain_of_host(host) if domain_quota else None
        )
        return over_quota(p, host_tally, domain_tally)

    def report(self) -> list[str]:
        lines = super().report()
        with self._lock:
            blocked = dict(self._blocked)
        total = sum(blocked.values())
        detail = ", ".join(f"{name} {count}" for name, count in sorted(blocked.items()))
        lines.append(f"  URIs over quota (-5003): {total}" + (f" ({detail})" if detail else ""))
        return lines
