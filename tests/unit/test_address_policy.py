"""Which addresses a fetch may reach: the address table, the policy's allowances, the order key."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from crawler.control.controller import CrawlController
from crawler.netguard import AddressPolicy, AddressRefusedError, nonpublic_reason
from crawler.order.errors import OrderError
from crawler.order.loader import load_order
from crawler.servers import ServerCache

NON_PUBLIC = [
    ("127.0.0.1", "loopback"),
    ("127.255.0.9", "loopback"),
    ("10.0.0.1", "private"),
    ("172.16.0.1", "private"),
    ("172.31.255.254", "private"),
    ("192.168.1.1", "private"),
    ("169.254.169.254", "linkLocal"),
    ("100.64.0.1", "shared"),
    ("0.0.0.0", "unspecified"),
    ("192.0.2.7", "documentation"),
    ("198.51.100.7", "documentation"),
    ("203.0.113.7", "documentation"),
    ("198.18.0.1", "benchmarking"),
    ("224.0.0.251", "multicast"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
    ("::1", "loopback"),
    ("[::1]", "loopback"),
    ("::", "unspecified"),
    ("fe80::1", "linkLocal"),
    ("fe80::1%eth0", "linkLocal"),
    ("fd12:3456::1", "private"),
    ("ff02::1", "multicast"),
    ("2001:db8::1", "documentation"),
    ("2001:2::1", "benchmarking"),
    ("2001::1", "reserved"),  # Teredo
    ("::ffff:169.254.169.254", "linkLocal"),  # IPv4-mapped
    ("::ffff:127.0.0.1", "loopback"),
    ("64:ff9b::a9fe:a9fe", "linkLocal"),  # NAT64 of 169.254.169.254
    ("2002:0a00:0001::1", "private"),  # 6to4 of 10.0.0.1
    ("::10.0.0.1", "reserved"),  # IPv4-compatible (deprecated)
    ("not-an-address", "reserved"),
]
PUBLIC = ["8.8.8.8", "93.184.216.34", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"]


@pytest.mark.parametrize(("address", "reason"), NON_PUBLIC)
def test_non_public_addresses_say_why(address: str, reason: str) -> None:
    assert nonpublic_reason(address) == reason


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_pass(address: str) -> None:
    assert nonpublic_reason(address) is None


def test_nothing_non_public_is_allowed_by_default() -> None:
    policy = AddressPolicy()
    assert policy.refusal("example.com", 80, "93.184.216.34") is None
    assert policy.refusal("example.com", 80, "10.0.0.1") == "nonPublicAddress:private:10.0.0.1"
    with pytest.raises(AddressRefusedError) as refused:
        policy.check("metadata.example", 80, "169.254.169.254")
    assert refused.value.note == "nonPublicAddress:linkLocal:169.254.169.254"


def test_a_seed_allows_its_own_server_only() -> None:
    policy = AddressPolicy()
    assert policy.allow_seed("http://127.0.0.1:8080/start")
    assert policy.refusal("127.0.0.1", 8080, "127.0.0.1") is None
    assert policy.refusal("127.0.0.1", 8081, "127.0.0.1") is not None
    assert policy.refusal("localhost", 8080, "127.0.0.1") is not None
    # On a default port both schemes count (scopes treat http and https alike).
    assert policy.allow_seed("http://Intranet.Local./")
    assert policy.refusal("intranet.local", 80, "10.1.2.3") is None
    assert policy.refusal("intranet.local", 443, "10.1.2.3") is None
    assert policy.refusal("intranet.local", 8443, "10.1.2.3") is not None
    assert policy.allow_seed("https://[::1]:9000/")
    assert policy.refusal("::1", 9000, "::1") is None
    assert not policy.allow_seed("not a uri")


def test_seeds_allowed_in_one_call_each_allow_their_server() -> None:
    policy = AddressPolicy()
    seeds = [f"https://h{i}.example:{8000 + i}/" for i in range(2000)] + ["not a uri"]
    assert policy.allow_seeds(seeds) == 2000
    assert policy.refusal("h0.example", 8000, "10.0.0.1") is None
    assert policy.refusal("h1999.example", 9999, "10.0.0.1") is None
    assert policy.refusal("h1999.example", 8000, "10.0.0.1") is not None


@pytest.mark.parametrize(
    ("prefix", "allowed", "refused"),
    [
        ("http://(10.1.2.3)/", [("10.1.2.3", 80), ("10.1.2.3", 443)], [("10.1.2.3", 8080)]),
        ("http://(10.1.2.3:8080)/", [("10.1.2.3", 8080)], [("10.1.2.3", 80)]),
        ("http://(10.1.2.3:", [("10.1.2.3", 80), ("10.1.2.3", 9999)], [("10.1.2.30", 80)]),
        ("http://(10.1.2.3", [], [("10.1.2.3", 80), ("10.1.2.30", 80)]),
        ("http://([fd00::5]", [("fd00::5", 80), ("fd00::5", 1234)], [("fd00::50", 80)]),
        ("http://(local,intranet,)/", [("intranet.local", 80)], [("x.intranet.local", 80)]),
        ("http://(local,intranet,", [], [("intranet.local", 80), ("x.intranet.local", 80)]),
    ],
)
def test_a_surt_prefix_allows_the_host_it_names_whole(
    prefix: str, allowed: list[tuple[str, int]], refused: list[tuple[str, int]]
) -> None:
    policy = AddressPolicy()
    assert policy.allow_surt_prefix(prefix) == bool(allowed)
    for host, port in allowed:
        address = host if ":" in host or host[0].isdigit() else "10.9.9.9"
        assert policy.refusal(host, port, address) is None, (host, port)
    for host, port in refused:
        address = host if ":" in host or host[0].isdigit() else "10.9.9.9"
        assert policy.refusal(host, port, address) is not None, (host, port)


def test_allow_private_networks_cover_mapped_forms_too() -> None:
    policy = AddressPolicy(["10.0.0.0/8", "fd00::/8"])
    assert policy.refusal("a.example", 80, "10.200.0.1") is None
    assert policy.refusal("a.example", 80, "::ffff:10.200.0.1") is None
    assert policy.refusal("a.example", 80, "fd00::1") is None
    assert policy.refusal("a.example", 80, "192.168.0.1") is not None
    assert policy.refusal("a.example", 80, "169.254.169.254") is not None


def test_known_refusal_uses_the_literal_or_the_looked_up_ip() -> None:
    servers = ServerCache()
    policy = AddressPolicy()
    assert policy.known_refusal("10.0.0.1", 80, servers) == "nonPublicAddress:private:10.0.0.1"
    assert policy.known_refusal("unknown.example", 80, servers) is None  # decided at connect
    servers.update_host("internal.example", "192.168.5.5", 0.0, math.inf)
    assert policy.known_refusal("internal.example", 80, servers) == (
        "nonPublicAddress:private:192.168.5.5"
    )


def write_order(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "order.yaml"
    path.write_text('name: t\noperator: {contact_url: "http://x/"}\n' + body, encoding="utf-8")
    return path


def test_a_bad_network_is_an_order_error_naming_its_yaml_path(tmp_path: Path) -> None:
    path = write_order(tmp_path, "fetch:\n  allow_private: [10.0.0.0/8, 300.1.2.0/24]\n")
    with pytest.raises(OrderError) as error:
        load_order(path)
    text = str(error.value)
    assert "fetch.allow_private" in text and "300.1.2.0/24" in text, text
    assert "CIDR" in text


def test_the_crawl_allows_the_operators_seeds_and_surts_not_a_redirects(tmp_path: Path) -> None:
    """Order seeds, ``+`` directives and scope ``surts`` name servers; a seed that a redirect
    made (journaled ``# redirect of``) does not, even after a resume."""
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://127.0.0.1:8000/\n+http://10.1.2.3/\n", encoding="utf-8")
    path = write_order(
        tmp_path,
        "seeds: {file: seeds.txt}\n"
        "scope:\n"
        "  - class: crawler.decide.SurtPrefixedDecideRule\n"
        "    params: {decision: ACCEPT, surts: ['+http://(192.168.7.7:8443)/']}\n",
    )
    run = tmp_path / "run"
    run.mkdir()
    (run / "seeds-added.txt").write_text(
        "http://10.9.9.9/  # redirect of http://127.0.0.1:8000/\nhttp://10.8.8.8/\n",
        encoding="utf-8",
    )
    controller = CrawlController(load_order(path), run, install_signals=False)
    controller.seed_module.load(controller.logger, lambda base, message, raw: None)
    policy = controller.addresses
    assert policy.refusal("127.0.0.1", 8000, "127.0.0.1") is None
    assert policy.refusal("10.1.2.3", 80, "10.1.2.3") is None
    assert policy.refusal("192.168.7.7", 8443, "192.168.7.7") is None
    assert policy.refusal("10.8.8.8", 80, "10.8.8.8") is None  # an action file's seed
    assert policy.refusal("10.9.9.9", 80, "10.9.9.9") is not None  # a redirect's
    assert policy.refusal("127.0.0.1", 8001, "127.0.0.1") is not None
