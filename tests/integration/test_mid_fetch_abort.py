"""Mid-fetch abort: FetchHTTP's should_fetch_body_rule, asked on the response head, stops the
download of a large video (by MIME type or by Content-Length) on both client paths; the server
sees the connection closed long before the body's end, crawl.log shows ``midFetchAbort`` and
the WARC, which holds the head only, reads cleanly."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from support.crawllog_parser import parse_file
from warcio.archiveiterator import ArchiveIterator

from crawler.control.controller import CrawlController
from crawler.order.errors import OrderError
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
VIDEO_BYTES = 1 << 30
CHUNK = b"\0" * 65536

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


class VideoSite:
    """A page linking a 1 GiB video (sent chunk by chunk until the client hangs up), an mp4
    of another type, and a small text; records what the video handler saw."""

    def __init__(self) -> None:
        self.sent = 0
        self.ended_by: str | None = None
        self.done = threading.Event()
        self.links = ["/video.mp4", "/small.txt"]
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                if self.path in ("/video.mp4", "/big.bin"):
                    self.send_response(200)
                    ctype = "video/mp4" if self.path == "/video.mp4" else "application/x-big"
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(VIDEO_BYTES))
                    self.end_headers()
                    site.stream(self.wfile, self.path)
                    self.close_connection = True
                    return
                anchors = "".join(f'<a href="{link}">x</a>' for link in site.links)
                body = f"<html><body>{anchors}</body></html>".encode()
                texts = {
                    "/small.txt": b"small",
                    "/robots.txt": b"User-agent: *\nDisallow: /private\n",
                }
                if self.path != "/":
                    body = texts.get(self.path, b"not found")
                self.send_response(200 if self.path == "/" or self.path in texts else 404)
                self.send_header("Content-Type", "text/html" if self.path == "/" else "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"

    def stream(self, wfile: socket.SocketIO, path: str) -> None:
        sent = 0
        ended_by = "complete"
        try:
            while sent < VIDEO_BYTES:
                wfile.write(CHUNK)
                sent += len(CHUNK)
        except OSError as exc:
            ended_by = type(exc).__name__
        if path == "/video.mp4":
            self.sent, self.ended_by = sent, ended_by
            self.done.set()


@pytest.fixture
def site() -> Iterator[VideoSite]:
    s = VideoSite()
    thread = threading.Thread(target=s.server.serve_forever, daemon=True)
    thread.start()
    yield s
    s.server.shutdown()
    s.server.server_close()


def crawl(site: VideoSite, tmp_path: Path, rule: str, *extra: str) -> dict[str, object]:
    order = load_order(
        EXAMPLE,
        [
            f"seeds.urls=['{site.origin}/']",
            "seeds.file=null",
            "toe_threads=2",
            "logging.console=false",
            f"chains.fetch.fetch_http.params.should_fetch_body_rule={rule}",
            *extra,
        ],
    )
    controller = CrawlController(order, tmp_path / "run", install_signals=False)
    assert controller.run() == 0
    return {
        line.uri.removeprefix(site.origin): line
        for line in parse_file(tmp_path / "run" / "logs" / "crawl.log")
    }


BY_MIME = (
    "[{class: crawler.decide.ContentTypeMatchesRegexDecideRule,"
    " params: {decision: REJECT, regex: 'video/.*'}}]"
)
BY_LENGTH = (
    "[{class: crawler.decide.ContentLengthDecideRule,"
    " params: {content_length_threshold: 10000000}}]"
)


@pytest.mark.parametrize("client", ["http11", "httpx"])
def test_video_aborted_by_mime_type(site: VideoSite, tmp_path: Path, client: str) -> None:
    extra = ["chains.fetch.fetch_http.params.http2=true"] if client == "httpx" else []
    lines = crawl(site, tmp_path, BY_MIME, *extra)
    assert site.done.wait(10)
    assert site.ended_by in ("BrokenPipeError", "ConnectionResetError")
    assert site.sent < VIDEO_BYTES // 8
    video = lines["/video.mp4"]
    assert video.status == 200 and video.mime == "video/mp4"  # type: ignore[attr-defined]
    assert "midFetchAbort" in video.annotations  # type: ignore[attr-defined]
    assert video.size == 0  # type: ignore[attr-defined]
    assert "midFetchAbort" not in lines["/small.txt"].annotations  # type: ignore[attr-defined]
    records = {}
    for path in sorted((tmp_path / "run" / "warcs").glob("*.warc.gz")):
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream, check_digests=True):
                if record.rec_type == "response":
                    records[record.rec_headers.get_header("WARC-Target-URI")] = (
                        record.rec_headers.get_header("WARC-Truncated"),
                        record.http_headers.get_statuscode(),
                        record.content_stream().read(),
                    )
    assert records[site.origin + "/video.mp4"] == ("unspecified", "200", b"")
    assert records[site.origin + "/small.txt"] == (None, "200", b"small")


def test_large_body_aborted_by_content_length(site: VideoSite, tmp_path: Path) -> None:
    site.links.append("/big.bin")
    lines = crawl(site, tmp_path, BY_LENGTH)
    for path in ("/video.mp4", "/big.bin"):
        assert "midFetchAbort" in lines[path].annotations, path  # type: ignore[attr-defined]
    assert "midFetchAbort" not in lines["/"].annotations  # type: ignore[attr-defined]
    assert site.done.wait(10) and site.sent < VIDEO_BYTES // 8
    # The run's own copy of the order (what `crawler resume` reads) keeps the rule.
    again = load_order(tmp_path / "run" / "order.effective.yaml", [])
    fetch_http = next(p for p in again.chains.fetch if p.name == "fetch_http")
    assert fetch_http.params["should_fetch_body_rule"][0]["params"] == {
        "content_length_threshold": 10000000
    }


def test_robots_txt_is_read_whole_whatever_the_rule(site: VideoSite, tmp_path: Path) -> None:
    site.links = ["/small.txt", "/private/page.html"]
    rule = (
        "[{class: crawler.decide.ContentTypeMatchesRegexDecideRule,"
        " params: {decision: REJECT, regex: 'text/plain.*'}}]"
    )
    lines = crawl(site, tmp_path, rule)
    robots = lines["/robots.txt"]
    assert robots.status == 200 and robots.size > 0  # type: ignore[attr-defined, operator]
    assert "midFetchAbort" not in robots.annotations  # type: ignore[attr-defined]
    assert lines["/private/page.html"].status == -9998  # type: ignore[attr-defined]
    assert "midFetchAbort" in lines["/small.txt"].annotations  # type: ignore[attr-defined]


def test_bad_body_rule_is_an_order_error_with_its_path(tmp_path: Path) -> None:
    with pytest.raises(OrderError) as err:
        load_order(
            EXAMPLE,
            [
                "chains.fetch.fetch_http.params.should_fetch_body_rule="
                "[{class: crawler.decide.NoSuchRule}]"
            ],
        )
    text = str(err.value)
    assert "should_fetch_body_rule" in text and "NoSuchRule" in text
