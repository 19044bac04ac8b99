"""FetchDNS and the dns: prerequisites of the PreconditionEnforcer, with the system resolver.

The machine has no network: ``localhost`` resolves through /etc/hosts and ``*.invalid`` names
fail at once with "Name or service not known".
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from support.crawllog_parser import parse_file
from support.fetch_support import make_ctx
from warcio.archiveiterator import ArchiveIterator

from crawler import (
    CrawlURI,
    ManualClock,
    ProcessorChain,
    ProcessorChains,
    ProcessorContext,
    Recording,
)
from crawler.control.controller import CrawlController
from crawler.order.loader import load_order
from processors.fetch import FetchDNS, FetchHTTP
from processors.prefetch import PreconditionEnforcer, PreconditionEnforcerParams

pytestmark = pytest.mark.integration

SIX_HOURS_S = 21600.0
EXAMPLE_ORDER = Path(__file__).resolve().parents[2] / "jobs" / "example" / "order.yaml"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        body = b"User-agent: *\nDisallow:\n" if self.path == "/robots.txt" else b"page"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def port() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture
def ctx(tmp_path: Path) -> ProcessorContext:
    return make_ctx(tmp_path)


@pytest.fixture
def dns(ctx: ProcessorContext) -> Iterator[FetchDNS]:
    proc = FetchDNS("fetch_dns")
    proc.start(ctx)
    yield proc
    proc.stop()


def lookup(proc: FetchDNS, uri: str) -> CrawlURI:
    curi = CrawlURI(uri, via="http://x/", hop_path="P")
    proc.process(curi)
    return curi


def make_chains(
    ctx: ProcessorContext, dns_enabled: bool = True, **enforcer: Any
) -> ProcessorChains:
    chains = ProcessorChains(
        [
            ProcessorChain(
                "pre",
                [PreconditionEnforcer("enforcer", PreconditionEnforcerParams(**enforcer))],
            ),
            ProcessorChain(
                "fetch", [FetchDNS("fetch_dns", enabled=dns_enabled), FetchHTTP("fetch_http")]
            ),
        ]
    )
    chains.start(ctx)
    return chains


@pytest.fixture
def chains(ctx: ProcessorContext) -> Iterator[ProcessorChains]:
    built = make_chains(ctx)
    yield built
    built.stop()


def run_until_done(chains: ProcessorChains, curi: CrawlURI) -> list[CrawlURI]:
    """What the frontier does: run, fetch each prerequisite, retry; returns the prerequisites."""
    prereqs: list[CrawlURI] = []
    for _ in range(5):
        chains.run(curi)
        if curi.status != -50:
            return prereqs
        assert curi.prerequisite is not None
        prereqs.append(curi.prerequisite)
        chains.run(curi.prerequisite)
        curi.reset_for_retry()
    raise AssertionError("still deferred")


# ------------------------------------------------------------------------------ FetchDNS
def test_localhost_resolved_recorded_and_cached(dns: FetchDNS, ctx: ProcessorContext) -> None:
    curi = lookup(dns, "dns:localhost")
    assert curi.status == 1
    assert (curi.content_type, curi.mime_type) == ("text/dns", "text/dns")
    rec = curi.recording
    assert isinstance(rec, Recording)
    body = rec.body_bytes().decode()
    assert re.fullmatch(r"\d{14}\n(localhost\.\t0\tIN\tA{1,4}\t[0-9a-f.:]+\n)+", body)
    assert body.startswith("20231114221320\n")  # the ManualClock's time
    assert "localhost.\t0\tIN\tA\t127.0.0.1\n" in body
    assert curi.content_size == len(body)
    assert curi.payload_digest == rec.payload_digest
    assert curi.fetch_start_ms == 1_700_000_000_000
    state = ctx.servers.host_state("localhost")
    assert state is not None and state.ip == "127.0.0.1"
    assert state.looked_up_s == ctx.clock.time()


def test_unresolvable_name_is_minus_1(dns: FetchDNS, ctx: ProcessorContext) -> None:
    curi = lookup(dns, "dns:nonexistent.invalid")
    assert curi.status == -1
    assert curi.recording is None
    assert "err=gaierror" in curi.annotations
    state = ctx.servers.host_state("nonexistent.invalid")
    assert state is not None and state.ip is None


def test_ip_literal_needs_no_lookup(dns: FetchDNS, ctx: ProcessorContext) -> None:
    curi = lookup(dns, "dns:127.0.0.1")
    assert curi.status == 1
    assert curi.recording is None
    state = ctx.servers.host_state("127.0.0.1")
    assert state is not None and state.ip == "127.0.0.1"
    assert not state.is_expired(ctx.clock.time() + 10 * SIX_HOURS_S, SIX_HOURS_S)


@pytest.mark.parametrize("uri", ["dns:", "dns:a/b", "dns:" + "a" * 300, "dns:x y"])
def test_malformed_dns_name_is_minus_7(dns: FetchDNS, uri: str) -> None:
    assert lookup(dns, uri).status == -7


def test_http_uri_untouched_by_fetch_dns(dns: FetchDNS) -> None:
    curi = lookup(dns, "http://localhost/")
    assert curi.status == 0
    assert dns.uris_handled == 0


# ------------------------------------------------------------------ prerequisites
def test_first_fetch_of_a_host_waits_for_its_dns_lookup(
    port: int, ctx: ProcessorContext, chains: ProcessorChains
) -> None:
    page = CrawlURI(f"http://localhost:{port}/page", directive=3)
    chains.run(page)
    assert page.status == -50
    dns_uri = page.prerequisite
    assert dns_uri is not None
    assert dns_uri.uri == "dns:localhost"
    assert (dns_uri.hop_path, dns_uri.via, dns_uri.force_fetch, dns_uri.directive) == (
        "P",
        page.uri,
        True,
        2,
    )
    chains.run(dns_uri)
    assert dns_uri.status == 1
    page.reset_for_retry()
    # Then robots.txt (itself needing no new lookup), then the page.
    prereqs = run_until_done(chains, page)
    assert [p.uri for p in prereqs] == [f"http://localhost:{port}/robots.txt"]
    assert prereqs[0].status == 200
    assert page.status == 200
    assert page.ip_address == "127.0.0.1"


def test_host_without_address_gets_minus_6(ctx: ProcessorContext, chains: ProcessorChains) -> None:
    page = CrawlURI("http://nonexistent.invalid/page")
    prereqs = run_until_done(chains, page)
    assert [(p.uri, p.status) for p in prereqs] == [("dns:nonexistent.invalid", -1)]
    assert page.status == -6
    assert page.recording is None


def test_lookup_repeated_once_the_ip_expires(
    port: int, ctx: ProcessorContext, chains: ProcessorChains
) -> None:
    assert len(run_until_done(chains, CrawlURI(f"http://localhost:{port}/a"))) == 2
    assert isinstance(ctx.clock, ManualClock)
    ctx.clock.advance(SIX_HOURS_S - 1)
    assert run_until_done(chains, CrawlURI(f"http://localhost:{port}/b")) == []
    ctx.clock.advance(1)
    prereqs = run_until_done(chains, CrawlURI(f"http://localhost:{port}/c"))
    assert [p.uri for p in prereqs] == ["dns:localhost"]


def test_ip_literal_host_has_no_dns_prerequisite(port: int, chains: ProcessorChains) -> None:
    prereqs = run_until_done(chains, CrawlURI(f"http://127.0.0.1:{port}/page"))
    assert [p.uri for p in prereqs] == [f"http://127.0.0.1:{port}/robots.txt"]


@pytest.mark.parametrize(
    ("dns_enabled", "enforcer"),
    [(False, {}), (True, {"dns_prerequisites": False})],
    ids=["fetch-dns-disabled", "prerequisites-off"],
)
def test_dns_step_switched_off(
    port: int, tmp_path: Path, dns_enabled: bool, enforcer: dict[str, Any]
) -> None:
    chains = make_chains(make_ctx(tmp_path), dns_enabled, **enforcer)
    try:
        page = CrawlURI(f"http://localhost:{port}/page")
        prereqs = run_until_done(chains, page)
    finally:
        chains.stop()
    assert [p.uri for p in prereqs] == [f"http://localhost:{port}/robots.txt"]
    assert page.status == 200


# ------------------------------------------------------------------ a whole crawl
def test_crawl_logs_and_archives_dns_lookups(port: int, tmp_path: Path) -> None:
    seeds = [f"http://localhost:{port}/", "http://nonexistent.invalid/"]
    order = load_order(
        EXAMPLE_ORDER,
        [
            f"seeds.urls={seeds!r}",
            "seeds.file=null",
            "frontier.politeness.delay_factor=0",
            "frontier.politeness.min_delay_ms=0",
            "frontier.politeness.max_delay_ms=0",
            "frontier.retries.max_retries=3",
            "frontier.retries.retry_delay_s=0",
            "toe_threads=2",
            "logging.console=false",
        ],
    )
    run_dir = tmp_path / "run"
    assert CrawlController(order, run_dir, install_signals=False).run() == 0
    lines = {line.uri: line for line in parse_file(run_dir / "logs" / "crawl.log")}
    dns_line = lines["dns:localhost"]
    assert (dns_line.status, dns_line.hops, dns_line.via) == (1, "P", seeds[0])
    assert dns_line.mime == "text/dns"
    assert dns_line.size is not None and dns_line.size > 14
    assert dns_line.digest is not None and dns_line.digest.startswith("sha1:")
    assert lines[seeds[0]].status == 200
    assert lines["dns:nonexistent.invalid"].status in (-1, -8)
    assert lines[seeds[1]].status == -6
    records = []
    for warc in sorted((run_dir / "warcs").glob("*.warc.gz")):
        with warc.open("rb") as stream:
            for record in ArchiveIterator(stream):
                if record.rec_headers.get_header("WARC-Target-URI") == "dns:localhost":
                    records.append((record.rec_type, record.content_stream().read()))
                    content_type = record.rec_headers.get_header("Content-Type")
    assert len(records) == 1
    assert records[0][0] == "response"
    assert content_type == "text/dns"
    assert b"localhost.\t0\tIN\tA\t127.0.0.1\n" in records[0][1]
