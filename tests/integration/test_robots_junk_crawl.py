"""A crawl obeys the last group of a 400 KB robots.txt full of junk (RFC 9309 §2.2)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from support.crawllog_parser import parse_file
from support.route_server import NOT_FOUND, Answer, RouteServer, page

from crawler.control.controller import CrawlController
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


def junk_robots() -> bytes:
    """~400 KB: a BOM, binary noise with NULs, invalid UTF-8, a 100 KB line, unknown fields and
    an HTML page, then the only group, which disallows /private/."""
    rng = random.Random(9309)
    parts = [
        b"\xef\xbb\xbf# robots.txt of a misconfigured server\n",
        rng.randbytes(110_000),
        b"\n" + bytes(rng.randrange(0x80, 0x100) for _ in range(50_000)) + b"\n",
        b"\x00" * 20_000,
        b"Comment-ish " + b"z" * 100_000 + b"\n",
        b"".join(f"X-Unknown-{n}: {n}\n".encode() for n in range(3_000)),
        b"<html><body>" + b"<p>User agent: Disallow: Allow:</p>\n" * 2_000 + b"</body></html>\n",
        b"User-agent: *\nDisallow: /private/\n",
    ]
    return b"".join(parts)


def test_the_final_group_of_a_400_kb_junk_robots_txt_is_obeyed(tmp_path: Path) -> None:
    robots = junk_robots()
    assert 400 * 1024 <= len(robots) <= 512 * 1024

    def route(host: str, path: str) -> Answer:
        if path == "/robots.txt":
            return 200, {"Content-Type": "text/plain"}, robots
        if path == "/":
            return page("/public.html", "/private/secret.html", "/private/")
        if path == "/public.html":
            return page()
        if path.startswith("/private/"):
            return page()
        return NOT_FOUND

    with RouteServer(route) as server:
        origin = server.origin()
        order = load_order(
            EXAMPLE, [f"seeds.urls=['{origin}/']", "seeds.file=null", "toe_threads=2"]
        )
        assert CrawlController(order, tmp_path / "run", install_signals=False).run() == 0
        hits = dict(server.hits)
    status = {
        line.uri.removeprefix(origin): line.status
        for line in parse_file(tmp_path / "run" / "logs" / "crawl.log")
    }
    assert status["/robots.txt"] == 200
    assert status["/public.html"] == 200
    assert status["/private/secret.html"] == -9998
    assert status["/private/"] == -9998
    assert not [path for path in hits if "/private/" in path]


def test_a_robots_txt_cut_short_by_max_length_loses_its_partial_last_line(
    tmp_path: Path,
) -> None:
    head = b"User-agent: *\nDisallow: /\n"
    robots = head + b"Allow: /public.html\n"
    cut = len(head) + len(b"Allow: /")  # read as it is, the cut line would allow everything

    def route(host: str, path: str) -> Answer:
        if path == "/robots.txt":
            return 200, {"Content-Type": "text/plain"}, robots
        return page("/public.html") if path == "/" else page()

    with RouteServer(route) as server:
        origin = server.origin()
        order = load_order(
            EXAMPLE,
            [
                f"seeds.urls=['{origin}/']",
                "seeds.file=null",
                f"chains.fetch.fetch_http.params.max_length_bytes={cut}",
            ],
        )
        assert CrawlController(order, tmp_path / "run", install_signals=False).run() == 0
        hits = dict(server.hits)
    lines = {line.uri: line for line in parse_file(tmp_path / "run" / "logs" / "crawl.log")}
    assert "lenTrunc" in lines[origin + "/robots.txt"].annotations
    assert lines[origin + "/"].status == -9998
    assert hits == {"127.0.0.1/robots.txt": 1}
