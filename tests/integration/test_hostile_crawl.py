"""A whole crawl of the hostile site through the controller: every case ends as a status or an
annotation in crawl.log, no ToeThread is lost, and the crawl finishes by itself.

One crawl (module fixture, about 10 s) serves every test; each test checks one case from the
crawl's logs and the server's request log. Order settings: ``crawler.demo.hostile_order``.
"""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.crawllog_parser import CrawlLogLine, parse_file
from support.fetch_support import RssSampler
from warcio.archiveiterator import ArchiveIterator

from crawler.control.controller import CrawlController
from crawler.demo import hostile_pages as pages
from crawler.demo.hostile_order import (
    FETCH_TIMEOUT_S,
    MAX_REDIRECTS,
    RETRY_AFTER_CAP_S,
    crawl_settings,
)
from crawler.demo.hostile_server import HostileRequest
from crawler.demo.hostile_site import NON_ASCII_TARGET, RETRY_AFTER_S, HostileSite
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
TOE_THREADS = 6
MAX_ATTEMPTS = 3  # frontier.retries.max_retries in crawl_settings
HTTP_TRIES = 4  # frontier.retries.http_max_tries (the default)
MAX_HOPS = 20  # the default scope's TooManyHopsDecideRule
TRAP_BUDGET = 30  # the default scope's TrapBudgetDecideRule

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(120)]


@dataclass
class HostileCrawl:
    site: HostileSite
    controller: CrawlController
    exit_code: int
    run_dir: Path
    lines: list[CrawlLogLine]
    requests: list[HostileRequest]
    rss_growth_mb: float

    def line(self, host: str, target: str) -> CrawlLogLine:
        uri = self.site.url(host, target)
        found = [line for line in self.lines if line.uri == uri]
        assert len(found) == 1, f"{uri} logged {len(found)} times"
        return found[0]

    def requested(self, host: str) -> list[HostileRequest]:
        return [r for r in self.requests if r.host == host]

    def log_text(self, name: str) -> str:
        return (self.run_dir / "logs" / name).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> HostileCrawl:
    run_dir = tmp_path_factory.mktemp("hostile") / "run"
    with HostileSite() as site:
        order = load_order(EXAMPLE, crawl_settings(site, toe_threads=TOE_THREADS))
        controller = CrawlController(order, run_dir, install_signals=False)
        with RssSampler() as rss:
            exit_code = controller.run()
    lines = parse_file(run_dir / "logs" / "crawl.log")
    return HostileCrawl(site, controller, exit_code, run_dir, lines, site.log.all(), rss.growth_mb)


def test_crawl_finishes_by_itself_with_every_thread_alive(crawl: HostileCrawl) -> None:
    controller = crawl.controller
    assert crawl.exit_code == 0
    assert controller.exit_status == "Finished"  # not "Timelimit hit": every trap ended
    assert controller.state == "FINISHED"
    pool = controller.pool
    assert pool is not None and len(pool.threads) == TOE_THREADS
    # A ToeThread only reaches FINISHED by leaving its loop normally, at the end of the crawl.
    assert [t.step for t in pool.threads] == ["FINISHED"] * TOE_THREADS
    assert sum(t.uris_processed for t in pool.threads) >= len(crawl.lines)
    assert crawl.log_text("runtime-errors.log") == ""
    assert not [line for line in crawl.lines if line.status == -5]
    assert "CRAWL ENDED - Finished" in crawl.log_text("progress-statistics.log")


def test_memory_stays_bounded(crawl: HostileCrawl) -> None:
    """Three 1 GiB bombs, 6 MiB pages, 3 MiB robots: the crawl's own growth stays small (the
    subprocess figure is tests/e2e/test_hostile_memory.py's)."""
    assert crawl.rss_growth_mb < 300


def test_every_uri_logged_once_in_strict_format(crawl: HostileCrawl) -> None:
    logged = Counter(line.uri for line in crawl.lines)
    assert [uri for uri, n in logged.items() if n > 1] == []
    assert len(crawl.lines) > 100


@pytest.mark.parametrize(
    ("target", "size"),
    [
        ("/big.html", None),
        ("/binary.html", 2 * pages.MIB),
        ("/deep.html", None),
        ("/deep-small.html", None),
    ],
)
def test_monstrous_pages_are_captured_whole(
    crawl: HostileCrawl, target: str, size: int | None
) -> None:
    line = crawl.line("main", target)
    assert line.status == 200
    assert line.mime == "text/html"
    assert not [a for a in line.annotations if a.startswith("err=") or a.endswith("Trunc")]
    if size is not None:
        assert line.size == size


@pytest.mark.parametrize(
    ("page", "end"),
    [
        ("/big.html", "/big-end.html"),  # last link of 6 MiB of unclosed tags
        ("/deep.html", "/deep-end.html"),  # under 100,000 unclosed <div>s
        ("/deep-small.html", "/deep-small-end.html"),
        ("/odd-links.html", "/odd-links-end.html"),  # after a dozen unusable links
        ("/charset-bogus.html", "/charset-bogus-end.html"),
    ],
)
def test_links_past_hostile_markup_are_found(crawl: HostileCrawl, page: str, end: str) -> None:
    line = crawl.line("main", end)
    assert line.status == 200
    assert line.via == crawl.site.url("main", page)
    assert line.hops == "LL"


def test_outlinks_over_the_cap_are_counted_not_followed(crawl: HostileCrawl) -> None:
    line = crawl.line("main", "/many-links.html")
    assert line.status == 200
    dropped = [int(a[4:]) for a in line.annotations if a.startswith("dol:")]
    # 8000 links, 6000 kept per URI (the inferred /favicon.ico is one of them).
    assert dropped and 2000 <= dropped[0] <= 2001


def test_charsets_wrong_missing_and_bogus(crawl: HostileCrawl) -> None:
    missing = crawl.line("main", "/charset-missing.html")
    assert "usingCharsetInHTML:cp1251" in missing.annotations
    # The <meta> charset decoded the link; its path is then percent-encoded as UTF-8.
    assert crawl.line("main", NON_ASCII_TARGET).status == 200
    bogus = crawl.line("main", "/charset-bogus.html")
    assert "unsatisfiableCharsetInHeader:x-bogus-42" in bogus.annotations
    wrong = crawl.line("main", "/charset-wrong.html")
    assert wrong.status == 200
    # Mislabelled bytes become U+FFFD: a link still comes out, and is fetched (a 404 here).
    children = [line for line in crawl.lines if line.via == wrong.uri and line.hops == "LL"]
    assert [c.uri.rsplit("/", 1)[1] for c in children] == ["%EF%BF%BD-wrong.html"]


@pytest.mark.parametrize(
    ("target", "body"),
    [
        ("/bomb-gzip.html", pages.gzip_bomb),
        ("/bomb-gzip2.html", pages.double_gzip_bomb),
        ("/bomb-br.html", pages.brotli_bomb),
    ],
)
def test_decompression_bombs_are_stored_as_received(
    crawl: HostileCrawl, target: str, body: Callable[[], bytes]
) -> None:
    raw = body()
    line = crawl.line("main", target)
    assert line.status == 200
    assert line.size == len(raw)
    assert line.digest is not None
    assert line.digest == "sha1:" + base64.b32encode(hashlib.sha1(raw).digest()).decode()


def test_warcs_hold_every_capture_raw_with_valid_digests(crawl: HostileCrawl) -> None:
    """Every file passes ``warcio check``, and every payload is stored raw (bombs included)
    with a valid digest."""
    warcs = sorted((crawl.run_dir / "warcs").glob("*.warc.gz"))
    check = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from warcio.cli import main; sys.exit(main())",
            "check",
            *map(str, warcs),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    responses: dict[str, tuple[bytes, str | None]] = {}
    for path in sorted((crawl.run_dir / "warcs").glob("*.warc.gz")):
        with path.open("rb") as fh:
            records = ArchiveIterator(fh, check_digests=True)
            for record in records:
                # raw_stream: the HTTP payload as stored, never inflated here.
                payload = record.raw_stream.read()
                assert record.digest_checker.passed is not False, record.rec_headers
                if record.rec_type == "response":
                    uri = record.rec_headers.get_header("WARC-Target-URI")
                    truncated = record.rec_headers.get_header("WARC-Truncated")
                    responses[uri] = (payload if len(payload) < pages.MIB * 2 else b"", truncated)
    url = crawl.site.url
    assert responses[url("main", "/bomb-gzip2.html")] == (pages.double_gzip_bomb(), None)
    assert responses[url("main", "/bomb-br.html")] == (pages.brotli_bomb(), None)
    assert responses[url("main", "/stall.html")][1] == "time"
    assert responses[url("main", "/drip.html")][1] == "time"
    fetched = {line.uri for line in crawl.lines if line.status > 0 and line.uri[:4] == "http"}
    duplicates = {line.uri for line in crawl.lines if "duplicate:digest" in line.annotations}
    assert set(responses) == fetched - duplicates


def test_stalled_body_is_cut_at_the_read_timeout(crawl: HostileCrawl) -> None:
    line = crawl.line("main", "/stall.html")
    assert line.status == 200
    assert "timeTrunc" in line.annotations
    assert line.size == 65536


def test_slow_drip_is_cut_at_the_total_timeout(crawl: HostileCrawl) -> None:
    line = crawl.line("main", "/drip.html")
    assert line.status == 200
    assert "timeTrunc" in line.annotations
    assert line.size is not None and 0 < line.size < len(pages.page("drip", "x" * 4096))
    assert line.timing is not None
    duration_ms = int(line.timing.split("+")[1])
    # the total timeout, whatever each read takes; the whole drip would take minutes (a loaded
    # machine may end the fetch late, never early)
    assert FETCH_TIMEOUT_S * 1000 - 100 <= duration_ms < 60_000


@pytest.mark.parametrize(
    ("target", "error", "tries"),
    [
        ("/cut-headers.html", None, MAX_ATTEMPTS),  # a reset: the network, retried in full
        # Malformed responses, the same each time: given up once it repeats (protocolError).
        ("/huge-headers.html", "err=RemoteProtocolError", 2),  # past the 64 KiB head limit
        ("/short-body.html", "err=RemoteProtocolError", 2),
    ],
)
def test_broken_connections_are_retried_then_logged_minus_3(
    crawl: HostileCrawl, target: str, error: str | None, tries: int
) -> None:
    line = crawl.line("main", target)
    assert line.status == -3
    assert f"{tries}t" in line.annotations
    errors = [a for a in line.annotations if a.startswith("err=")]
    assert errors if error is None else errors == [error]
    assert ("protocolError" in line.annotations) == (error is not None)
    assert crawl.site.hits("main", target) == tries


def test_unanswered_request_times_out_minus_4_not_retried(crawl: HostileCrawl) -> None:
    line = crawl.line("main", "/silent.html")
    assert line.status == -4
    assert "err=ReadTimeout" in line.annotations
    assert crawl.site.hits("main", "/silent.html") == 1


def test_refused_connection_is_minus_2_after_retries(crawl: HostileCrawl) -> None:
    base = crawl.site.refused_base
    by_uri = {line.uri: line for line in crawl.lines}
    robots, page = by_uri[base + "/robots.txt"], by_uri[base + "/refused.html"]
    assert robots.status == page.status == -2
    assert f"{MAX_ATTEMPTS}t" in robots.annotations
    # Deferred for robots.txt (no try), then MAX_ATTEMPTS connection attempts.
    assert f"{MAX_ATTEMPTS}t" in page.annotations


def test_dropped_connection_then_success_is_retried(crawl: HostileCrawl) -> None:
    line = crawl.line("main", "/flaky-drop.html")
    assert line.status == 200
    assert "2t" in line.annotations
    assert crawl.site.hits("main", "/flaky-drop.html") == 2


def test_a_500_is_retried_and_its_last_answer_logged(crawl: HostileCrawl) -> None:
    """Unlike Heritrix, a 500 is tried again (frontier.retries.http_statuses)."""
    line = crawl.line("main", "/flaky-500.html")
    assert line.status == 200
    assert "2t" in line.annotations
    assert crawl.site.hits("main", "/flaky-500.html") == 2


def _gap_after(crawl: HostileCrawl, host: str, target: str) -> float:
    requests = crawl.requested(host)
    first = next(i for i, r in enumerate(requests) if r.target == target)
    assert first + 1 < len(requests), f"nothing was asked of {host} after {target}"
    return requests[first + 1].at_s - requests[first].at_s


def test_429_retry_after_holds_back_the_server(crawl: HostileCrawl) -> None:
    line = crawl.line("busy", "/busy.html")
    assert line.status == 429  # refused every time: the last answer stands
    assert crawl.site.hits("busy", "/busy.html") == HTTP_TRIES
    assert crawl.line("busy", "/calm.html").status == 200
    assert _gap_after(crawl, "busy", "/busy.html") >= RETRY_AFTER_S - 0.05


def test_503_retry_after_of_a_day_is_capped(crawl: HostileCrawl) -> None:
    line = crawl.line("busy-long", "/busy.html")
    assert line.status == 503
    assert crawl.site.hits("busy-long", "/busy.html") == HTTP_TRIES
    assert crawl.line("busy-long", "/calm.html").status == 200
    gap_s = _gap_after(crawl, "busy-long", "/busy.html")
    assert RETRY_AFTER_CAP_S - 0.05 <= gap_s < RETRY_AFTER_CAP_S + 30  # capped, not a day


def test_huge_robots_is_read_up_to_its_cap(crawl: HostileCrawl) -> None:
    robots = crawl.line("robots-huge", "/robots.txt")
    assert robots.status == 200
    body = pages.huge_robots(crawl.site.huge_robots_bytes, "/private", "/late")
    assert robots.size == len(body) > 2 * pages.MIB
    assert crawl.line("robots-huge", "/private/p.html").status == -9998
    # Its "Disallow: /late" lies past the 512 KiB cap.
    assert crawl.line("robots-huge", "/late/p.html").status == 200


@pytest.mark.parametrize(
    ("host", "robots_status"),
    [("robots-garbage", 200), ("robots-5xx", 500), ("robots-redirect", 301), ("robots-cut", -3)],
)
def test_unusable_robots_means_allow_all(
    crawl: HostileCrawl, host: str, robots_status: int
) -> None:
    robots = crawl.line(host, "/robots.txt")
    assert robots.status == robots_status
    assert robots.hops.endswith("P")
    if robots_status == -3:
        # Accepted as "no robots" after 3 failed attempts (Heritrix's MIN_ROBOTS_RETRIES).
        assert f"{MAX_ATTEMPTS}t" in robots.annotations
    assert crawl.line(host, "/private/p.html").status == 200
    assert crawl.line(host, "/late/p.html").status == 200


def test_redirected_robots_target_is_only_a_page(crawl: HostileCrawl) -> None:
    """A 301 robots.txt is not followed for rules ("Disallow: /" there is not obeyed)."""
    line = crawl.line("robots-redirect", "/robots-real.txt")
    assert line.status == 200
    assert line.hops.endswith("PR")


def test_endless_redirect_chain_stops_at_the_cap(crawl: HostileCrawl) -> None:
    chain = [line for line in crawl.lines if "/r/" in line.uri]
    assert len(chain) == MAX_REDIRECTS
    assert {line.status for line in chain} == {302}
    assert crawl.line("main", f"/r/{MAX_REDIRECTS}").hops == "L" + "R" * (MAX_REDIRECTS - 1)
    assert crawl.site.hits("main", f"/r/{MAX_REDIRECTS + 1}") == 0


def test_calendar_trap_ends_within_its_budgets(crawl: HostileCrawl) -> None:
    months = {
        int(line.uri.rsplit("=", 1)[1]): line for line in crawl.lines if "/calendar?" in line.uri
    }
    # The hop limit (months -19..19) and the series budget (30 months on either side of the
    # entry) both bound /calendar?month={n}; the hop limit comes first here.
    assert len(months) <= 2 * TRAP_BUDGET + 1
    assert all(abs(month) < MAX_HOPS for month in months)
    assert {line.status for line in months.values()} == {200}
    asked = [r.target for r in crawl.requested("main") if r.target.startswith("/calendar")]
    assert len(asked) == len(months)
    assert "trap budget: series of 30 URIs in a row" in (
        crawl.run_dir / "reports" / "processors-report.txt"
    ).read_text(encoding="utf-8")


def test_unusable_links_are_never_fetched(crawl: HostileCrawl) -> None:
    targets = [r.target for r in crawl.requests]
    assert not [t for t in targets if "data-link" in t or "from-data-uri" in t]
    assert not [t for t in targets if "alert" in t or "webmaster" in t or "555" in t]
    assert not [t for t in targets if "too-long" in t or len(t) > 2083]
    assert not [line for line in crawl.lines if not line.uri.startswith(("http://", "dns:"))]


def test_malformed_and_over_long_uris_go_to_uri_errors_log(crawl: HostileCrawl) -> None:
    errors = crawl.log_text("uri-errors.log")
    assert "URI longer than 2083 characters" in errors
    assert "port 99999 out of range" in errors
    assert "http://[::1/broken-ipv6" in errors
    via = crawl.site.url("main", "/odd-links.html")
    assert len([line for line in errors.splitlines() if via in line]) >= 4


@pytest.mark.parametrize(
    ("target", "error"),
    [("/bad-location.html", "unterminated IPv6"), ("/long-location.html", "longer than 2083")],
)
def test_unusable_redirect_targets_go_to_uri_errors_log(
    crawl: HostileCrawl, target: str, error: str
) -> None:
    assert crawl.line("main", target).status == 302
    via = crawl.site.url("main", target)
    errors = crawl.log_text("uri-errors.log").splitlines()
    assert [line for line in errors if via in line and error in line]
    assert not [r for r in crawl.requests if r.target.startswith("/long-target")]
