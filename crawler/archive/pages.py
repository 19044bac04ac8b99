"""Pages: the HTML pages a crawl captured with status 200, for a WACZ's ``pages/pages.jsonl``.

A page is a CDXJ line of a ``text/html`` response with status 200, or of a 200 ``revisit``
whose payload digest is an HTML capture's (a recrawl's unchanged page). Its title is read from
the archived HTML (the first ``<title>`` in the first 256 KiB of the page, its content-encoding
undone as the crawl's extractors undo it, entities decoded; a revisit's from its original).
Its text is the browser's rendered text when the crawl stored one (a ``urn:text:<url>``
resource record, the latest), else the archived HTML's visible text
(:mod:`crawler.archive.page_text`, first 4 MiB). :func:`pages_jsonl` gives the file's lines: the
``json-pages-1.0`` header, then ``{"id", "url", "ts" (ISO 8601), "title", "text"}`` per page.
Reads WARC files; no shared state.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crawler.archive.page_text import html_text, plain_text
from crawler.recording import decode_prefix, is_decoded

TEXT_URN = "urn:text:"
_TEXT_SCAN_BYTES = 4 * 1024 * 1024
_TITLE = re.compile(rb"<title[^>]*>(.*?)</title", re.S | re.I)
_CHARSET = re.compile(rb"charset=[\"']?([A-Za-z0-9_.:-]+)", re.I)
_TITLE_SCAN_BYTES = 256 * 1024
_READ_BYTES = 64 * 1024


@dataclass(frozen=True)
class IndexLine:
    """One CDXJ line, parsed; ``warc`` is the file it names, resolved."""

    urlkey: str
    timestamp: str
    fields: dict[str, str]
    warc: Path

    @classmethod
    def parse(cls, line: str, warc_dir: Path, warc_name: str | None = None) -> IndexLine:
        """Parse ``line``; the WARC is ``warc_dir / (warc_name or the line's filename)``."""
        key, ts, data = line.split(" ", 2)
        fields = json.loads(data)
        return cls(key, ts, fields, warc_dir / (warc_name or fields["filename"]))


@dataclass(frozen=True)
class Page:
    """One page for ``pages.jsonl``."""

    url: str
    timestamp: str  # 14 digits, as in the index
    title: str
    text: str = ""

    def iso_date(self) -> str:
        t = self.timestamp.ljust(14, "0")
        return f"{t[0:4]}-{t[4:6]}-{t[6:8]}T{t[8:10]}:{t[10:12]}:{t[12:14]}Z"


def find_pages(lines: Iterable[IndexLine]) -> list[Page]:
    """The HTML pages captured with 200 among ``lines`` (see the module docstring)."""
    html_by_digest: dict[str, Page] = {}
    revisits: list[IndexLine] = []
    pages: list[Page] = []
    rendered: dict[str, IndexLine] = {}
    html_lines: list[IndexLine] = []
    for line in lines:
        f = line.fields
        url = f.get("url", "")
        if url.startswith(TEXT_URN):
            known = rendered.get(url)
            if known is None or known.timestamp <= line.timestamp:
                rendered[url] = line
        elif f.get("status") == "200" and f.get("mime") == "text/html":
            html_lines.append(line)
        elif f.get("status") == "200" and f.get("mime") == "warc/revisit":
            revisits.append(line)
    for line in html_lines:
        f = line.fields
        text_line = rendered.get(TEXT_URN + f["url"])
        if text_line is not None:
            title, _ = read_page(line, with_text=False)
            text = plain_text(_read_body(text_line, _TEXT_SCAN_BYTES).decode("utf-8", "replace"))
        else:
            title, text = read_page(line, with_text=True)
        page = Page(f["url"], line.timestamp, title, text)
        pages.append(page)
        if f.get("digest"):
            html_by_digest.setdefault(f["digest"], page)
    for line in revisits:
        original = html_by_digest.get(line.fields.get("digest", ""))
        if original is not None:
            pages.append(Page(line.fields["url"], line.timestamp, original.title, original.text))
    seen: set[tuple[str, str]] = set()
    unique = []
    for page in sorted(pages, key=lambda p: (p.timestamp, p.url)):
        if (page.url, page.timestamp) not in seen:
            seen.add((page.url, page.timestamp))
            unique.append(page)
    return unique


def read_title(line: IndexLine) -> str:
    """The ``<title>`` of the HTML captured at ``line``; empty if none or unreadable."""
    return read_page(line, with_text=False)[0]


def read_page(line: IndexLine, with_text: bool) -> tuple[str, str]:
    """The title of the HTML captured at ``line`` and, ``with_text``, its visible text; empty
    strings where there are none or the record is unreadable."""
    from warcio.archiveiterator import ArchiveIterator

    size = _TEXT_SCAN_BYTES if with_text else _TITLE_SCAN_BYTES
    try:
        with line.warc.open("rb") as fh:
            fh.seek(int(line.fields["offset"]))
            record = next(iter(ArchiveIterator(fh)))
            body = _payload_prefix(record, size)
            content_type = record.http_headers.get_header("Content-Type") or ""
    except Exception:  # noqa: BLE001 - a damaged record gives a page without a title
        return "", ""
    charset = _CHARSET.search(content_type.encode()) or _CHARSET.search(body[:2048])
    encoding = charset.group(1).decode() if charset else "utf-8"
    try:
        "".encode(encoding)
    except LookupError:
        encoding = "utf-8"
    title = ""
    match = _TITLE.search(body[:_TITLE_SCAN_BYTES])
    if match is not None:
        title = " ".join(html.unescape(match.group(1).decode(encoding, "replace")).split())[:500]
    text = html_text(body.decode(encoding, "replace")) if with_text else ""
    return title, text


def _read_body(line: IndexLine, limit: int) -> bytes:
    """The first ``limit`` bytes of the record's content at ``line`` (empty if unreadable)."""
    from warcio.archiveiterator import ArchiveIterator

    try:
        with line.warc.open("rb") as fh:
            fh.seek(int(line.fields["offset"]))
            record = next(iter(ArchiveIterator(fh)))
            return _payload_prefix(record, limit)
    except Exception:  # noqa: BLE001 - a damaged record gives a page without text
        return b""


def _payload_prefix(record: Any, limit: int) -> bytes:
    """The first ``limit`` bytes of a warcio ``record``'s payload, transfer coding and
    content-encodings undone by :func:`crawler.recording.decode_prefix` (as the crawl's
    extractors read them): output bounded per step, so a decompression bomb's page costs
    ``limit``, not what a reader block of it inflates to (warcio inflates each block whole)."""
    from warcio.bufferedreaders import ChunkedDataReader

    stream = record.raw_stream
    http = record.http_headers
    encoding = None
    if http is not None:
        if (http.get_header("transfer-encoding") or "").lower() == "chunked":
            stream = ChunkedDataReader(stream)
        encoding = http.get_header("content-encoding")
    if not is_decoded(encoding):
        return bytes(stream.read(limit))
    chunks = iter(lambda: stream.read(_READ_BYTES), b"")
    return decode_prefix(chunks, encoding, limit)[0]


def pages_jsonl(pages: Iterable[Page]) -> Iterator[str]:
    """The lines of ``pages/pages.jsonl`` (each ending in a newline)."""
    yield json.dumps({"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}) + "\n"
    for n, page in enumerate(pages):
        doc = {
            "id": f"p{n}",
            "url": page.url,
            "ts": page.iso_date(),
            "title": page.title,
            "text": page.text,
        }
        yield json.dumps(doc, ensure_ascii=False) + "\n"
