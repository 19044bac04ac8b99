"""WARC files as the tests check them: a fetched CrawlURI to write, the records of a file, and
``warcio check`` (every record's digests) on a file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from crawler import CrawlURI, Link, Recording

WARCIO = Path(sys.executable).with_name("warcio")


def fetched(n: int, body: bytes, truncated: str | None = None) -> CrawlURI:
    rec = Recording(in_memory_bytes=64 * 1024)
    rec.request_head = f"GET /p{n} HTTP/1.1\r\nHost: site.example\r\n\r\n".encode()
    rec.response_head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
    )
    rec.write_body(body)
    rec.truncated = truncated
    return CrawlURI(
        f"http://site.example/p{n}",
        via="http://site.example/",
        hop_path="L",
        status=200,
        http_status=200,
        content_type="text/html",
        recording=rec,
        payload_digest=rec.payload_digest,
        fetch_start_ms=1_700_000_000_123,
        fetch_duration_ms=7,
        ip_address="127.0.0.1",
        outlinks=[Link("http://site.example/next", "L", "a/@href")],
    )


def warcs(run_dir: Path) -> list[Path]:
    return sorted((run_dir / "warcs").iterdir())


def records(path: Path) -> list[tuple[str, dict[str, str], bytes, int]]:
    out = []
    with path.open("rb") as handle:
        it = ArchiveIterator(handle)
        for rec in it:
            headers = dict(rec.rec_headers.headers)
            out.append((rec.rec_type, headers, rec.content_stream().read(), it.get_record_offset()))
    return out


def warcio_check(path: Path) -> None:
    result = subprocess.run([str(WARCIO), "check", "-v", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "digest pass" in result.stdout
