"""A seed-list line ``<uri> max_hops=2`` limits that seed's part of a real crawl to 2 hops while
another seed keeps the scope's 20, also when the crawl is resumed with the seeds still queued
(the limit travels in the frontier's records, not in the order)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from support.crawllog_parser import parse_file

from crawler.control.controller import CrawlController
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
DEPTH = 8

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


@pytest.fixture
def origin() -> Iterator[tuple[str, list[str]]]:
    """``/a/`` → ``/a/1`` → … → ``/a/8``, the same under ``/b/``."""
    requested: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requested.append(self.path)
            parts = self.path.strip("/").split("/")
            if parts[0] in ("a", "b") and len(parts) <= 2:
                level = int(parts[1]) if len(parts) == 2 else 0
                link = f'<a href="/{parts[0]}/{level + 1}">next</a>' if level < DEPTH else ""
                body = f"<html><body>{link}</body></html>".encode()
                self.send_response(200)
            else:
                body = b"not found"
                self.send_response(404)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", requested
    server.shutdown()
    server.server_close()


def settings(seed_lines: list[str], *more: str) -> list[str]:
    return [
        f"seeds.urls={seed_lines}",
        "seeds.file=null",
        "toe_threads=2",
        "logging.console=false",
        *more,
    ]


def fetched_paths(requested: list[str]) -> set[str]:
    return {p for p in requested if p.startswith(("/a/", "/b/"))}


EXPECTED = {"/a/", "/a/1", "/a/2", "/b/"} | {f"/b/{n}" for n in range(1, DEPTH + 1)}


def test_a_seeds_own_hop_limit_bounds_its_part_of_the_crawl(
    origin: tuple[str, list[str]], tmp_path: Path
) -> None:
    base, requested = origin
    order = load_order(EXAMPLE, settings([f"{base}/a/ max_hops=2", f"{base}/b/"]))
    controller = CrawlController(order, tmp_path / "run", install_signals=False)
    assert controller.run() == 0
    assert fetched_paths(requested) == EXPECTED
    lines = parse_file(tmp_path / "run" / "logs" / "crawl.log")
    assert {line.hops for line in lines if "/a/" in line.uri} == {"-", "L", "LL"}


def test_the_limit_survives_a_resume(origin: tuple[str, list[str]], tmp_path: Path) -> None:
    base, requested = origin
    run = tmp_path / "run"
    seeds = [f"{base}/a/ max_hops=2", f"{base}/b/"]
    first = CrawlController(
        load_order(EXAMPLE, settings(seeds, "pause_at_start=true")), run, install_signals=False
    )
    ended = threading.Event()
    runner = threading.Thread(target=lambda: (first.run(), ended.set()), daemon=True)
    runner.start()
    while first.state != "PAUSED" and runner.is_alive():
        ended.wait(0.05)
    first.request_stop("Finished - Ended by operator")
    runner.join(30)
    assert ended.is_set() and not fetched_paths(requested)  # the seeds wait in the frontier

    # Resumed with seed lines that no longer say max_hops: the queued seed still carries it.
    second = CrawlController(
        load_order(EXAMPLE, settings([f"{base}/a/", f"{base}/b/"])),
        run,
        install_signals=False,
        resume=True,
    )
    assert second.run() == 0
    assert fetched_paths(requested) == EXPECTED
