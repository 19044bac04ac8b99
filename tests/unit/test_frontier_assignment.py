"""Queue-assignment policies: the queue key decides which URIs share a politeness queue."""

from __future__ import annotations

from typing import Any

import pytest

from crawler.curi import CrawlURI, Hop
from crawler.frontier import (
    AuthorityPolicyParams,
    HashQueueAssignmentPolicy,
    HashQueueAssignmentPolicyParams,
    HostnameQueueAssignmentPolicy,
    SurtAuthorityQueueAssignmentPolicy,
)
from crawler.frontier.assignment import (
    AssignmentLevelSurtQueueAssignmentPolicy,
    AssignmentLevelSurtQueueAssignmentPolicyParams,
    IPQueueAssignmentPolicy,
    QueueAssignmentPolicy,
    bkdr_hash,
    elf_hash,
    jump_hash,
    sdbm_hash,
)
from crawler.order.components import build_component
from crawler.order.schema import ComponentSpec
from crawler.servers import ServerCache


@pytest.mark.parametrize(
    ("uri", "key"),
    [
        ("http://www.example.org/x", "www.example.org"),
        ("https://www.example.org/x", "www.example.org#443"),
        ("http://example.com:8080/", "example.com#8080"),
        ("https://user:pw@Example.com:8443/a?b", "example.com#8443"),
        ("dns:example.com", "example.com"),
        ("http://[::1]:8080/", "[::1]#8080"),
        ("whois://whois.example/", "whois..."),
        ("mailto:x@example.com", "default..."),
    ],
)
def test_hostname_keys(uri: str, key: str) -> None:
    assert HostnameQueueAssignmentPolicy().key(CrawlURI(uri)) == key


@pytest.mark.parametrize(
    ("uri", "key"),
    [
        ("https://www.example.org/x", "org,example,www,"),
        ("http://www.example.org/x", "org,example,www,"),
        ("http://example.com:8080/", "com,example,#8080"),
        ("http://10.0.0.1/", "10.0.0.1"),
    ],
)
def test_surt_keys(uri: str, key: str) -> None:
    assert SurtAuthorityQueueAssignmentPolicy().key(CrawlURI(uri)) == key


def test_prerequisite_uses_the_via_queue() -> None:
    policy = HostnameQueueAssignmentPolicy(AuthorityPolicyParams(parallel_queues=8))
    page = CrawlURI("https://a.test/section/page")
    prereq = page.create_child("dns:a.test", Hop.PREREQ)
    assert policy.key(prereq) == policy.key(page)
    assert policy.key(page.create_child("https://a.test/robots.txt", Hop.PREREQ)) == policy.key(
        page
    )


def test_parallel_queues_split_a_host_by_first_path_segment() -> None:
    policy = HostnameQueueAssignmentPolicy(AuthorityPolicyParams(parallel_queues=4))
    keys = {policy.key(CrawlURI(f"http://big.test/dir{i}/page")) for i in range(200)}
    assert keys == {"big.test", "big.test+1", "big.test+2", "big.test+3"}
    same = {policy.key(CrawlURI(f"http://big.test/dir7/p{i}")) for i in range(20)}
    assert len(same) == 1
    # A single segment (no further slash) stays in sub-queue 0.
    assert policy.key(CrawlURI("http://big.test/file.html")) == "big.test"
    assert policy.key(CrawlURI("http://big.test/a?x=/y/z")) == "big.test"


def test_jump_hash_is_consistent_when_buckets_grow() -> None:
    moved = sum(
        jump_hash(k * 0x9E3779B97F4A7C15, 10) != jump_hash(k * 0x9E3779B97F4A7C15, 11)
        for k in range(10_000)
    )
    assert 500 < moved < 1400  # ~1/11 of the keys move, not most of them


@pytest.mark.parametrize(
    ("function", "buckets"), [("elf", 47), ("bkdr", 47), ("sdbm", 47), ("murmur3", 50)]
)
def test_hash_policy_spreads_one_site_over_buckets(function: str, buckets: int) -> None:
    params = HashQueueAssignmentPolicyParams.model_validate(
        {"function": function, "buckets": buckets}
    )
    policy = HashQueueAssignmentPolicy(params)
    keys = {policy.key(CrawlURI(f"http://news.test/article/{i}.html")) for i in range(2000)}
    assert len(keys) >= buckets - 3
    assert all(k.startswith(f"{function}-") for k in keys)


def test_elf_with_an_even_bucket_count_leaves_half_the_queues_empty() -> None:
    params = HashQueueAssignmentPolicyParams(function="elf", buckets=50)
    policy = HashQueueAssignmentPolicy(params)
    keys = {policy.key(CrawlURI(f"http://news.test/article/{i}.html")) for i in range(2000)}
    assert len(keys) == 25


def test_classic_string_hashes() -> None:
    # Values from the reference C definitions (31-bit results).
    assert bkdr_hash("a") == 97
    assert bkdr_hash("ab") == 97 * 131 + 98
    assert sdbm_hash("a") == 97
    assert elf_hash("a") == 97
    assert elf_hash("abcdefghij") == elf_hash("abcdefghij")


def test_hash_formulas_match_the_papers() -> None:
    # ELF folds the top nibble back: after 8 chars of "z" the top nibble is set.
    h = 0
    for c in b"zzzzzzzzzz":
        h = ((h << 4) + c) & 0xFFFFFFFF
        x = h & 0xF0000000
        if x:
            h ^= x >> 24
            h &= ~x
    assert elf_hash("zzzzzzzzzz") == h & 0x7FFFFFFF
    assert sdbm_hash("ab") == (98 + (97 << 6) + (97 << 16) - 97)
    assert bkdr_hash("abc") == (97 * 131 + 98) * 131 + 99
    # 31-bit results whatever the length.
    long = "http://news.test/" + "x" * 500
    assert all(0 <= f(long) < 2**31 for f in (elf_hash, bkdr_hash, sdbm_hash))


def test_hash_policy_is_selectable_from_an_order_by_dotted_path() -> None:
    spec = ComponentSpec.model_validate(
        {
            "class": "crawler.frontier.assignment.HashQueueAssignmentPolicy",
            "params": {"function": "bkdr", "buckets": 50},
        }
    )
    policy = build_component(spec, QueueAssignmentPolicy, "frontier.queue_assignment")
    uri = "http://news.test/a/1.html"
    assert policy.key(CrawlURI(uri)) == f"bkdr-{bkdr_hash(uri) % 50}"


def test_parallel_queues_move_few_directories_when_n_grows() -> None:
    ten = HostnameQueueAssignmentPolicy(AuthorityPolicyParams(parallel_queues=10))
    eleven = HostnameQueueAssignmentPolicy(AuthorityPolicyParams(parallel_queues=11))
    uris = [CrawlURI(f"http://big.test/d{i}/x") for i in range(2000)]
    moved = [u for u in uris if ten.key(u) != eleven.key(u)]
    assert 80 < len(moved) < 300  # ~1/11, not ~10/11 as with hash modulo N
    assert all(eleven.key(u) == "big.test+10" for u in moved)


@pytest.mark.parametrize(
    ("uri", "key"),
    [
        ("http://www.example.co.uk/x", "uk,co,example,"),
        ("https://img.example.co.uk:8443/y", "uk,co,example,"),
        ("http://example.co.uk/", "uk,co,example,"),
        ("dns:static.example.co.uk", "uk,co,example,"),
        ("http://a.b.example.com/", "com,example,"),
        ("http://co.uk/", "uk,co,"),
        ("http://localhost:8080/", "localhost,#8080"),
        ("http://10.0.0.1:8080/a", "10.0.0.1#8080"),
        ("http://x.y.unknowntld/", "unknowntld,y,"),
        ("mailto:someone@example.com", "default..."),
    ],
)
def test_assignment_level_surt_keys(uri: str, key: str) -> None:
    assert AssignmentLevelSurtQueueAssignmentPolicy().key(CrawlURI(uri)) == key


def test_assignment_level_private_suffixes_are_optional() -> None:
    uri = CrawlURI("http://alice.blogspot.com/post")
    assert AssignmentLevelSurtQueueAssignmentPolicy().key(uri) == "com,blogspot,alice,"
    icann = AssignmentLevelSurtQueueAssignmentPolicyParams(only_icann=True)
    assert AssignmentLevelSurtQueueAssignmentPolicy(icann).key(uri) == "com,blogspot,"


def test_ip_policy_uses_the_ip_once_known() -> None:
    policy = IPQueueAssignmentPolicy()
    assert policy.key(CrawlURI("https://a.test/x")) == "a.test#443"  # not known yet
    assert policy.key(CrawlURI("http://192.0.2.7:8080/x")) == "192.0.2.7"
    fetched = CrawlURI("http://a.test/x")
    fetched.ip_address = "192.0.2.1"
    assert policy.key(fetched) == "192.0.2.1"
    servers = ServerCache()
    servers.update_host("b.test", "2001:db8::5", 0.0, 3600.0)
    servers.update_host("c.test", "192.0.2.9", 0.0, 3600.0)
    policy.bind_servers(servers)
    assert policy.key(CrawlURI("http://b.test/")) == "[2001:db8::5]"
    # Two names on one machine share a queue; a prerequisite follows its via.
    page = CrawlURI("http://c.test/p")
    assert policy.key(page) == policy.key(CrawlURI("https://C.test:8443/q")) == "192.0.2.9"
    assert policy.key(page.create_child("dns:c.test", Hop.PREREQ)) == "192.0.2.9"
    assert policy.key(CrawlURI("http://unknown.test/")) == "unknown.test"


def test_policies_never_crash_on_odd_uris() -> None:
    policies: list[QueueAssignmentPolicy[Any]] = [
        HostnameQueueAssignmentPolicy(AuthorityPolicyParams(parallel_queues=7)),
        HostnameQueueAssignmentPolicy(
            AuthorityPolicyParams(parallel_queues=7, parallel_queues_random_assignment=True)
        ),
        SurtAuthorityQueueAssignmentPolicy(),
        AssignmentLevelSurtQueueAssignmentPolicy(),
        IPQueueAssignmentPolicy(),
        *(
            HashQueueAssignmentPolicy(HashQueueAssignmentPolicyParams(function=f))
            for f in ("elf", "bkdr", "sdbm", "murmur3")
        ),
    ]
    odd = ["http://a.test/\udc80/\ud800x", "http://\u00e9t\u00e9.test/a/b", "http://", "x:", ""]
    for policy in policies:
        for uri in odd:
            key = policy.key(CrawlURI(uri))
            assert key and "\x00" not in key


def test_keys_remembered_per_authority_match_keys_worked_out_afresh() -> None:
    # One policy instance answers from its memo of keys by authority after the first URI of a
    # host; a fresh instance per URI works every key out. Both must agree on every spelling.
    hosts = ["a.test", "A.test", "u:p@a.test", "a.test:8443", "[::1]:81", "\u00e9.test", "x\x00y"]
    tails = ["/", "/p/q.html", "/d/e/f?x=/y", "?q=/a", "#f/g", "", "/\udc80/z"]
    uris = [
        f"{scheme}://{host}{tail}"
        for scheme in ("http", "https", "HTTPS", "dns", "whois", "ftp")
        for host in hosts
        for tail in tails
    ] + ["dns:a.test", "mailto:x@a.test", "http:///p", "://a.test/p", "http://a.test?x/y"]
    policies: list[Any] = [
        lambda: HostnameQueueAssignmentPolicy(),
        lambda: HostnameQueueAssignmentPolicy(AuthorityPolicyParams(parallel_queues=5)),
        lambda: SurtAuthorityQueueAssignmentPolicy(AuthorityPolicyParams(parallel_queues=3)),
        lambda: AssignmentLevelSurtQueueAssignmentPolicy(),
    ]
    for make in policies:
        kept = make()
        for uri in uris * 2:
            assert kept.key(CrawlURI(uri)) == make().key(CrawlURI(uri)), uri


def test_a_policy_overriding_authority_key_is_not_remembered_unless_it_says_so() -> None:
    class BySourceTag(HostnameQueueAssignmentPolicy):
        # Reads the CrawlURI: keys of one authority differ by its source tag.
        def authority_key(self, scheme: str, authority: str, curi: CrawlURI) -> str:
            return f"{authority}/{curi.source_tag}"

    policy = BySourceTag()
    assert not BySourceTag.keys_by_authority
    assert policy.key(CrawlURI("http://a.test/1", source_tag="s1")) == "a.test/s1"
    assert policy.key(CrawlURI("http://a.test/2", source_tag="s2")) == "a.test/s2"
