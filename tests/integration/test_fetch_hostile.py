"""FetchHTTP against misbehaving servers: resets, trickles, bombs, huge bodies, a stop."""

from __future__ import annotations

import gzip
import socket
import struct
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import brotlicffi as brotli  # type: ignore[import-untyped]
import pytest
from support.fetch_support import RawServer, RssSampler, fetch, make_ctx

from crawler import CrawlURI, ProcessorContext, Recording
from processors.fetch import FetchHTTP, FetchHTTPParams

pytestmark = pytest.mark.integration

DECODE_CAP = 1 << 20


def started(ctx: ProcessorContext, **params: Any) -> FetchHTTP:
    proc = FetchHTTP("fetch_http", FetchHTTPParams(**params))
    proc.start(ctx)
    return proc


@pytest.fixture
def ctx(tmp_path: Path) -> ProcessorContext:
    return make_ctx(tmp_path)


@pytest.fixture
def fetcher(ctx: ProcessorContext) -> Iterator[FetchHTTP]:
    proc = started(ctx)
    yield proc
    proc.stop()


def recording(curi: CrawlURI) -> Recording:
    assert isinstance(curi.recording, Recording)
    return curi.recording


def serve_body(body: bytes, *headers: str) -> Any:
    head = "HTTP/1.1 200 OK\r\n" + "".join(h + "\r\n" for h in headers)
    head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"

    def handle(conn: socket.socket, _: bytes) -> None:
        conn.sendall(head.encode() + body)

    return handle


def _gzip_zeros(total_bytes: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1 << 20)
    return b"".join(compressor.compress(block) for _ in range(total_bytes >> 20)) + (
        compressor.flush()
    )


@pytest.fixture(scope="module")
def gzip_bomb() -> bytes:
    """256 MiB of zeros, gzipped twice: about 2 KB on the wire."""
    return gzip.compress(_gzip_zeros(256 << 20), 9)


@pytest.fixture(scope="module")
def brotli_bomb() -> bytes:
    """1 GiB of zeros as brotli: about 1.6 KB on the wire."""
    compressor = brotli.Compressor(quality=5)
    block = bytes(1 << 20)
    return bytes(b"".join(compressor.process(block) for _ in range(1024)) + compressor.finish())


def test_reset_mid_headers_is_minus_3(fetcher: FetchHTTP) -> None:
    def handle(conn: socket.socket, _: bytes) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/ht")
        # SO_LINGER 0: close() sends RST instead of FIN.
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    with RawServer(handle) as server:
        curi = fetch(fetcher, server.base + "/")
    assert curi.status == -3
    assert curi.recording is None
    assert any(a.startswith("err=") for a in curi.annotations)


def test_trickling_header_block_bounded_by_total_timeout(ctx: ProcessorContext) -> None:
    def handle(conn: socket.socket, _: bytes) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\n")
        i = 0
        while not server.release.wait(0.05):
            conn.sendall(b"X-Drip-%d: y\r\n" % i)
            i += 1

    proc = started(ctx, timeout_s=0.5, read_timeout_s=30)
    try:
        with RawServer(handle) as server:
            began = time.monotonic()
            curi = fetch(proc, server.base + "/")
            elapsed = time.monotonic() - began
    finally:
        proc.stop()
    assert curi.status == -4
    assert "err=ReadTimeout" in curi.annotations
    # the total timeout (0.5 s) ended it: the headers never end; late on a loaded machine
    assert 0.4 <= elapsed < 15


def test_gzip_bomb_stored_raw_and_decoded_capped(fetcher: FetchHTTP, gzip_bomb: bytes) -> None:
    handle = serve_body(gzip_bomb, "Content-Type: text/html", "Content-Encoding: gzip, gzip")
    with RawServer(handle) as server:
        curi = fetch(fetcher, server.base + "/bomb")
    assert curi.status == 200
    rec = recording(curi)
    assert rec.body_bytes() == gzip_bomb
    assert curi.content_size == len(gzip_bomb)
    with RssSampler() as rss:
        decoded = rec.decoded_body(curi.header("content-encoding"), DECODE_CAP)
    assert decoded == bytes(DECODE_CAP)
    assert rss.growth_mb < 40


def test_brotli_bomb_decoded_capped(fetcher: FetchHTTP, brotli_bomb: bytes) -> None:
    handle = serve_body(brotli_bomb, "Content-Type: text/html", "Content-Encoding: br")
    with RawServer(handle) as server:
        curi = fetch(fetcher, server.base + "/bomb")
    assert curi.status == 200
    assert recording(curi).body_bytes() == brotli_bomb
    with RssSampler() as rss:
        decoded = recording(curi).decoded_body("br", DECODE_CAP)
    assert decoded == bytes(DECODE_CAP)
    assert rss.growth_mb < 40


def test_large_body_spooled_to_disk_with_bounded_memory(fetcher: FetchHTTP) -> None:
    size = 64 << 20
    block = bytes(range(256)) * 4096  # 1 MiB

    def handle(conn: socket.socket, _: bytes) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % size)
        for _i in range(size // len(block)):
            conn.sendall(block)

    with RawServer(handle) as server, RssSampler() as rss:
        curi = fetch(fetcher, server.base + "/big")
    assert curi.status == 200
    assert curi.content_size == size
    assert "lenTrunc" not in curi.annotations and "timeTrunc" not in curi.annotations
    assert rss.growth_mb < 32
    rec = recording(curi)
    stream = rec.body_stream()
    assert stream.read(len(block)) == block
    assert stream.fileno() >= 0  # rolled over to a real temp file


def test_stopping_crawl_cuts_a_slow_download(tmp_path: Path) -> None:
    stopping = threading.Event()
    ctx = make_ctx(tmp_path, stopping=stopping)

    def handle(conn: socket.socket, _: bytes) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\nstart")
        while not server.release.wait(0.1):
            conn.sendall(b"x")

    proc = started(ctx, timeout_s=60, read_timeout_s=30, stop_grace_s=0.2)
    try:
        with RawServer(handle) as server:
            timer = threading.Timer(0.3, stopping.set)
            timer.start()
            began = time.monotonic()
            curi = fetch(proc, server.base + "/slow")
            elapsed = time.monotonic() - began
            timer.join()
    finally:
        proc.stop()
    assert curi.status == 200
    assert "stopTrunc" in curi.annotations
    assert recording(curi).truncated == "unspecified"
    assert recording(curi).body_bytes().startswith(b"start")
    assert elapsed < 15  # the grace period, not the 30 s read timeout (late if loaded)


def test_stopping_crawl_abandons_a_silent_server_as_retryable(tmp_path: Path) -> None:
    stopping = threading.Event()
    ctx = make_ctx(tmp_path, stopping=stopping)

    def handle(conn: socket.socket, _: bytes) -> None:
        server.release.wait(10)

    proc = started(ctx, timeout_s=60, read_timeout_s=30, stop_grace_s=0.1)
    try:
        with RawServer(handle) as server:
            timer = threading.Timer(0.2, stopping.set)
            timer.start()
            began = time.monotonic()
            curi = fetch(proc, server.base + "/silent")
            elapsed = time.monotonic() - began
            timer.join()
    finally:
        proc.stop()
    assert curi.status == -3  # retryable: a resumed crawl fetches it again
    assert "err=CrawlStoppingError" in curi.annotations
    assert elapsed < 15  # the grace period, not the 30 s read timeout (late if loaded)


def test_body_past_max_length_is_cut_on_a_raw_stream(ctx: ProcessorContext) -> None:
    body = b"a" * 50_000
    proc = started(ctx, max_length_bytes=4096)
    try:
        with RawServer(serve_body(body, "Content-Type: text/plain")) as server:
            curi = fetch(proc, server.base + "/long")
    finally:
        proc.stop()
    assert curi.status == 200
    assert curi.content_size == 4096
    assert recording(curi).truncated == "length"
    assert "lenTrunc" in curi.annotations
