"""No fetch into private networks: whole crawls whose "public" seed sends the crawler elsewhere.

A public site cannot be served on loopback, so the seed server (127.0.0.1, named by the seed, so
allowed) plays the public site; its page links to, embeds and redirects to other loopback ports
and names, the cloud metadata address, private and link-local addresses, IPv6 loopback and
IPv4-mapped forms, and names a DNS server of the test maps to such addresses. Each of those URIs
must end -5006 with its ``nonPublicAddress`` annotation, and no connection may be attempted: a
trap server on the other loopback port counts connections, and an audit hook records (and
refuses, should the guard fail) every connection the crawl makes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.crawllog_parser import CrawlLogLine, parse_file
from support.private_nets_support import CountingSite, Page, ScriptedDNS, connect_audit

from crawler.control.controller import CrawlController
from crawler.order.loader import load_order

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
ACCEPT_ALL = (
    "scope=[{class: crawler.decide.AcceptDecideRule},"
    " {class: crawler.decide.TooManyHopsDecideRule, params: {max_hops: 2}}]"
)


@pytest.fixture
def trap() -> Iterator[CountingSite]:
    """The other loopback port: whatever connects here was let through."""
    site = CountingSite(lambda path: (200, {}, b"<html>internal</html>"))
    yield site
    site.close()


@pytest.fixture
def resolver() -> Iterator[ScriptedDNS]:
    dns = ScriptedDNS(
        {
            "localhost": ["127.0.0.1"],
            "metadata.test": ["169.254.169.254"],
            "internal.test": ["10.0.0.1"],
            "v6only.test": ["::1"],
        }
    )
    yield dns
    dns.close()


def public_page(trap_port: int) -> bytes:
    t = trap_port
    return f"""<html><body>
<a href="/page2">ours</a> <a href="/go">redirect</a>
<a href="http://127.0.0.1:{t}/other-port">other port</a>
<a href="http://localhost:{t}/by-name">by name</a>
<a href="http://v6only.test:{t}/aaaa">by an AAAA name</a>
<a href="http://metadata.test/latest/meta-data/">metadata by name</a>
<a href="http://169.254.169.254/latest/meta-data/iam/">metadata</a>
<a href="http://10.0.0.1/admin">private</a>
<a href="http://internal.test/">private by name</a>
<a href="http://[::ffff:a9fe:a9fe]/mapped-metadata">mapped metadata</a>
<a href="http://[64:ff9b::a00:1]/nat64">NAT64 private</a>
<img src="http://[::1]:{t}/v6.png"> <img src="http://[fe80::1]/ll.png">
<script src="http://[::ffff:127.0.0.1]:{t}/mapped.js"></script>
</body></html>""".encode()


def public_site(trap_port: int) -> CountingSite:
    def pages(path: str) -> Page:
        if path == "/":
            return 200, {}, public_page(trap_port)
        if path == "/go":
            return 302, {"Location": f"http://127.0.0.1:{trap_port}/redirected"}, b""
        if path == "/page2":
            return 200, {}, b"<html>page 2</html>"
        return 404, {}, b"not found"

    return CountingSite(pages)


def crawl(run: Path, seed: str, nameserver: str, *sets: str) -> dict[str, CrawlLogLine]:
    order = load_order(
        EXAMPLE,
        [
            f"seeds.urls=['{seed}']",
            "seeds.file=null",
            "toe_threads=2",
            ACCEPT_ALL,
            f"chains.fetch.fetch_dns.params.nameservers=['{nameserver}']",
            *sets,
        ],
    )
    assert CrawlController(order, run, install_signals=False).run() == 0
    return {line.uri: line for line in parse_file(run / "logs" / "crawl.log")}


REFUSED = {
    "http://127.0.0.1:{t}/other-port": "loopback:127.0.0.1",
    "http://localhost:{t}/by-name": "loopback:127.0.0.1",
    "http://v6only.test:{t}/aaaa": "loopback:::1",
    "http://127.0.0.1:{t}/redirected": "loopback:127.0.0.1",
    "http://metadata.test/latest/meta-data/": "linkLocal:169.254.169.254",
    "http://169.254.169.254/latest/meta-data/iam/": "linkLocal:169.254.169.254",
    "http://10.0.0.1/admin": "private:10.0.0.1",
    "http://internal.test/": "private:10.0.0.1",
    "http://[::ffff:a9fe:a9fe]/mapped-metadata": "linkLocal:::ffff:a9fe:a9fe",
    "http://[64:ff9b::a00:1]/nat64": "private:64:ff9b::a00:1",
    "http://[::1]:{t}/v6.png": "loopback:::1",
    "http://[fe80::1]/ll.png": "linkLocal:fe80::1",
    "http://[::ffff:127.0.0.1]:{t}/mapped.js": "loopback:::ffff:7f00:1",
}


def test_links_embeds_and_redirects_to_non_public_addresses_end_minus_5006_unconnected(
    tmp_path: Path, trap: CountingSite, resolver: ScriptedDNS
) -> None:
    site = public_site(trap.port)
    try:
        with connect_audit() as connects:
            lines = crawl(tmp_path / "run", f"http://127.0.0.1:{site.port}/", resolver.nameserver)
    finally:
        site.close()
    base = f"http://127.0.0.1:{site.port}"
    assert lines[base + "/"].status == 200
    assert lines[base + "/page2"].status == 200  # the seed's own server is allowed
    for template, reason in REFUSED.items():
        uri = template.format(t=trap.port)
        assert uri in lines, f"{uri} not in crawl.log: {sorted(lines)}"
        line = lines[uri]
        assert line.status == -5006, (uri, line.status, line.annotations)
        assert f"nonPublicAddress:{reason}" in line.annotations, (uri, line.annotations)
    assert lines[f"{base}/go"].status == 302
    # The names were looked up first: the refusal judged the address they resolved to.
    for name in ("metadata.test", "internal.test", "localhost", "v6only.test"):
        assert lines[f"dns:{name}"].status == 1
    assert trap.connections == 0
    assert trap.port not in {port for _, port in connects}, connects
    # the crawl's own connects (a thread an earlier test of this process left may connect too)
    assert {port for _, port in connects.by_threads("ToeThread")} == {site.port}, connects
    report = (tmp_path / "run" / "reports" / "crawl-report.txt").read_text()
    assert f"URIs refused, non-public address: {len(REFUSED)}\n" in report


def test_allow_private_lets_listed_networks_through(
    tmp_path: Path, trap: CountingSite, resolver: ScriptedDNS
) -> None:
    site = public_site(trap.port)
    try:
        with connect_audit():
            lines = crawl(
                tmp_path / "run",
                f"http://127.0.0.1:{site.port}/",
                resolver.nameserver,
                "fetch.allow_private=[127.0.0.0/8]",
            )
    finally:
        site.close()
    t = trap.port
    assert lines[f"http://127.0.0.1:{t}/other-port"].status == 200
    assert lines[f"http://localhost:{t}/by-name"].status == 200
    assert lines[f"http://127.0.0.1:{t}/redirected"].status == 200
    assert trap.connections > 0
    # Networks not listed stay refused.
    assert lines["http://10.0.0.1/admin"].status == -5006
    assert lines[f"http://[::1]:{t}/v6.png"].status == -5006
    assert lines["http://169.254.169.254/latest/meta-data/iam/"].status == -5006


def test_a_seed_named_by_host_name_is_crawled_whatever_it_resolves_to(
    tmp_path: Path, trap: CountingSite, resolver: ScriptedDNS
) -> None:
    """``localhost:<port>`` named by the seed is the operator's choice; another port of the
    same address, linked from it, is not."""
    site = public_site(trap.port)
    try:
        lines = crawl(tmp_path / "run", f"http://localhost:{site.port}/", resolver.nameserver)
    finally:
        site.close()
    assert lines[f"http://localhost:{site.port}/"].status == 200
    assert lines[f"http://localhost:{site.port}/page2"].status == 200
    assert lines[f"http://127.0.0.1:{trap.port}/other-port"].status == -5006
    assert trap.connections == 0
