"""A recrawl of a site behind a form login: it logs in again (login steps are never
conditional), and the members pages, answered 304 with the session, still lead to each other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from recrawl_support import crawl_log, not_modified, reached
from support.login_site import PASSWORD, USER, LoginSite

from crawler.control.controller import CrawlController
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


def crawl(site: LoginSite, run: Path, *settings: str) -> None:
    cred = {
        "domain": f"127.0.0.1:{site.port}",
        "login_uri": f"{site.base}/login",
        "fields": {"user": USER, "pass": PASSWORD},
    }
    order = load_order(
        EXAMPLE,
        [
            f"seeds.urls={[site.base + '/']!r}",
            "seeds.file=null",
            "toe_threads=2",
            "logging.console=false",
            "chains.pre.preselector.params.block_by_regex=.*/logout",
            "chains.fetch.fetch_http.params.form_logins=" + json.dumps([cred]),
            *settings,
        ],
    )
    assert CrawlController(order, run, install_signals=False).run() == 0


def test_a_recrawl_behind_a_form_login_reaches_every_members_page(tmp_path: Path) -> None:
    with LoginSite(members_pages=4, validators=True) as site:
        first, second = tmp_path / "first", tmp_path / "second"
        crawl(site, first)
        members = set(site.member_urls())
        assert members <= {u for u, line in crawl_log(first).items() if line.status == 200}
        with site.lock:
            site.posts.clear()
            site.members_hits.clear()
        crawl(site, second, f"history.import_from={str(first)!r}")
        posts, hits = list(site.posts), list(site.members_hits)
    assert len(posts) == 1  # logged in again, once
    assert hits and all(valid for _, valid in hits)  # never without the session
    assert members <= not_modified(second)
    assert reached(second) >= reached(first) - {site.base + "/logout"}
    log = crawl_log(second)
    for url in members - {site.base + "/members/"}:
        assert log[url].via == site.base + "/members/", url
