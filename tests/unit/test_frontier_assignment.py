"""Queue-assignment policies: the queue key decides which URIs share a politeness queue."""

from __future__ import annotations

import pytest

from crawler.curi import CrawlURI, Hop
from crawler.frontier import (
    AuthorityPolicyParams,
    HashQueueAssignmentPolicy,
    HashQueueAssignmentPolicyParams,
    HostnameQueueAssignmentPolicy,
    SurtAuthorityQueueAssignmentPolicy,
)
from crawler.frontier.assignment import bkdr_hash, elf_hash, jump_hash, sdbm_hash


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
