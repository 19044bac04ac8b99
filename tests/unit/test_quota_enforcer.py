"""QuotaEnforcer against the crawl statistics: hosts and registrable domains, URIs and bytes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from support.processor_context import make_context

from crawler import CrawlURI
from crawler.logs.crawl_logs import format_crawl_line
from crawler.stats import CrawlStats
from crawler.tally import LocalTallyStore
from processors.prefetch import QuotaEnforcer, QuotaEnforcerParams
from processors.prefetch.quota_enforcer import domain_of_host

pytestmark = pytest.mark.timeout(30)


def done(stats: CrawlStats, uri: str, size: int = 100, status: int = 200) -> None:
    stats.record_final(CrawlURI(uri, hop_path="L", status=status, content_size=size))


def started(tmp_path: Path, stats: CrawlStats, **params: int) -> QuotaEnforcer:
    proc = QuotaEnforcer("quota_enforcer", QuotaEnforcerParams(**params))
    proc.start(make_context(tmp_path, stats=stats))
    return proc


def check(proc: QuotaEnforcer, uri: str, hops: str = "L") -> CrawlURI:
    curi = CrawlURI(uri, hop_path=hops)
    proc.process(curi)
    return curi


@pytest.mark.parametrize(
    ("host", "domain"),
    [
        ("news.example.co.uk", "example.co.uk"),
        ("a.b.example.com:8080", "example.com"),
        ("127.0.0.1:8000", "127.0.0.1"),
        ("localhost:80", "localhost"),
        ("user.blogspot.com", "user.blogspot.com"),
    ],
)
def test_domains_are_registrable_domains(host: str, domain: str) -> None:
    assert domain_of_host(host) == domain


def test_host_uri_quota_blocks_with_5003(tmp_path: Path) -> None:
    stats = CrawlStats()
    proc = started(tmp_path, stats, host_max_urls=2)
    done(stats, "http://a.example/1")
    assert check(proc, "http://a.example/2").status == 0
    done(stats, "http://a.example/2", status=404)  # any status > 0 is a success
    blocked = check(proc, "http://a.example/3")
    assert blocked.status == -5003 and blocked.annotations == ["Q:host_max_urls"]
    assert check(proc, "http://b.example/1").status == 0
    assert check(proc, "http://a.example/robots.txt", hops="P").status == 0
    done(stats, "http://a.example:81/x")  # another port is another host
    assert check(proc, "http://a.example:81/y").status == 0
    assert "  URIs over quota (-5003): 1 (host_max_urls 1)" in proc.report()


def test_failures_are_not_counted(tmp_path: Path) -> None:
    stats = CrawlStats()
    proc = started(tmp_path, stats, host_max_urls=1)
    done(stats, "http://a.example/1", status=-2)
    assert check(proc, "http://a.example/2").status == 0


def test_domain_byte_quota_spans_the_domains_hosts(tmp_path: Path) -> None:
    stats = CrawlStats()
    done(stats, "http://www.example.co.uk/", size=600)  # before the enforcer started
    proc = started(tmp_path, stats, domain_max_bytes=1000)
    assert check(proc, "http://img.example.co.uk/a.png").status == 0
    done(stats, "http://img.example.co.uk/a.png", size=400)
    blocked = check(proc, "http://news.example.co.uk/")
    assert blocked.status == -5003 and blocked.annotations == ["Q:domain_max_bytes"]
    assert check(proc, "http://other.co.uk/").status == 0


def test_domain_tallies_are_rebuilt_from_crawl_log_on_resume(tmp_path: Path) -> None:
    log = tmp_path / "crawl.log"
    lines = []
    for n in range(3):
        curi = CrawlURI(f"http://h{n}.example.com/", hop_path="L", status=200, content_size=10)
        curi.content_type = "text/html"
        lines.append(format_crawl_line(curi, 1_700_000_000.0))
    log.write_text("\n".join(lines) + "\n")
    stats = CrawlStats()
    stats.replay_crawl_log(log)
    proc = started(tmp_path, stats, domain_max_urls=3)
    assert check(proc, "http://h9.example.com/").status == -5003
    assert check(proc, "http://example.org/").status == 0


def test_no_quota_no_work(tmp_path: Path) -> None:
    stats = CrawlStats()
    proc = started(tmp_path, stats)
    for n in range(5):
        done(stats, f"http://a.example/{n}")
    assert check(proc, "http://a.example/x").status == 0
    assert proc.uris_handled == 0


def test_workers_sharing_tallies_keep_one_quota_between_them(tmp_path: Path) -> None:
    shared = LocalTallyStore()  # what the crawl's Redis tallies are to every worker
    workers = []
    for n in range(2):
        stats = CrawlStats()
        proc = QuotaEnforcer("quota_enforcer", QuotaEnforcerParams(host_max_urls=3))
        ctx = dataclasses.replace(make_context(tmp_path / str(n), stats=stats), tallies=shared)
        proc.start(ctx)
        workers.append((stats, proc))
    (s1, p1), (s2, p2) = workers
    done(s1, "http://a.example/1")
    done(s2, "http://a.example/2")
    done(s2, "http://a.example/3", status=-2)  # a failure counts nowhere
    assert check(p1, "http://a.example/4").status == 0
    done(s1, "http://a.example/4")
    assert check(p2, "http://a.example/5").status == -5003  # 3 successes crawl-wide
    assert check(p1, "http://a.example/5").status == -5003
    assert shared.read(["h:a.example"]) == [(3, 300)]
    assert s1.host_tally("a.example") == (2, 200)  # each worker's reports keep their own
