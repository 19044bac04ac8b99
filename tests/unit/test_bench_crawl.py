"""The crawl benchmark's logic: generated corpus, ground-truth walker, log scoring, profile fold."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "crawl"
sys.path.insert(0, str(BENCH))

import gensite  # noqa: E402
import linkgraph  # noqa: E402
import profile_crawl  # noqa: E402
import run_bench  # noqa: E402
from nginx_server import parse_log  # noqa: E402


def test_pages_are_deterministic_with_forty_links_and_about_15_kb() -> None:
    page = gensite.render_page(3, 17, 500, 4, 18101)
    assert page == gensite.render_page(3, 17, 500, 4, 18101)
    assert page != gensite.render_page(2, 17, 500, 4, 18101)
    assert page.count("<a href=") == gensite.LINKS_PER_PAGE
    assert 14_000 <= len(page) <= 16_000
    assert "http://127.0.0.1:181" in page  # some links lead to other hosts


def test_every_generated_page_is_reachable_from_the_host_roots(tmp_path: Path) -> None:
    site = tmp_path / "site"
    assert gensite.generate(site, pages=400, hosts=4, port_base=18101, workers=1) > 0
    assert gensite.is_generated(site, 400, 4, 18101)
    assert gensite.generate(site, pages=400, hosts=4, port_base=18101) == 0.0
    roots = {f"http://127.0.0.1:{18101 + h}": site / f"h{h:02d}" for h in range(4)}
    truth = linkgraph.walk(roots, [o + "/" for o in roots])
    # 400 pages, 3 shared requisites per host, one banner image per directory of 100 pages
    assert len(truth.ok) == 400 + 4 * 3 + 4
    assert truth.html_pages == 400
    assert not truth.missing
    assert "http://127.0.0.1:18103/d000/p99.html" in truth.ok


def test_walker_follows_only_the_four_link_kinds_and_dir_redirects(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "index.html").write_text(
        '<a href="sub">dir</a><iframe src="frame.html"></iframe>'
        '<img src="x.png"><a href="gone.html#top">gone</a><a href="https://other.example/">x</a>'
    )
    (tmp_path / "sub" / "index.html").write_text('<base href="/sub/deep/"><a href="../y.css">y</a>')
    (tmp_path / "sub" / "y.css").write_text("")
    (tmp_path / "x.png").write_bytes(b"png")
    (tmp_path / "frame.html").write_text("")
    truth = linkgraph.walk({"http://127.0.0.1:9": tmp_path}, ["http://127.0.0.1:9/"])
    base = "http://127.0.0.1:9"
    assert truth.ok == {base + "/", base + "/x.png", base + "/sub/", base + "/sub/y.css"}
    assert truth.redirects == {base + "/sub"}
    assert truth.missing == {base + "/gone.html"}


def test_canonical_form_matches_log_urls_to_page_urls() -> None:
    assert linkgraph.canonical("HTTP://127.0.0.1:80/a%7eb/c d.html#x") == (
        "http://127.0.0.1:80/a~b/c%20d.html"
    )
    assert linkgraph.canonical("http://127.0.0.1/") == "http://127.0.0.1:80/"
    assert linkgraph.canonical("http://h:8/p?v=1") == "http://h:8/p?v=1"
    assert linkgraph.canonical("mailto:a@b") == ""


def test_score_counts_duplicates_and_coverage_from_the_access_log() -> None:
    log = (
        '1.5 "GET / HTTP/1.1" 200 10 127.0.0.1:9\n'
        '1.6 "GET /a.html HTTP/1.1" 200 20 127.0.0.1:9\n'
        '1.7 "GET /a.html HTTP/1.1" 200 20 127.0.0.1:9\n'
        '1.8 "GET /robots.txt HTTP/1.1" 404 5 127.0.0.1:9\n'
        "garbage line\n"
    )
    entries = parse_log(log)
    assert len(entries) == 4
    truth = {"http://127.0.0.1:9/", "http://127.0.0.1:9/a.html", "http://127.0.0.1:9/b.html"}
    s = run_bench.score(entries, truth)
    assert (s["requests"], s["duplicates"], s["pages"], s["covered"]) == (4, 1, 2, 2)
    assert abs(s["coverage"] - 2 / 3) < 1e-9
    assert s["statuses"] == {"200": 3, "404": 1}


def test_profile_fold_counts_cumulative_once_per_stack() -> None:
    raw = (
        "run (/x/crawler/control/toepool.py:10);f (/x/a.py:3);f (/x/a.py:4) 3\n"
        "run (/x/crawler/control/toepool.py:10);g (/usr/lib/python3.11/threading.py:9) 1\n"
    )
    total, cumulative, own = profile_crawl.fold(raw)
    assert total == 4
    assert cumulative["/x/a.py:f"] == 3  # recursion is not counted twice
    assert own["stdlib/threading.py:g"] == 1
