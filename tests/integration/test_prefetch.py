"""Preselector and PreconditionEnforcer, with the robots.txt prerequisite flow over real HTTP."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest
from pydantic import ValidationError
from support.processor_context import make_context
from support.robots_site import RobotsSite, robots_site

from crawler import (
    CrawlURI,
    DecideResult,
    DecideRule,
    DecideRuleSequence,
    ManualClock,
    Params,
    ProcessorChain,
    ProcessorChains,
    ProcessorContext,
    ProcessResult,
)
from crawler.order.schema import RobotsConfig
from crawler.servers import ServerCache
from processors.fetch import FetchHTTP
from processors.prefetch import (
    PreconditionEnforcer,
    PreconditionEnforcerParams,
    Preselector,
    PreselectorParams,
)

pytestmark = pytest.mark.integration

DAY_S = 86400.0


Site = RobotsSite


@pytest.fixture
def site() -> Iterator[Site]:
    with robots_site() as server:
        yield server


class AcceptIfContains(DecideRule[Params]):
    """ACCEPT URIs containing 'in-scope', no opinion otherwise."""

    def decide(self, curi: CrawlURI) -> DecideResult:
        return DecideResult.ACCEPT if "in-scope" in curi.uri else DecideResult.NONE


def make_ctx(tmp_path: Path, policy: Literal["obey", "ignore"] = "obey") -> ProcessorContext:
    return make_context(
        tmp_path,
        scope=DecideRuleSequence([AcceptIfContains()]),
        schedule=lambda curi: None,
        robots=RobotsConfig(policy=policy),
    )


def make_chains(ctx: ProcessorContext) -> ProcessorChains:
    chains = ProcessorChains(
        [
            ProcessorChain("pre", [Preselector("preselector"), PreconditionEnforcer("enforcer")]),
            ProcessorChain("fetch", [FetchHTTP("fetch_http")]),
        ]
    )
    chains.start(ctx)
    return chains


@pytest.fixture
def ctx(tmp_path: Path) -> ProcessorContext:
    return make_ctx(tmp_path)


@pytest.fixture
def chains(ctx: ProcessorContext) -> Iterator[ProcessorChains]:
    built = make_chains(ctx)
    yield built
    built.stop()


def base(site: Site) -> str:
    return f"http://127.0.0.1:{site.server_address[1]}"


def crawl_with_robots(chains: ProcessorChains, uri: str) -> CrawlURI:
    """What the frontier does: run, fetch the prerequisite, retry the deferred URI."""
    curi = CrawlURI(uri)
    chains.run(curi)
    assert curi.status == -50
    prereq = curi.prerequisite
    assert prereq is not None
    chains.run(prereq)
    curi.reset_for_retry()
    chains.run(curi)
    return curi


# ------------------------------------------------------------------ Preselector
def preselect(params: PreselectorParams, uri: str, ctx: ProcessorContext) -> CrawlURI:
    proc = Preselector("preselector", params)
    proc.start(ctx)
    curi = CrawlURI(uri)
    result = proc.process(curi)
    assert (result == ProcessResult.SKIP_TO_POST) == (curi.status != 0)
    return curi


def test_preselector_passes_by_default(ctx: ProcessorContext) -> None:
    assert preselect(PreselectorParams(), "http://a.example/", ctx).status == 0


def test_preselector_block_all(ctx: ProcessorContext) -> None:
    assert preselect(PreselectorParams(block_all=True), "http://a.example/", ctx).status == -5001


def test_preselector_block_and_allow_regex_match_whole_uri(ctx: ProcessorContext) -> None:
    block = PreselectorParams(block_by_regex=r".*\.pdf")
    assert preselect(block, "http://a.example/x.pdf", ctx).status == -5001
    assert preselect(block, "http://a.example/x.pdf?y", ctx).status == 0
    allow = PreselectorParams(allow_by_regex=r"http://a\.example/.*")
    assert preselect(allow, "http://a.example/x", ctx).status == 0
    assert preselect(allow, "http://b.example/http://a.example/x", ctx).status == -5001


def test_preselector_recheck_scope(ctx: ProcessorContext) -> None:
    params = PreselectorParams(recheck_scope=True)
    assert preselect(params, "http://a.example/in-scope", ctx).status == 0
    assert preselect(params, "http://a.example/elsewhere", ctx).status == -5000


def test_preselector_rejects_bad_regex_at_load() -> None:
    with pytest.raises(ValidationError, match="block_by_regex"):
        PreselectorParams(block_by_regex="(unclosed")


# ------------------------------------------------------------ robots prerequisites
def test_robots_prerequisite_then_allowed_and_disallowed(
    site: Site, chains: ProcessorChains
) -> None:
    curi = CrawlURI(base(site) + "/page", directive=3)
    chains.run(curi)
    assert curi.status == -50
    prereq = curi.prerequisite
    assert prereq is not None
    assert prereq.uri == base(site) + "/robots.txt"
    assert (prereq.hop_path, prereq.via, prereq.force_fetch) == ("P", curi.uri, True)
    assert prereq.directive == 2
    assert site.paths == []

    chains.run(prereq)
    assert prereq.status == 200
    curi.reset_for_retry()
    chains.run(curi)
    assert curi.status == 200

    banned = CrawlURI(base(site) + "/private/secret")
    chains.run(banned)
    assert banned.status == -9998
    assert banned.recording is None
    assert site.paths == ["/robots.txt", "/page"]


def test_robots_group_for_our_user_agent(site: Site, chains: ProcessorChains) -> None:
    site.robots = (200, b"User-agent: *\nDisallow:\n\nUser-agent: crawler\nDisallow: /\n")
    assert crawl_with_robots(chains, base(site) + "/page").status == -9998


@pytest.mark.parametrize(
    "robots",
    [
        (200, b"\x00\xff\xfe garbage \x00" * 100),
        (200, b"<html>oops, a soft 404</html>"),
        (503, b"User-agent: *\nDisallow: /\n"),
        (404, b"User-agent: *\nDisallow: /\n"),
    ],
)
def test_garbage_or_error_robots_allow_all(
    site: Site, chains: ProcessorChains, robots: tuple[int, bytes]
) -> None:
    site.robots = robots
    assert crawl_with_robots(chains, base(site) + "/page").status == 200


def test_robots_refetched_after_validity(
    site: Site, ctx: ProcessorContext, chains: ProcessorChains
) -> None:
    assert crawl_with_robots(chains, base(site) + "/page").status == 200
    assert isinstance(ctx.clock, ManualClock)
    ctx.clock.advance(DAY_S)
    site.robots = (200, b"User-agent: *\nDisallow: /page\n")
    assert crawl_with_robots(chains, base(site) + "/page").status == -9998
    assert site.paths.count("/robots.txt") == 2


def test_unreachable_robots_accepted_after_three_attempts(chains: ProcessorChains) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    curi = CrawlURI(f"http://127.0.0.1:{port}/page")
    for _ in range(3):
        chains.run(curi)
        assert curi.status == -50
        assert curi.prerequisite is not None
        chains.run(curi.prerequisite)
        assert curi.prerequisite.status == -2
        curi.reset_for_retry()
    chains.run(curi)
    assert curi.prerequisite is None
    assert curi.status == -2  # fetched (and failed): robots no longer block it


def test_ignore_policy_fetches_no_robots(site: Site, tmp_path: Path) -> None:
    chains = make_chains(make_ctx(tmp_path, policy="ignore"))
    try:
        site.robots = (200, b"User-agent: *\nDisallow: /\n")
        curi = CrawlURI(base(site) + "/page")
        chains.run(curi)
        assert curi.status == 200
        assert site.paths == ["/page"]
    finally:
        chains.stop()


def test_unparseable_uri_is_minus_7(chains: ProcessorChains) -> None:
    curi = CrawlURI("http:///no-host")
    chains.run(curi)
    assert curi.status == -7
    assert curi.prerequisite is None


def test_non_http_uri_passes(chains: ProcessorChains) -> None:
    curi = CrawlURI("dns:a.example")
    chains.run(curi)
    assert (curi.status, curi.prerequisite) == (0, None)


def test_calculate_robots_only_annotates(site: Site, ctx: ProcessorContext) -> None:
    proc = PreconditionEnforcer("enforcer", PreconditionEnforcerParams(calculate_robots_only=True))
    proc.start(ctx)
    server = f"127.0.0.1:{site.server_address[1]}"
    ctx.servers.update_robots(server, 200, b"User-agent: *\nDisallow: /\n", ctx.clock.time())
    curi = CrawlURI(base(site) + "/page")
    assert proc.process(curi) == ProcessResult.PROCEED
    assert curi.status == 0
    assert "robotExcluded" in curi.annotations


@pytest.fixture
def second_site() -> Iterator[Site]:
    with robots_site(b"User-agent: *\nDisallow:\n") as server:
        yield server


def test_robots_evicted_from_a_full_cache_is_fetched_again_and_obeyed(
    site: Site, second_site: Site, tmp_path: Path
) -> None:
    """A server cache bounded at one server: the second server's robots.txt pushes the first
    one's out, and the first server's disallowed path is still refused - after its robots.txt
    was fetched again, never on the strength of a missing entry."""
    ctx = make_context(
        tmp_path,
        scope=DecideRuleSequence([AcceptIfContains()]),
        schedule=lambda curi: None,
        robots=RobotsConfig(policy="obey"),
        servers=ServerCache(max_servers=1),
    )
    chains = make_chains(ctx)
    try:
        assert crawl_with_robots(chains, base(site) + "/page").status == 200
        assert crawl_with_robots(chains, base(second_site) + "/page").status == 200
        assert ctx.servers.evicted_servers == 1
        banned = crawl_with_robots(chains, base(site) + "/private/secret")
        assert banned.status == -9998
        assert site.paths == ["/robots.txt", "/page", "/robots.txt"]
        assert second_site.paths == ["/robots.txt", "/page"]
    finally:
        chains.stop()
