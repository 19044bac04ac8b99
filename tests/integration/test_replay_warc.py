"""Replay: every page fetched from a local site comes back byte for byte out of the WARC files.

The site is fetched with the real FetchHTTP and written by WARCWriterProcessor with the crawl
history on (so repeated payloads become revisit records); a tiny replay built on warcio's
ArchiveIterator (an index of WARC-Target-URI -> (file, offset), revisits followed through
WARC-Refers-To to the original response) must return the status, Content-Type and exact body the
server sent for every URL, including deduplicated ones, and across a recrawl that imports the
first crawl's history.
"""

from __future__ import annotations

import gzip
import random
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from support.processor_context import make_context
from warcio.archiveiterator import ArchiveIterator

from crawler import CrawlURI, ManualClock, ProcessorContext, RevisitInfo
from crawler.continuity import DigestIndex
from crawler.continuity.run_digest_index import open_run_digest_index
from crawler.history import CrawlHistory
from crawler.recording import Recording
from processors.fetch import FetchHTTP
from processors.write import WARCWriterParams, WARCWriterProcessor

pytestmark = pytest.mark.integration

WARCIO = Path(sys.executable).with_name("warcio")
_rng = random.Random(7)
PAGE_A = b"<html><body>" + b"page A text " * 400 + b"</body></html>"
PAGE_B = b"<html><body>" + b"page B other words " * 300 + b"</body></html>"
IMAGE = _rng.randbytes(60_000)
BIG = _rng.randbytes(5_000_000)  # past the writer's 4 MiB in-memory spool
NOT_FOUND = b"<html>no such page</html>"
GZ = gzip.compress(b"compressible text " * 2000)
CHUNKED = b"chunk-" * 5000


@dataclass(frozen=True)
class Served:
    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()

    @property
    def content_type(self) -> str | None:
        return dict(self.headers).get("Content-Type")


SITE: dict[str, Served] = {
    "/": Served(200, b'<html><a href="/a.html">a</a></html>', (("Content-Type", "text/html"),)),
    "/a.html": Served(200, PAGE_A, (("Content-Type", "text/html"),)),
    "/b.html": Served(200, PAGE_B, (("Content-Type", "text/html; charset=utf-8"),)),
    "/copy-of-a.html": Served(200, PAGE_A, (("Content-Type", "text/html"),)),
    "/img.png": Served(200, IMAGE, (("Content-Type", "image/png"),)),
    "/same-img.png": Served(200, IMAGE, (("Content-Type", "image/png"),)),
    "/again/img.png": Served(200, IMAGE, (("Content-Type", "image/x-png"),)),
    "/big.bin": Served(200, BIG, (("Content-Type", "application/octet-stream"),)),
    "/big-copy.bin": Served(200, BIG, (("Content-Type", "application/octet-stream"),)),
    "/gz.txt": Served(200, GZ, (("Content-Type", "text/plain"), ("Content-Encoding", "gzip"))),
    "/chunked.txt": Served(200, CHUNKED, (("Content-Type", "text/plain"),)),
    "/redirect": Served(301, b"", (("Location", "/a.html"),)),
    "/redirect2": Served(302, b"", (("Location", "/b.html"),)),
    "/missing": Served(404, NOT_FOUND, (("Content-Type", "text/html"),)),
    "/also-missing": Served(404, NOT_FOUND, (("Content-Type", "text/html"),)),
    "/etag.html": Served(200, PAGE_B + b"<!-- e -->", (("Content-Type", "text/html"),)),
}
ETAG = '"v1"'


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        served = SITE.get(self.path)
        if served is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path == "/etag.html" and self.headers.get("If-None-Match") == ETAG:
            self.send_response(304)
            self.send_header("ETag", ETAG)
            self.end_headers()
            return
        self.send_response(served.status)
        for name, value in served.headers:
            self.send_header(name, value)
        if self.path == "/etag.html":
            self.send_header("ETag", ETAG)
        if self.path == "/chunked.txt":
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(0, len(served.body), 7000):
                part = served.body[i : i + 7000]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
            return
        self.send_header("Content-Length", str(len(served.body)))
        self.end_headers()
        self.wfile.write(served.body)


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(5)


def make_ctx(
    run_dir: Path,
    clock: ManualClock,
    history: CrawlHistory | None,
    digests: DigestIndex | None = None,
) -> ProcessorContext:
    return make_context(run_dir, clock=clock, history=history, digest_index=digests, name="replay")


def crawl(
    base: str, run_dir: Path, clock: ManualClock, import_from: Path | None = None, **params: Any
) -> dict[str, CrawlURI]:
    """Fetch and write every page of SITE with 4 threads; return the processed CrawlURIs."""
    history = CrawlHistory.open(run_dir / "state", import_from=import_from)
    digests = open_run_digest_index(run_dir / "state", import_from=import_from)
    ctx = make_ctx(run_dir, clock, history, digests)
    fetcher = FetchHTTP("fetch_http")
    writer = WARCWriterProcessor("warc", WARCWriterParams(max_file_size_bytes=2_000_000, **params))
    fetcher.start(ctx)
    writer.start(ctx)

    def one(path: str) -> CrawlURI:
        curi = CrawlURI(base + path)
        fetcher.process(curi)
        writer.process(curi)
        curi.close_recording()
        return curi

    try:
        # Originals first (one thread), so which capture is the original is deterministic.
        done = {p: one(p) for p in ("/a.html", "/img.png", "/big.bin", "/missing")}
        with ThreadPoolExecutor(4) as pool:
            rest = [p for p in SITE if p not in done]
            done.update(zip(rest, pool.map(one, rest), strict=True))
    finally:
        writer.stop()
        fetcher.stop()
        history.close()
        digests.close()
    return done


# ----------------------------------------------------------------------------- the replay
@dataclass(frozen=True)
class Capture:
    path: Path
    offset: int
    kind: str
    date: str
    record_id: str
    refers_to: str | None
    profile: str | None


def index(warc_dirs: list[Path]) -> tuple[dict[str, list[Capture]], dict[str, Capture]]:
    """A CDX-like index: target URI -> captures (oldest first), record id -> capture."""
    by_uri: dict[str, list[Capture]] = {}
    by_id: dict[str, Capture] = {}
    for directory in warc_dirs:
        for path in sorted(directory.glob("*.warc.gz")):
            with path.open("rb") as handle:
                it = ArchiveIterator(handle)
                for rec in it:
                    if rec.rec_type not in ("response", "revisit"):
                        continue
                    h = rec.rec_headers
                    cap = Capture(
                        path,
                        it.get_record_offset(),
                        rec.rec_type,
                        h.get_header("WARC-Date"),
                        h.get_header("WARC-Record-ID"),
                        h.get_header("WARC-Refers-To"),
                        h.get_header("WARC-Profile"),
                    )
                    by_uri.setdefault(h.get_header("WARC-Target-URI"), []).append(cap)
                    by_id[cap.record_id] = cap
    for captures in by_uri.values():
        captures.sort(key=lambda cap: cap.date)
    return by_uri, by_id


def load(cap: Capture) -> tuple[int, dict[str, str], bytes]:
    """Status, HTTP headers and raw payload (as sent, transfer-coding removed) at an offset."""
    with cap.path.open("rb") as handle:
        handle.seek(cap.offset)
        rec = next(iter(ArchiveIterator(handle)))
        assert rec.rec_headers.get_header("WARC-Record-ID") == cap.record_id
        status = int(rec.http_headers.get_statuscode())
        headers = dict(rec.http_headers.headers)
        return status, headers, rec.raw_stream.read()


def replay(
    uri: str, by_uri: dict[str, list[Capture]], by_id: dict[str, Capture]
) -> tuple[int, dict[str, str], bytes]:
    """The latest capture of ``uri`` as a browser would get it back from the archive."""
    cap = by_uri[uri][-1]
    if cap.kind == "response":
        return load(cap)
    assert cap.refers_to is not None, "a revisit must name the record it refers to"
    original = by_id[cap.refers_to]
    assert original.kind == "response", "revisits refer to full responses, never chain"
    status, headers, body = load(original)
    if cap.profile is not None and cap.profile.endswith("/identical-payload-digest"):
        status, headers, _ = load(cap)  # this URI's own status and headers, the shared payload
    return status, headers, body


def assert_replays(base: str, warc_dirs: list[Path]) -> None:
    by_uri, by_id = index(warc_dirs)
    for path, served in SITE.items():
        status, headers, body = replay(base + path, by_uri, by_id)
        assert (status, body) == (served.status, served.body), path
        assert headers.get("Content-Type") == served.content_type, path


def warcio_check(warc_dir: Path) -> None:
    files = sorted(str(p) for p in warc_dir.iterdir())
    assert files and all(f.endswith(".warc.gz") for f in files), files
    result = subprocess.run([str(WARCIO), "check", *files], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


# ----------------------------------------------------------------------------- tests
def test_every_page_replays_with_the_bytes_served_including_deduplicated(
    site: str, tmp_path: Path
) -> None:
    curis = crawl(site, tmp_path / "run1", ManualClock())
    warc_dir = tmp_path / "run1" / "warcs"
    assert len(list(warc_dir.iterdir())) >= 2  # the big bodies forced a rollover
    warcio_check(warc_dir)
    assert_replays(site, [warc_dir])

    by_uri, _ = index([warc_dir])
    kinds = {path: by_uri[site + path][-1].kind for path in SITE}
    for dup in ("/copy-of-a.html", "/same-img.png", "/again/img.png", "/big-copy.bin"):
        assert kinds[dup] == "revisit", dup
        assert "duplicate:digest" in curis[dup].annotations
        assert curis[dup].revisit is not None
    assert kinds["/also-missing"] == "revisit"  # a 404 body seen before is a duplicate too
    for path in ("/a.html", "/b.html", "/img.png", "/gz.txt", "/chunked.txt", "/redirect"):
        assert kinds[path] == "response", path
    assert kinds["/redirect2"] == "response"  # empty payloads are never deduplicated
    assert "duplicate:digest" not in curis["/redirect2"].annotations


def test_a_recrawl_importing_the_history_writes_revisits_that_replay(
    site: str, tmp_path: Path
) -> None:
    clock = ManualClock()
    crawl(site, tmp_path / "run1", clock)
    clock.advance(86400)
    curis = crawl(site, tmp_path / "run2", clock, import_from=tmp_path / "run1")
    second = tmp_path / "run2" / "warcs"
    warcio_check(second)
    by_uri, _ = index([second])
    for path in SITE:
        if SITE[path].body:
            assert [c.kind for c in by_uri[site + path]] == ["revisit"], path
            assert curis[path].revisit is not None
    # The second crawl alone cannot replay, with the first crawl's WARCs it replays everything.
    assert_replays(site, [tmp_path / "run1" / "warcs", second])


def test_a_304_revisit_replays_the_original_capture(site: str, tmp_path: Path) -> None:
    clock = ManualClock()
    run = tmp_path / "run"
    crawl(site, run, clock)
    clock.advance(3600)
    history = CrawlHistory.open(run / "state")
    writer = WARCWriterProcessor("warc", WARCWriterParams(prefix="RECRAWL"))
    writer.start(make_ctx(run, clock, history))
    uri = site + "/etag.html"
    prev = history.fetch_history(uri)
    assert prev is not None and prev.etag == ETAG and prev.warc_record_id
    # What FetchHTTP does with a 304 to its If-None-Match (the request is sent by FetchHTTP).
    rec = Recording()
    rec.request_head = f"GET /etag.html HTTP/1.1\r\nIf-None-Match: {ETAG}\r\n\r\n".encode()
    rec.response_head = f"HTTP/1.1 304 Not Modified\r\nETag: {ETAG}\r\n\r\n".encode()
    curi = CrawlURI(uri, status=304, http_status=304, recording=rec)
    curi.fetch_start_ms = int(clock.time() * 1000)
    curi.response_headers = [("ETag", ETAG)]
    curi.revisit = RevisitInfo(
        "server-not-modified", uri, prev.warc_date or "", prev.warc_record_id, prev.payload_digest
    )
    writer.process(curi)
    writer.stop()
    after = history.fetch_history(uri)
    history.close()
    assert "duplicate:server-not-modified" in curi.annotations
    assert after is not None and after.warc_record_id == prev.warc_record_id
    assert after.payload_digest == prev.payload_digest and after.status == 304

    warcio_check(run / "warcs")
    by_uri, by_id = index([run / "warcs"])
    latest = by_uri[uri][-1]
    assert latest.kind == "revisit" and latest.profile is not None
    assert latest.profile.endswith("/warc/1.1/revisit/server-not-modified")
    status, headers, body = replay(uri, by_uri, by_id)
    assert (status, body) == (200, SITE["/etag.html"].body)
    assert headers["ETag"] == ETAG and headers["Content-Type"] == "text/html"
