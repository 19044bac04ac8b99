"""A seed that redirects to another host makes its target a seed whose prefix joins the scope;
an ordinary page's redirect does not; the new seed survives ``crawler resume``."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from support.crawllog_parser import parse_file
from support.route_server import NOT_FOUND, Answer, RouteServer, page, redirect

from crawler.control.controller import CrawlController
from crawler.order.loader import load_order
from crawler.seeds.seed_list import ADDED_SEEDS_FILE

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


class Sites:
    """127.0.0.1:P (also reached as localhost:P) and 127.0.0.1:Q, a port change away."""

    def __init__(self, stack: ExitStack) -> None:
        self.on_request: Callable[[str], None] = lambda where: None
        self.main = stack.enter_context(RouteServer(self._main))
        self.other = stack.enter_context(RouteServer(self._other))
        self.p, self.q = self.main.port, self.other.port

    def _main(self, host: str, path: str) -> Answer:
        self.on_request(host + path)
        if host == "127.0.0.1":
            if path == "/old/":  # seed 1 moved to another host name
                return redirect(f"http://localhost:{self.p}/new/", 301)
            if path == "/chain/":  # seed 2 moved to another port, in two steps
                return redirect(f"http://127.0.0.1:{self.q}/step/")
            if path == "/site/":  # seed 3, an ordinary page that links to a redirect
                return page("/site/moved")
            if path == "/site/moved":
                return redirect(f"http://localhost:{self.p}/elsewhere/")
        if host == "localhost":
            if path == "/new/":
                return page("/new/a.html")
            if path == "/new/a.html":
                return page("/new/b.html")
            if path == "/new/b.html":
                return page("/new/c.html")
            if path == "/new/c.html":
                return page("/new/d.html")
            if path in ("/new/d.html", "/elsewhere/x.html"):
                return page()
            if path == "/elsewhere/":
                return page("/elsewhere/x.html")
        return NOT_FOUND

    def _other(self, host: str, path: str) -> Answer:
        if path == "/step/":
            return redirect("/final/")
        if path == "/final/":
            return page("/final/page.html")
        if path == "/final/page.html":
            return page()
        return NOT_FOUND

    def seeds(self) -> list[str]:
        return [f"http://127.0.0.1:{self.p}/{name}/" for name in ("old", "chain", "site")]

    def hits(self, where: str) -> int:
        host, _, path = where.partition("/")
        server = self.other if host.endswith(f":{self.q}") else self.main
        return server.hits[host.rsplit(":", 1)[0] + "/" + path]


@pytest.fixture
def sites() -> Iterator[Sites]:
    with ExitStack() as stack:
        yield Sites(stack)


def crawl(sites: Sites, run_dir: Path, *sets: str, resume: bool = False) -> CrawlController:
    seeds = ", ".join(f"'{seed}'" for seed in sites.seeds())
    # The sites play public hosts on loopback (127.0.0.1 and localhost, several ports): a seed's
    # redirect target is no server the operator named, so loopback is allowed as a whole.
    allow = "fetch.allow_private=[127.0.0.0/8]"
    order = load_order(
        EXAMPLE, [f"seeds.urls=[{seeds}]", "seeds.file=null", "toe_threads=2", allow, *sets]
    )
    return CrawlController(order, run_dir, install_signals=False, resume=resume)


def test_a_seeds_redirect_target_is_crawled_as_a_seed(sites: Sites, tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert crawl(sites, run).run() == 0
    p, q = sites.p, sites.q
    for where in (
        f"localhost:{p}/new/a.html",
        f"localhost:{p}/new/b.html",
        f"localhost:{p}/new/c.html",
        f"localhost:{p}/new/d.html",
        f"127.0.0.1:{q}/final/page.html",
        f"localhost:{p}/elsewhere/",
    ):
        assert sites.hits(where) == 1, where
    # An ordinary page's redirect is followed, but its target's links stay out of scope.
    assert sites.hits(f"localhost:{p}/elsewhere/x.html") == 0
    lines = {line.uri: line for line in parse_file(run / "logs" / "crawl.log")}
    new = lines[f"http://localhost:{p}/new/"]
    assert (new.status, new.hops, new.via) == (200, "R", f"http://127.0.0.1:{p}/old/")
    assert lines[f"http://127.0.0.1:{q}/final/"].hops == "RR"
    report = (run / "reports" / "seeds-report.txt").read_text().splitlines()
    assert f"301 CRAWLED http://127.0.0.1:{p}/old/ http://localhost:{p}/new/" in report
    assert f"200 CRAWLED http://localhost:{p}/new/" in report
    assert f"302 CRAWLED http://127.0.0.1:{q}/step/ /final/" in report
    assert f"200 CRAWLED http://127.0.0.1:{q}/final/" in report
    assert not any("elsewhere" in row for row in report)
    added = (run / ADDED_SEEDS_FILE).read_text()
    assert f"http://localhost:{p}/new/  # redirect of http://127.0.0.1:{p}/old/\n" in added


def test_redirects_new_seeds_can_be_switched_off(sites: Sites, tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert crawl(sites, run, "seeds.redirects_new_seeds=false").run() == 0
    p = sites.p
    assert sites.hits(f"localhost:{p}/new/") == 1  # the redirect itself is still followed
    assert sites.hits(f"localhost:{p}/new/a.html") == 0
    assert not (run / ADDED_SEEDS_FILE).exists()


def test_the_new_seeds_scope_survives_a_resume(sites: Sites, tmp_path: Path) -> None:
    run = tmp_path / "run"
    first = crawl(sites, run, "toe_threads=1")
    stopped = threading.Event()

    def stop_at_b(where: str) -> None:
        # The crawl stops while b.html is fetched (its answer waits until the threads were told
        # to stop): its link to c.html is queued, not crawled.
        if where == "localhost/new/b.html" and not stopped.is_set():
            stopped.set()
            first.request_stop()
            while first.pool is None or not first.pool.stop_requested.wait(0.05):
                pass

    sites.on_request = stop_at_b
    assert first.run() == 0
    p = sites.p
    assert stopped.is_set() and sites.hits(f"localhost:{p}/new/c.html") == 0
    sites.on_request = lambda where: None
    assert crawl(sites, run, "toe_threads=1", resume=True).run() == 0
    # c.html was queued before the stop; its link to d.html (hops RLLLL), scoped after the
    # restart, is in scope only through the new seed's prefix.
    assert sites.hits(f"localhost:{p}/new/c.html") == 1
    assert sites.hits(f"localhost:{p}/new/d.html") == 1
    report = (run / "reports" / "seeds-report.txt").read_text().splitlines()
    assert f"200 CRAWLED http://localhost:{p}/new/" in report
