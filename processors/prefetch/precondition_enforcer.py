"""PreconditionEnforcer: make sure a server's robots.txt is known, and obeyed, before a fetch.

For http(s) URIs under ``robots.policy: obey``: a server's ``/robots.txt`` itself always
proceeds; any other URI of a server whose robots are not valid (never fetched, a failed fetch
not yet accepted, or older than ``robots.validity_s``) gets the robots URI as its prerequisite
and is deferred (-50), to be retried once the robots fetch is done — the prerequisite shares the
URI's queue and, one directive more urgent, is fetched first. A URI the valid rules disallow
gets -9998 (or only the ``robotExcluded`` annotation with ``calculate_robots_only``).

Reads ``curi.uri``, ``curi.directive``; writes ``curi.status``, ``curi.prerequisite``,
``curi.annotations``. Stateless (the robots state lives in ``ctx.servers``, which is
thread-safe). Heritrix counterpart: ``org.archive.crawler.prefetch.PreconditionEnforcer``
(robots part; dns: prerequisites are not done here yet).
"""

from __future__ import annotations

from pydantic import Field

from crawler import CrawlURI, FetchStatus, Hop, Params, Processor, ProcessorContext, ProcessResult
from crawler.robots import ROBOTS_PATH, is_robots_uri
from crawler.urls import UriError, scheme_authority, server_key
from processors.fetch.user_agent import user_agent


class PreconditionEnforcerParams(Params):
    """Parameters of :class:`PreconditionEnforcer`."""

    calculate_robots_only: bool = Field(
        False,
        description="fetch URIs robots.txt disallows anyway, only annotating them "
        "'robotExcluded' (for studying robots use; not polite)",
    )


class PreconditionEnforcer(Processor[PreconditionEnforcerParams]):
    """Schedules robots.txt prerequisites and enforces robots.txt rules."""

    def start(self, ctx: ProcessorContext) -> None:
        super().start(ctx)
        self._user_agent = user_agent(ctx.order)

    def should_process(self, curi: CrawlURI) -> bool:
        uri = curi.uri
        return uri[:7].lower() == "http://" or uri[:8].lower() == "https://"

    def inner_process(self, curi: CrawlURI) -> ProcessResult | None:
        ctx = self.context
        robots = ctx.order.robots
        if robots.policy != "obey":
            return None
        uri = curi.uri
        try:
            server = server_key(uri)
            authority = scheme_authority(uri)
        except (UriError, ValueError):
            curi.status = FetchStatus.UNFETCHABLE_URI
            return ProcessResult.SKIP_TO_POST
        if is_robots_uri(uri):
            return None
        servers = ctx.servers
        if not servers.is_robots_valid(server, ctx.clock.time(), robots.validity_s):
            prereq = curi.create_child(authority + ROBOTS_PATH, Hop.PREREQ)
            prereq.force_fetch = True
            prereq.directive = max(0, curi.directive - 1)
            curi.prerequisite = prereq
            curi.status = FetchStatus.DEFERRED
            return ProcessResult.SKIP_TO_POST
        if not servers.allowed(uri, self._user_agent, server):
            if self.params.calculate_robots_only:
                curi.annotate("robotExcluded")
                return None
            curi.status = FetchStatus.ROBOTS_PRECLUDED
            return ProcessResult.SKIP_TO_POST
        return None
