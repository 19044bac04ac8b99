"""Whole crawls (LevelDB frontier) of real local servers: a deferral for a prerequisite (robots.txt,
a form login) costs a URI none of its tries, and a server that breaks HTTP is given up on soon.

* ``max_retries: 0`` still crawls the site (the seed is deferred for its robots.txt first);
* a form login with ``max_retries: 2`` (the seed is deferred for robots.txt, then for two login
  steps) still reaches the public and the members pages;
* a seed fetched once shows no ``Nt`` annotation in crawl.log;
* a malformed status line, bad chunked encoding, a body shorter than its Content-Length: the
  same error twice ends the URI (``-3``, ``2t``, ``protocolError``) after
  ``protocol_retry_delay_s``, not after ``max_retries`` tries ``retry_delay_s`` (900 s) apart;
* while URIs wait for a retry, status.json / ``crawler status`` and the frontier report show
  each one's last error and when it comes back, and the ETA covers that wait.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from support.broken_site import BROKEN, BrokenSite
from support.crawllog_parser import CrawlLogLine, parse_file
from support.login_site import LoginSite

from crawler.cli.display import format_status
from crawler.control.controller import CrawlController
from crawler.order.loader import load_order
from crawler.reports.status import read_status

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]


def quick(seed: str, *extra: str) -> list[str]:
    """Settings crawling one local site at once; retries keep the order's defaults."""
    return [
        f"seeds.urls={json.dumps([seed])}",
        "seeds.file=null",
        "toe_threads=3",
        "frontier.politeness.delay_factor=0",
        "frontier.politeness.min_delay_ms=0",
        "frontier.politeness.max_delay_ms=0",
        "logging.console=false",
        "limits.max_time_s=60",
        "chains.pre.preselector.params.block_by_regex=.*/logout",
        *extra,
    ]


def run(run_dir: Path, sets: list[str]) -> dict[str, CrawlLogLine]:
    controller = CrawlController(load_order(EXAMPLE, sets), run_dir, install_signals=False)
    assert controller.run() == 0
    assert controller.exit_status == "Finished"
    lines = parse_file(run_dir / "logs" / "crawl.log")
    return {line.uri: line for line in lines if "formLogin:ok" not in line.annotations}


def tries(line: CrawlLogLine) -> int:
    marks = [a for a in line.annotations if a.endswith("t") and a[:-1].isdigit()]
    return int(marks[0][:-1]) if marks else 1


def login(site: LoginSite) -> str:
    cred = {
        "domain": f"127.0.0.1:{site.port}",
        "login_uri": f"{site.base}/login",
        "fields": {"user": "alice", "pass": "s3cret"},
    }
    return "chains.fetch.fetch_http.params.form_logins=" + json.dumps([cred])


def test_max_retries_0_still_crawls_the_site(tmp_path: Path) -> None:
    with LoginSite() as site:
        lines = run(tmp_path / "run", quick(site.base + "/", "frontier.retries.max_retries=0"))
        requests = list(site.requests)
    seed = lines[site.base + "/"]
    assert seed.status == 200
    assert tries(seed) == 1 and not any(a.endswith("t") for a in seed.annotations)
    assert lines[site.base + "/about.html"].status == 200
    assert [r for r in requests if r[1] == "/"] == [("GET", "/")]  # one GET, one try


def test_a_form_login_with_max_retries_2_reaches_public_and_members_pages(tmp_path: Path) -> None:
    with LoginSite(members_pages=2) as site:
        lines = run(
            tmp_path / "run", quick(site.base + "/", "frontier.retries.max_retries=2", login(site))
        )
        posts = list(site.posts)
    assert len(posts) == 1
    seed = lines[site.base + "/"]
    assert seed.status == 200 and tries(seed) == 1  # deferred three times, fetched once
    assert lines[site.base + "/about.html"].status == 200
    for url in site.member_urls():
        assert lines[url].status == 200, url


def test_a_server_that_breaks_http_is_given_up_on_soon(tmp_path: Path) -> None:
    """``retry_delay_s`` stays 900 s: were a malformed response retried like a timeout, the
    crawl would outlast the test's timeout."""
    with BrokenSite() as site:
        sets = quick(site.url("/"), "frontier.retries.protocol_retry_delay_s=0.2")
        lines = run(tmp_path / "run", sets)
        hits = {path: site.hits(path) for path in BROKEN}
    for path in ("/bad-status.html", "/bad-chunks.html", "/short-body.html"):
        line = lines[site.url(path)]
        assert line.status == -3, path
        assert "err=RemoteProtocolError" in line.annotations, path
        assert "protocolError" in line.annotations, path
        assert tries(line) == 2 and hits[path] == 2, path  # the same error twice: given up
    changing = lines[site.url("/short-changing.html")]
    assert (changing.status, tries(changing), hits["/short-changing.html"]) == (-3, 3, 3)
    assert lines[site.url("/fine.html")].status == 200
    assert tries(lines[site.url("/")]) == 1  # deferred for robots.txt, fetched once: no "2t"


def test_status_and_report_show_a_uri_waiting_for_its_retry(tmp_path: Path) -> None:
    """A crawl whose one queue waits for a retry (its other URIs behind it): ``crawler status``
    gives the error and an ETA as long as the wait, the frontier report lists it."""
    run_dir = tmp_path / "run"
    with BrokenSite() as site:
        sets = quick(site.url("/"), "frontier.retries.protocol_retry_delay_s=600")
        controller = CrawlController(load_order(EXAMPLE, sets), run_dir, install_signals=False)
        runner = threading.Thread(target=controller.run, daemon=True)
        runner.start()
        deadline = time.monotonic() + 30
        doc: dict[str, Any] = {}
        while time.monotonic() < deadline and not doc.get("retrying", {}).get("uris"):
            time.sleep(0.1)
            doc = read_status(run_dir) or {}
        controller.request_stop()
        runner.join(30)
    assert not runner.is_alive()
    retrying = doc["retrying"]
    assert retrying["uris"] == 1
    assert 500 < retrying["last_due_in_s"] <= 600
    assert doc["eta_s"] >= retrying["last_due_in_s"]  # not the seconds the queue count suggests
    (entry,) = retrying["soonest"]
    assert entry["uri"] == site.url("/bad-status.html")  # the first link, first in its queue
    assert entry["error"].startswith("RemoteProtocolError: malformed status line")
    assert (entry["status"], entry["attempts"]) == (-3, 1)
    text = format_status(doc)
    assert "1 URI waiting for a retry" in text
    assert "the last retry in 0:" in text
    assert f"-3 1t  {site.url('/bad-status.html')}  RemoteProtocolError" in text
    report = (run_dir / "reports" / "frontier-summary-report.txt").read_text(encoding="utf-8")
    assert " URIs waiting: 1" in report
    assert f"-3 1t {site.url('/bad-status.html')} RemoteProtocolError: malformed status" in report
