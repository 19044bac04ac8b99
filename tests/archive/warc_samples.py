"""Small real WARC files for the archive tests, written with warcio."""

from __future__ import annotations

from io import BytesIO
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter


def write_warc(path: Path, pages: int = 5, gzip: bool = True, date: str | None = None) -> list[str]:
    """Write ``pages`` HTML responses (each with its request record); returns their URLs.
    ``date``: every record's WARC-Date (ISO 8601, e.g. ``2026-11-27T10:00:00Z``); the time of
    writing without it."""
    urls = []
    fixed = {"WARC-Date": date} if date else {}
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=gzip)
        for n in range(pages):
            url = f"http://example.test/page{n}.html"
            body = f"<html><title>Page {n}</title><body>{'text ' * 200}</body></html>".encode()
            head = StatusAndHeaders(
                "200 OK",
                [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body)))],
                protocol="HTTP/1.1",
            )
            writer.write_record(
                writer.create_warc_record(
                    url,
                    "response",
                    payload=BytesIO(body),
                    http_headers=head,
                    warc_headers_dict=dict(fixed),
                )
            )
            req = StatusAndHeaders(f"GET /page{n}.html", [("Host", "example.test")], "HTTP/1.1")
            writer.write_record(
                writer.create_warc_record(
                    url,
                    "request",
                    payload=BytesIO(b""),
                    http_headers=req,
                    warc_headers_dict=dict(fixed),
                )
            )
            urls.append(url)
    return urls
