"""PreconditionEnforcer: a host's address and a server's robots.txt are known, and obeyed, first.

For http(s) URIs, in Heritrix's order:

1. DNS (when ``dns_prerequisites`` and an enabled FetchDNS set ``ServerCache.resolver_active``):
   a host never looked up, or looked up more than ``max(ip_validity_s, TTL)`` ago, gets
   ``dns:<host>`` as its prerequisite and the URI is deferred (-50); a host looked up without an
   address gets -6 until its lookup expires. IP-literal hosts need no lookup.
2. The address (with ``ctx.addresses``): a host whose address is known — an IP literal, or the
   IP FetchDNS looked up — and not one the crawl may reach (:mod:`crawler.netguard`) gets -5006,
   annotated ``nonPublicAddress:<reason>:<address>``, before its robots.txt is asked for.
   (FetchHTTP checks again the address it connects to.)
3. robots.txt (under ``robots.policy: obey``): a server's ``/robots.txt`` itself always proceeds;
   any other URI of a server whose robots are not valid (never fetched, a failed fetch not yet
   accepted, or older than ``robots.validity_s``) gets the robots URI as its prerequisite and is
   deferred (-50). A URI the valid rules disallow gets -9998 (or only the ``robotExcluded``
   annotation with ``calculate_robots_only``).

Before it schedules a dns: or robots.txt prerequisite, it asks the crawl's other workers' share
(``ServerCache.adopt_shared``; only in a ``--workers`` crawl, one round trip for the host's and
its server's facts): what another worker learnt is used as if learnt here.

A prerequisite (hop ``P``, force-fetch) shares the URI's queue and, one directive more urgent,
is fetched first; the deferred URI is retried after it. A deferral costs the URI no fetch
attempt (the frontier's RetryPolicy counts it against ``frontier.retries.max_deferrals``).

Reads ``curi.uri``, ``curi.directive``; writes ``curi.status``, ``curi.prerequisite``,
``curi.annotations``. Stateless (host and robots state live in ``ctx.servers``, which is
thread-safe). Heritrix counterpart: ``org.archive.crawler.prefetch.PreconditionEnforcer``.
"""

from __future__ import annotations

import ipaddress

from pydantic import Field

from crawler import CrawlURI, FetchStatus, Hop, Params, Processor, ProcessorContext, ProcessResult
from crawler.robots import ROBOTS_PATH, RobotsRules, is_robots_uri
from crawler.servers import RobotsState
from crawler.urls import UriError, host_port, scheme_authority
from processors.fetch.user_agent import user_agent

PREREQUISITE_POLL_S = 1.0
"""How soon a URI waiting for another queue's prerequisite is tried again."""


class PreconditionEnforcerParams(Params):
    """Parameters of :class:`PreconditionEnforcer`."""

    dns_prerequisites: bool = Field(
        True,
        description="look a host up (a dns: prerequisite) before its first fetch; needs an "
        "enabled FetchDNS in the fetch chain, without one names are resolved at connect time",
    )
    ip_validity_s: float = Field(
        21600, ge=0, description="seconds a host's looked-up IP is trusted; 0 = for the whole crawl"
    )
    prerequisite_wait_s: float = Field(
        120,
        gt=0,
        description="while one queue fetches a server's robots.txt (or a host's dns:), URIs "
        "of that server in other queues wait for it this long before scheduling their own",
    )
    calculate_robots_only: bool = Field(
        False,
        description="fetch URIs robots.txt disallows anyway, only annotating them "
        "'robotExcluded' (for studying robots use; not polite)",
    )


class PreconditionEnforcer(Processor[PreconditionEnforcerParams]):
    """Schedules dns: and robots.txt prerequisites and enforces robots.txt rules."""

    def start(self, ctx: ProcessorContext) -> None:
        super().start(ctx)
        self._user_agent = user_agent(ctx.order)

    def should_process(self, curi: CrawlURI) -> bool:
        uri = curi.uri
        return uri[:7].lower() == "http://" or uri[:8].lower() == "https://"

    def inner_process(self, curi: CrawlURI) -> ProcessResult | None:
        ctx = self.context
        uri = curi.uri
        try:
            host, port = host_port(uri)
        except (UriError, ValueError):
            curi.status = FetchStatus.UNFETCHABLE_URI
            return ProcessResult.SKIP_TO_POST
        servers = ctx.servers
        server = f"{host}:{port}"
        asked_robots = False
        if self.params.dns_prerequisites and servers.resolver_active and not _is_ip_literal(host):
            state = servers.host_state(host)
            if state is None or state.is_expired(ctx.clock.time(), self.params.ip_validity_s):
                # Another worker of the crawl may know the host (and its server's robots).
                keys = ["dns:" + host.lower(), "robots:" + server]
                asked_robots = True
                if servers.adopt_shared(keys):
                    state = servers.host_state(host)
            if state is None or state.is_expired(ctx.clock.time(), self.params.ip_validity_s):
                return self._defer(ctx, curi, "dns:" + host, "dns:" + host.lower())
            if state.ip is None:
                curi.status = FetchStatus.DOMAIN_PREREQUISITE_FAILURE
                return ProcessResult.SKIP_TO_POST
        policy = ctx.addresses
        if policy is not None:
            note = policy.known_refusal(host, port, servers)
            if note is not None:
                curi.status = FetchStatus.BLOCKED_BY_ADDRESS
                curi.annotate(note)
                return ProcessResult.SKIP_TO_POST
        robots = ctx.order.robots
        if robots.policy != "obey" or is_robots_uri(uri):
            return None
        # One read of the server's robots state: the cache may drop it meanwhile (a bounded map).
        rules = _valid_rules(servers.robots_state(server), ctx.clock.time(), robots.validity_s)
        if rules is None:
            if not asked_robots and servers.adopt_shared(["robots:" + server]):
                shared = servers.robots_state(server)
                rules = _valid_rules(shared, ctx.clock.time(), robots.validity_s)
            if rules is None:
                return self._defer(
                    ctx, curi, scheme_authority(uri) + ROBOTS_PATH, "robots:" + server
                )
        if not rules.allowed(uri, self._user_agent):
            if self.params.calculate_robots_only:
                curi.annotate("robotExcluded")
                return None
            curi.status = FetchStatus.ROBOTS_PRECLUDED
            return ProcessResult.SKIP_TO_POST
        return None

    def _defer(
        self, ctx: ProcessorContext, curi: CrawlURI, prerequisite_uri: str, claim: str
    ) -> ProcessResult:
        curi.status = FetchStatus.DEFERRED
        if not ctx.servers.claim_prerequisite(
            claim, ctx.clock.time(), self.params.prerequisite_wait_s
        ):
            # Another queue of this server is fetching the same prerequisite: wait for it
            # instead of fetching it twice. Without a prerequisite of its own this is neither
            # an attempt nor a deferral (crawler.frontier.retry.retry_policy).
            curi.retry_delay_s = PREREQUISITE_POLL_S
            return ProcessResult.SKIP_TO_POST
        prereq = curi.create_child(prerequisite_uri, Hop.PREREQ)
        prereq.force_fetch = True
        prereq.directive = max(0, curi.directive - 1)
        curi.prerequisite = prereq
        return ProcessResult.SKIP_TO_POST


def _valid_rules(state: RobotsState | None, now_s: float, validity_s: float) -> RobotsRules | None:
    """The state's rules while they are valid, else None."""
    if state is None or state.rules is None or not state.is_valid(now_s, validity_s):
        return None
    return state.rules


def _is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True
