"""ServerCache: per-server robots state with Heritrix's acceptance rules, thread-safe."""

from __future__ import annotations

import math
import threading

from crawler.servers import MIN_ROBOTS_ATTEMPTS, ServerCache

UA = "Mozilla/5.0 (compatible; crawler/0.1.0; +http://example.org/about)"
SERVER = "a.example:80"
DAY_S = 86400.0


def test_unknown_server_is_not_valid_and_allows() -> None:
    cache = ServerCache()
    assert cache.robots_state(SERVER) is None
    assert not cache.is_robots_valid(SERVER, 0.0, DAY_S)
    assert cache.allowed("http://a.example/x", UA)
    assert cache.crawl_delay_s(SERVER, UA) is None
    assert cache.sitemaps(SERVER) == []


def test_2xx_robots_are_parsed_and_expire() -> None:
    cache = ServerCache()
    body = b"User-agent: *\nDisallow: /no\nCrawl-delay: 2\nSitemap: http://a.example/s.xml\n"
    cache.update_robots(SERVER, 200, body, now_s=1000.0)
    assert cache.is_robots_valid(SERVER, 1000.0 + DAY_S - 1, DAY_S)
    assert not cache.is_robots_valid(SERVER, 1000.0 + DAY_S, DAY_S)
    assert not cache.allowed("http://a.example/no/1", UA)
    assert cache.allowed("http://a.example/yes", UA)
    assert cache.crawl_delay_s(SERVER, UA) == 2.0
    assert cache.sitemaps(SERVER) == ["http://a.example/s.xml"]


def test_rules_are_per_server_port_and_scheme() -> None:
    cache = ServerCache()
    cache.update_robots(SERVER, 200, b"User-agent: *\nDisallow: /\n", now_s=0.0)
    assert not cache.allowed("http://a.example/x", UA)
    assert cache.allowed("https://a.example/x", UA)
    assert cache.allowed("http://a.example:8080/x", UA)


def test_non_2xx_allows_all() -> None:
    for status in (301, 403, 404, 500, 503):
        cache = ServerCache()
        cache.update_robots(SERVER, status, b"User-agent: *\nDisallow: /\n", now_s=0.0)
        assert cache.is_robots_valid(SERVER, 1.0, DAY_S), status
        assert cache.allowed("http://a.example/x", UA), status


def test_failed_fetches_accepted_only_at_third_attempt() -> None:
    cache = ServerCache()
    for attempt in range(1, MIN_ROBOTS_ATTEMPTS):
        state = cache.update_robots(SERVER, -2, None, now_s=float(attempt))
        assert state.failed_attempts == attempt
        assert not cache.is_robots_valid(SERVER, float(attempt), DAY_S)
    cache.update_robots(SERVER, -3, None, now_s=10.0)
    assert cache.is_robots_valid(SERVER, 10.0, DAY_S)
    assert cache.allowed("http://a.example/anything", UA)


def test_a_response_resets_failed_attempts() -> None:
    cache = ServerCache()
    cache.update_robots(SERVER, -2, None, now_s=0.0)
    cache.update_robots(SERVER, 200, b"User-agent: *\nDisallow: /x\n", now_s=1.0)
    state = cache.robots_state(SERVER)
    assert state is not None and state.failed_attempts == 0
    cache.update_robots(SERVER, -2, None, now_s=2.0)
    # Expired rules are refetched; one failure does not yet replace them with allow-all.
    assert not cache.is_robots_valid(SERVER, 2.0, DAY_S)
    assert not cache.allowed("http://a.example/x", UA)


def test_parse_limit_from_constructor_and_per_call() -> None:
    body = b"User-agent: *\nDisallow: /a\n" + b"#" * 100 + b"\nDisallow: /b\n"
    cache = ServerCache(robots_max_size_bytes=40)
    cache.update_robots(SERVER, 200, body, now_s=0.0)
    assert not cache.allowed("http://a.example/a", UA)
    assert cache.allowed("http://a.example/b", UA)
    cache.update_robots(SERVER, 200, body, now_s=0.0, max_size_bytes=10_000)
    assert not cache.allowed("http://a.example/b", UA)


def test_garbage_or_missing_body_never_raises() -> None:
    cache = ServerCache()
    cache.update_robots(SERVER, 200, None, now_s=0.0)
    assert cache.allowed("http://a.example/x", UA)
    cache.update_robots(SERVER, 200, b"\xff\x00" * 1000, now_s=0.0)
    assert cache.allowed("http://a.example/x", UA)
    assert cache.allowed("not a uri", UA)


def test_host_ip_state() -> None:
    cache = ServerCache()
    assert cache.host_ip("a.example") is None
    cache.note_ip("A.example", "192.0.2.1", now_s=0.0)
    assert cache.host_ip("a.example") == "192.0.2.1"
    cache.update_host("a.example", "192.0.2.9", now_s=5.0, ttl_s=300.0)
    state = cache.host_state("a.example")
    assert state is not None and (state.ip, state.ttl_s) == ("192.0.2.9", 300.0)
    cache.note_ip("a.example", "192.0.2.1", now_s=6.0)
    assert cache.host_ip("a.example") == "192.0.2.9"


def test_concurrent_failures_are_all_counted() -> None:
    cache = ServerCache()
    barrier = threading.Barrier(8)

    def fail_once(i: int) -> None:
        barrier.wait()
        cache.update_robots(f"h{i % 2}.example:80", -2, None, now_s=0.0)

    threads = [threading.Thread(target=fail_once, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for host in ("h0.example:80", "h1.example:80"):
        state = cache.robots_state(host)
        assert state is not None and state.failed_attempts == 4


def test_ip_expires_after_the_longer_of_validity_and_ttl() -> None:
    cache = ServerCache()
    assert not cache.resolver_active
    cache.update_host("a.example", "192.0.2.1", now_s=100.0, ttl_s=0.0)
    state = cache.host_state("a.example")
    assert state is not None
    assert not state.is_expired(100.0 + 21599, 21600)
    assert state.is_expired(100.0 + 21600, 21600)
    assert not state.is_expired(1e12, 0)  # validity 0: trusted for the whole crawl
    cache.update_host("a.example", "192.0.2.1", now_s=100.0, ttl_s=86400.0)
    state = cache.host_state("a.example")
    assert state is not None
    assert not state.is_expired(100.0 + 21600, 21600)
    assert state.is_expired(100.0 + 86400, 21600)


def test_ip_literal_never_expires() -> None:
    cache = ServerCache()
    cache.update_host("192.0.2.1", "192.0.2.1", now_s=0.0, ttl_s=math.inf)
    state = cache.host_state("192.0.2.1")
    assert state is not None and not state.is_expired(1e12, 1.0)


def test_failed_lookup_remembered_without_address() -> None:
    cache = ServerCache()
    cache.update_host("gone.example", None, now_s=0.0, ttl_s=0.0)
    state = cache.host_state("GONE.example")
    assert state is not None and state.ip is None
    assert cache.host_ip("gone.example") is None


def test_bounded_maps_drop_the_entry_updated_longest_ago() -> None:
    cache = ServerCache(max_servers=2, max_hosts=2)
    for i, server in enumerate(("a.example:80", "b.example:80")):
        cache.update_robots(server, 200, b"User-agent: *\nDisallow: /no\n", now_s=float(i))
    cache.update_robots("a.example:80", 200, b"User-agent: *\nDisallow: /no\n", now_s=5.0)
    cache.update_robots("c.example:80", 404, None, now_s=6.0)
    assert cache.robots_state("b.example:80") is None  # updated longest ago
    assert not cache.is_robots_valid("b.example:80", 7.0, DAY_S)  # so fetched again
    assert cache.is_robots_valid("a.example:80", 7.0, DAY_S)
    assert not cache.allowed("http://a.example/no/1", UA)
    assert (cache.server_count(), cache.evicted_servers) == (2, 1)

    cache.update_host("a.example", "10.0.0.1", 0.0, 60.0)
    cache.note_ip("b.example", "10.0.0.2", 1.0)
    cache.note_ip("a.example", "10.9.9.9", 2.0)  # known already: neither changed nor refreshed
    cache.update_host("c.example", "10.0.0.3", 3.0, 60.0)
    assert cache.host_state("a.example") is None
    assert (cache.host_ip("b.example"), cache.host_ip("c.example")) == ("10.0.0.2", "10.0.0.3")
    assert cache.evicted_hosts == 1


def test_unbounded_when_zero() -> None:
    cache = ServerCache(max_servers=0, max_hosts=0)
    for i in range(500):
        cache.update_robots(f"h{i}.example:80", 404, None, now_s=0.0)
        cache.update_host(f"h{i}.example", "10.0.0.1", 0.0, 60.0)
    assert cache.server_count() == 500
    assert (cache.evicted_servers, cache.evicted_hosts) == (0, 0)


def test_claims_never_resolved_are_swept_once_expired() -> None:
    cache = ServerCache()
    for i in range(30_000):
        assert cache.claim_prerequisite(f"dns:h{i}.example", now_s=float(i), hold_s=100.0)
    # Only claims younger than the hold time are left; a fresh claim still holds.
    assert len(cache._claims) < 11_000
    assert not cache.claim_prerequisite("dns:h29999.example", now_s=30_000.0, hold_s=100.0)
