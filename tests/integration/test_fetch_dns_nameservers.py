"""FetchDNS with ``nameservers`` set: lookups asked of a DNS server on a loopback port.

The server is a small UDP DNS server run by the test (dnspython builds its answers): every name
under ``web.test`` is 127.0.0.1 with a TTL of 300 s, any other name is NXDOMAIN. The system
resolver knows none of these names, so an answer proves the lookup went to the server.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import dns.flags
import dns.message
import dns.rcode
import dns.rdatatype
import dns.rrset
import pytest
from pydantic import ValidationError
from support.fetch_support import make_ctx
from test_fetch_dns import port, run_until_done  # noqa: F401  (the HTTP server fixture)

from crawler import CrawlURI, ProcessorChain, ProcessorChains, ProcessorContext, Recording
from processors.fetch import FetchDNS, FetchHTTP
from processors.fetch.fetch_dns import FetchDNSParams
from processors.prefetch import PreconditionEnforcer, PreconditionEnforcerParams

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


class TinyDNSServer:
    """Answers A queries for ``*.web.test`` with 127.0.0.1 (TTL 300); NXDOMAIN otherwise."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.queries: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                data, peer = self.sock.recvfrom(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            query = dns.message.from_wire(data)
            reply = dns.message.make_response(query)
            question = query.question[0]
            name = question.name.to_text().lower()
            self.queries.append(f"{name} {dns.rdatatype.to_text(question.rdtype)}")
            if name.endswith(".web.test."):
                if question.rdtype == dns.rdatatype.A:
                    reply.answer.append(
                        dns.rrset.from_text(question.name, 300, "IN", "A", "127.0.0.1")
                    )
            else:
                reply.set_rcode(dns.rcode.NXDOMAIN)
            reply.flags |= dns.flags.AA
            self.sock.sendto(reply.to_wire(), peer)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()


@pytest.fixture
def server() -> Iterator[TinyDNSServer]:
    srv = TinyDNSServer()
    yield srv
    srv.close()


@pytest.fixture
def ctx(tmp_path: Path) -> ProcessorContext:
    return make_ctx(tmp_path)


def started(ctx: ProcessorContext, nameservers: list[str], timeout_s: float = 5) -> FetchDNS:
    proc = FetchDNS("fetch_dns", FetchDNSParams(nameservers=nameservers, timeout_s=timeout_s))
    proc.start(ctx)
    return proc


def test_name_resolved_by_the_named_server_with_its_ttl(
    server: TinyDNSServer, ctx: ProcessorContext
) -> None:
    with pytest.raises(OSError):
        socket.getaddrinfo("h00042.web.test", None)  # the system resolver does not know it
    proc = started(ctx, [f"127.0.0.1:{server.port}"])
    try:
        curi = CrawlURI("dns:h00042.web.test", via="https://x/", hop_path="P")
        proc.process(curi)
    finally:
        proc.stop()
    assert curi.status == 1
    assert server.queries == ["h00042.web.test. A"]
    rec = curi.recording
    assert isinstance(rec, Recording)
    assert rec.body_bytes().decode().endswith("\nh00042.web.test.\t300\tIN\tA\t127.0.0.1\n")
    state = ctx.servers.host_state("h00042.web.test")
    assert state is not None and state.ip == "127.0.0.1"


def test_nxdomain_is_minus_1_without_an_address(
    server: TinyDNSServer, ctx: ProcessorContext
) -> None:
    proc = started(ctx, [f"127.0.0.1:{server.port}"])
    try:
        curi = CrawlURI("dns:nowhere.example", via="https://x/", hop_path="P")
        proc.process(curi)
    finally:
        proc.stop()
    assert curi.status == -1
    assert curi.recording is None
    state = ctx.servers.host_state("nowhere.example")
    assert state is not None and state.ip is None


def test_silent_server_is_minus_1_after_the_timeout(ctx: ProcessorContext) -> None:
    silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    silent.bind(("127.0.0.1", 0))  # receives queries, never answers
    try:
        proc = started(ctx, [f"127.0.0.1:{silent.getsockname()[1]}"], timeout_s=0.3)
        try:
            curi = CrawlURI("dns:h1.web.test", via="https://x/", hop_path="P")
            proc.process(curi)
        finally:
            proc.stop()
    finally:
        silent.close()
    assert curi.status == -1
    assert "err=OSError" in curi.annotations


def test_page_fetched_from_the_address_the_server_gave(
    server: TinyDNSServer,
    port: int,  # noqa: F811
    ctx: ProcessorContext,
) -> None:
    chains = ProcessorChains(
        [
            ProcessorChain("pre", [PreconditionEnforcer("enforcer", PreconditionEnforcerParams())]),
            ProcessorChain(
                "fetch",
                [
                    FetchDNS("fetch_dns", FetchDNSParams(nameservers=[f"127.0.0.1:{server.port}"])),
                    FetchHTTP("fetch_http"),
                ],
            ),
        ]
    )
    chains.start(ctx)
    try:
        page = CrawlURI(f"http://site.web.test:{port}/page", directive=3)
        prereqs = run_until_done(chains, page)
    finally:
        chains.stop()
    assert [(p.uri, p.status) for p in prereqs] == [
        ("dns:site.web.test", 1),
        (f"http://site.web.test:{port}/robots.txt", 200),
    ]
    assert page.status == 200
    assert page.ip_address == "127.0.0.1"


@pytest.mark.parametrize("bad", ["localhost", "127.0.0.1:x", "127.0.0.1:70000", "[::1]x"])
def test_malformed_nameserver_is_refused_with_its_entry(bad: str) -> None:
    with pytest.raises(ValidationError, match="nameserver"):
        FetchDNSParams(nameservers=[bad])
