"""Form logins in real crawls of a local site with a members-only section (tests/login_site.py):
the crawl logs in once through the login form (with its CSRF token) before the host's other
URIs and captures the members pages; a wrong password ends the host's URIs with -62 and an
alert; a cookies.txt preload reaches the members pages without a login."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from support.crawllog_parser import CrawlLogLine, parse_file
from support.login_site import PASSWORD, USER, LoginSite
from warcio.archiveiterator import ArchiveIterator

from crawler.control.controller import CrawlController
from crawler.order.errors import OrderError
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


def login_setting(site: LoginSite, password: str = PASSWORD, **extra: object) -> str:
    cred = {
        "domain": f"127.0.0.1:{site.port}",
        "login_uri": f"{site.base}/login",
        "fields": {"user": USER, "pass": password},
        **extra,
    }
    return "chains.fetch.fetch_http.params.form_logins=" + json.dumps([cred])


def crawl(run: Path, seeds: list[str], *settings: str) -> list[CrawlLogLine]:
    order = load_order(
        EXAMPLE,
        [
            f"seeds.urls={seeds!r}",
            "seeds.file=null",
            "toe_threads=2",
            "logging.console=false",
            "chains.pre.preselector.params.block_by_regex=.*/logout",
            *settings,
        ],
    )
    assert CrawlController(order, run, install_signals=False).run() == 0
    return parse_file(run / "logs" / "crawl.log")


def by_uri(lines: list[CrawlLogLine]) -> dict[str, CrawlLogLine]:
    return {line.uri: line for line in lines if "formLogin:ok" not in line.annotations}


def warc_records(run: Path) -> list[tuple[str, str, bytes]]:
    found = []
    for path in sorted((run / "warcs").glob("*.warc.gz")):
        with gzip.open(path, "rb") as fh:
            for record in ArchiveIterator(fh, no_record_parse=True):
                uri = record.rec_headers.get_header("WARC-Target-URI") or ""
                found.append((record.rec_type, uri, record.raw_stream.read()))
    return found


def test_a_crawl_logs_in_once_and_captures_the_members_pages(tmp_path: Path) -> None:
    with LoginSite(members_pages=3) as site:
        run = tmp_path / "run"
        lines = crawl(run, [site.base + "/"], login_setting(site))
        posts, hits = list(site.posts), list(site.members_hits)

    assert len(posts) == 1  # one login for the whole crawl
    assert posts[0]["user"] == USER and posts[0]["remember"] == "yes" and posts[0]["go"] == "1"
    assert len(posts[0]["csrf_token"]) == 24  # the hidden field of the page was sent back
    assert "q" not in posts[0]  # the search form was not the one submitted
    uris = by_uri(lines)
    for url in site.member_urls():
        assert uris[url].status == 200, url
    assert all(valid for _, valid in hits), hits  # never sent to the login page
    (submit,) = [line for line in lines if "formLogin:ok" in line.annotations]
    assert submit.uri == site.base + "/login" and submit.status == 303
    assert submit.hops.endswith("P")
    login_page = [ln for ln in lines if ln.uri == site.base + "/login" and ln.status == 200]
    assert login_page and login_page[0].hops.endswith("P")

    records = warc_records(run)
    requests = [body for kind, uri, body in records if kind == "request" and uri.endswith("/login")]
    post = [body for body in requests if body.startswith(b"POST /login HTTP/1.1\r\n")]
    assert len(post) == 1
    assert b"Content-Type: application/x-www-form-urlencoded" in post[0]
    assert post[0].endswith(f"user={USER}&pass={PASSWORD}&remember=yes&go=1".encode())
    responses = {uri: body for kind, uri, body in records if kind == "response"}
    assert b"Members only: /members/p2.html" in responses[site.base + "/members/p2.html"]
    assert (
        b"sid=" in {u: b for k, u, b in records if k == "request"}[site.base + "/members/p2.html"]
    )
    assert (run / "state" / "cookies.sqlite").exists()
    report = (run / "reports" / "processors-report.txt").read_text()
    assert f"form login 127.0.0.1:{site.port}: ok" in report
    assert uris[site.base + "/logout"].status == -5001  # kept away from the logout link


def test_a_lost_session_logs_in_again_and_the_page_is_fetched_after(tmp_path: Path) -> None:
    with LoginSite(members_pages=3) as site:
        run = tmp_path / "run"
        # the logout link is not blocked: the crawl follows it and ends its own session
        lines = crawl(
            run,
            [site.base + "/"],
            login_setting(site),
            "chains.pre.preselector.params.block_by_regex=''",
            "toe_threads=1",
        )
        posts, hits = list(site.posts), list(site.members_hits)
    uris = by_uri(lines)
    assert uris[site.base + "/logout"].status == 302
    for url in site.member_urls():
        assert uris[url].status == 200, url
    assert len(posts) == 2  # logged in again once, after the logout
    assert sum("formLogin:ok" in line.annotations for line in lines) == 2
    # the one members request that found the session gone was not captured: it was retried
    assert len([path for path, valid in hits if not valid]) == 1
    journal = (run / "state" / "form-logins.jsonl").read_text()
    assert '"outcome": "lost"' in journal


def test_a_wrong_password_fails_the_host_with_minus_62_and_an_alert(tmp_path: Path) -> None:
    with LoginSite(members_pages=3) as site:
        run = tmp_path / "run"
        seeds = [site.base + "/", site.base + "/members/p1.html"]
        lines = crawl(run, seeds, login_setting(site, password="wrong"))
        posts, hits = list(site.posts), list(site.members_hits)

    assert len(posts) == 1  # a failed login is not retried URI after URI
    assert hits == []  # no members page was requested, so none was captured as the login page
    (submit,) = [line for line in lines if "formLogin:failed" in line.annotations]
    assert submit.status == 200
    uris = by_uri([line for line in lines if line is not submit])
    for url in seeds:
        assert uris[url].status == -62, url
        assert "loginFailed" in uris[url].annotations
    alerts = (run / "logs" / "alerts.log").read_text()
    assert "form_login_failed" in alerts and "the response holds a login form again" in alerts
    assert f"127.0.0.1:{site.port}" in alerts
    report = (run / "reports" / "processors-report.txt").read_text()
    assert f"form login 127.0.0.1:{site.port}: failed (the response holds a login form" in report


def test_a_login_page_robots_txt_refuses_fails_the_login_clearly(tmp_path: Path) -> None:
    with LoginSite(members_pages=1, robots="User-agent: *\nDisallow: /login\n") as site:
        run = tmp_path / "run"
        lines = crawl(run, [site.base + "/members/p1.html"], login_setting(site))
        requests = list(site.requests)
    assert ("GET", "/login") not in requests
    uris = by_uri(lines)
    assert uris[site.base + "/members/p1.html"].status == -62
    assert uris[site.base + "/login"].status == -9998
    assert "no login after 2 attempts" in (run / "logs" / "alerts.log").read_text()


def test_a_failed_login_with_on_failure_crawl_fetches_without_a_session(tmp_path: Path) -> None:
    with LoginSite(members_pages=2) as site:
        run = tmp_path / "run"
        setting = login_setting(site, password="wrong", on_failure="crawl")
        lines = crawl(run, [site.base + "/members/p1.html"], setting)
    uris = by_uri(lines)
    assert uris[site.base + "/members/p1.html"].status == 302  # the site's own answer
    assert (run / "logs" / "alerts.log").read_text().count("form_login_failed") == 1


def test_a_cookies_txt_preload_reaches_members_pages_without_a_login(tmp_path: Path) -> None:
    with LoginSite(members_pages=2) as site:
        sid = site.add_session()
        jar = tmp_path / "cookies.txt"
        jar.write_text(
            "# Netscape HTTP Cookie File\n"
            f"127.0.0.1\tFALSE\t/members/\tFALSE\t0\tsid\t{sid}\n"
            # another host's cookie is never sent to this one
            "other.example\tFALSE\t/\tFALSE\t0\tsid\tnot-for-us\n",
            encoding="utf-8",
        )
        run = tmp_path / "run"
        lines = crawl(
            run,
            [site.base + "/members/"],
            f"chains.fetch.fetch_http.params.cookies_file={jar}",
        )
        posts, hits, requests = list(site.posts), list(site.members_hits), list(site.requests)

    assert posts == [] and ("GET", "/login") not in requests
    uris = by_uri(lines)
    for url in site.member_urls():
        assert uris[url].status == 200, url
    assert hits and all(valid for _, valid in hits)


def test_the_documented_login_order_logs_in(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "logins.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- example: form-login-order -->\s*```yaml\n(.*?)```", text, re.DOTALL)
    assert match, "docs/logins.md has no form-login-order example"
    with LoginSite(members_pages=2) as site:
        example = match.group(1).replace("http://members.example.org", site.base)
        example = example.replace("members.example.org", f"'127.0.0.1:{site.port}'")
        order_file = tmp_path / "order.yaml"
        order_file.write_text(f"extends: {EXAMPLE}\nname: login\n{example}", encoding="utf-8")
        order = load_order(
            order_file,
            [
                f"seeds.urls=['{site.base}/']",
                "seeds.file=null",
                "logging.console=false",
                "chains.pre.preselector.params.block_by_regex=.*/logout",
            ],
        )
        run = tmp_path / "run"
        assert CrawlController(order, run, install_signals=False).run() == 0
        posts = list(site.posts)
    assert len(posts) == 1
    uris = by_uri(parse_file(run / "logs" / "crawl.log"))
    assert all(uris[url].status == 200 for url in site.member_urls())


def test_a_cookies_file_that_is_not_cookies_txt_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "cookies.txt"
    bad.write_text("sid=1\n", encoding="utf-8")
    order = load_order(
        EXAMPLE,
        [
            "seeds.urls=['http://127.0.0.1:9/']",
            "seeds.file=null",
            "logging.console=false",
            f"chains.fetch.fetch_http.params.cookies_file={bad}",
        ],
    )
    with pytest.raises(OrderError, match=r"cookies_file: cannot be loaded: .*cookies\.txt:1"):
        CrawlController(order, tmp_path / "run", install_signals=False).run()
