"""The address check at the connection: DNS answers are judged where the socket is opened.

A DNS server of the test answers ``rebind.test`` first with 127.0.0.1 (allowed here by
``fetch.allow_private: [127.0.0.1/32]``: it plays a public address) and then with 127.0.0.2 (a
loopback address nothing allows). A site listens on 127.0.0.1 and a trap on 127.0.0.2, same
port: the trap must never see a connection. Without FetchDNS, FetchHTTP's socket layer resolves
the name itself and judges what it resolved.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.fetch_support import make_ctx
from support.private_nets_support import CountingSite, ScriptedDNS, connect_audit

from crawler import CrawlURI, ManualClock, ProcessorChain, ProcessorChains, ProcessorContext
from crawler.netguard import AddressPolicy
from processors.fetch import FetchDNS, FetchHTTP
from processors.fetch.fetch_dns import FetchDNSParams
from processors.prefetch import PreconditionEnforcer, PreconditionEnforcerParams

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


@pytest.fixture
def sites() -> Iterator[tuple[CountingSite, CountingSite]]:
    good = CountingSite(lambda path: (200, {}, b"<html>public</html>"))
    try:
        trap = CountingSite(lambda path: (200, {}, b"internal"), "127.0.0.2", good.port)
    except OSError:
        good.close()
        pytest.skip("127.0.0.2 cannot be bound here")
    yield good, trap
    trap.close()
    good.close()


@pytest.fixture
def resolver() -> Iterator[ScriptedDNS]:
    dns = ScriptedDNS({"rebind.test": ["127.0.0.1", "127.0.0.2"]})
    yield dns
    dns.close()


def guarded(tmp_path: Path, policy: AddressPolicy) -> ProcessorContext:
    ctx = make_ctx(tmp_path, robots={"policy": "ignore"})
    return dataclasses.replace(ctx, addresses=policy)


def chains_for(ctx: ProcessorContext, nameserver: str) -> ProcessorChains:
    """PreconditionEnforcer, then FetchDNS (asking ``nameserver``) and FetchHTTP, started."""
    enforcer = PreconditionEnforcer("enforcer", PreconditionEnforcerParams(ip_validity_s=60))
    dns = FetchDNS("fetch_dns", FetchDNSParams(nameservers=[nameserver]))
    chains = ProcessorChains(
        [ProcessorChain("pre", [enforcer]), ProcessorChain("fetch", [dns, FetchHTTP("http")])]
    )
    chains.start(ctx)
    return chains


def run_until_done(chains: ProcessorChains, curi: CrawlURI) -> None:
    """What the frontier does: run, fetch a deferred URI's prerequisite, run again."""
    for _ in range(3):
        chains.run(curi)
        if curi.status != -50:
            return
        assert curi.prerequisite is not None
        chains.run(curi.prerequisite)
        curi.reset_for_retry()
    raise AssertionError("still deferred")


def test_a_name_rebound_to_a_private_address_is_refused_after_its_new_lookup(
    tmp_path: Path, sites: tuple[CountingSite, CountingSite], resolver: ScriptedDNS
) -> None:
    good, trap = sites
    ctx = guarded(tmp_path, AddressPolicy(["127.0.0.1/32"]))
    clock = ctx.clock
    assert isinstance(clock, ManualClock)
    chains = chains_for(ctx, resolver.nameserver)
    try:
        with connect_audit() as connects:
            first = CrawlURI(f"http://rebind.test:{good.port}/one")
            run_until_done(chains, first)
            clock.advance(61)  # the lookup expires: the next URI looks the name up again
            second = CrawlURI(f"http://rebind.test:{good.port}/two")
            run_until_done(chains, second)
    finally:
        chains.stop()
    assert first.status == 200
    assert second.status == -5006
    assert "nonPublicAddress:loopback:127.0.0.2" in second.annotations
    assert resolver.queries.count("rebind.test") >= 2
    assert good.paths == ["/one"]
    assert trap.connections == 0
    assert ("127.0.0.2", good.port) not in connects


def test_the_connection_judges_the_address_it_opens_not_an_earlier_check(
    tmp_path: Path, sites: tuple[CountingSite, CountingSite], resolver: ScriptedDNS
) -> None:
    """The PreconditionEnforcer passed the URI on 127.0.0.1; the name is looked up again (by
    another thread, say) before FetchHTTP connects: the connection goes nowhere."""
    good, trap = sites
    ctx = guarded(tmp_path, AddressPolicy(["127.0.0.1/32"]))
    clock = ctx.clock
    assert isinstance(clock, ManualClock)
    chains = chains_for(ctx, resolver.nameserver)
    try:
        curi = CrawlURI(f"http://rebind.test:{good.port}/page")
        enforcer, dns, http = (chains.find(name) for name in ("enforcer", "fetch_dns", "http"))
        assert enforcer is not None and dns is not None and http is not None
        enforcer.process(curi)
        assert curi.status == -50 and curi.prerequisite is not None
        dns.process(curi.prerequisite)  # -> 127.0.0.1
        curi.reset_for_retry()
        enforcer.process(curi)
        assert curi.status == 0  # checked on 127.0.0.1, passed
        clock.advance(61)
        dns.process(CrawlURI("dns:rebind.test", hop_path="P"))  # -> 127.0.0.2
        with connect_audit() as connects:
            http.process(curi)
    finally:
        chains.stop()
    assert curi.status == -5006
    assert "nonPublicAddress:loopback:127.0.0.2" in curi.annotations
    assert trap.connections == 0 and good.connections == 0
    assert connects == []


def test_without_fetch_dns_the_socket_layer_judges_what_it_resolves(
    tmp_path: Path, sites: tuple[CountingSite, CountingSite]
) -> None:
    good, _ = sites
    policy = AddressPolicy()
    ctx = guarded(tmp_path, policy)
    http = FetchHTTP("fetch_http")
    http.start(ctx)
    try:
        with connect_audit() as connects:
            refused = CrawlURI(f"http://localhost:{good.port}/by-name")
            http.process(refused)
            policy.allow_seed(f"http://localhost:{good.port}/")  # the operator's seed
            allowed = CrawlURI(f"http://localhost:{good.port}/seed")
            http.process(allowed)
    finally:
        http.stop()
    assert refused.status == -5006
    assert any(note.startswith("nonPublicAddress:loopback:") for note in refused.annotations)
    assert allowed.status == 200
    assert good.paths == ["/seed"]
    assert all(port == good.port for _, port in connects)
