"""Pages: the HTML pages a crawl captured with status 200, for a WACZ's ``pages/pages.jsonl``.

A page is a CDXJ line of a ``text/html`` response with status 200, or of a 200 ``revisit``
whose payload digest is an HTML capture's (a recrawl's unchanged page). Its title is read from
the archived HTML (the first ``<title>`` in the first 256 KiB, entities decoded; a revisit's
from its original). :func:`pages_jsonl` gives the file's lines: the ``json-pages-1.0`` header,
then ``{"id", "url", "ts" (ISO 8601), "title"}`` per page. Reads WARC files; no shared state.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

_TITLE = re.compile(rb"<title[^>]*>(.*?)</title", re.S | re.I)
_CHARSET = re.compile(rb"charset=[\"']?([A-Za-z0-9_.:-]+)", re.I)
_TITLE_SCAN_BYTES = 256 * 1024


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

    def iso_date(self) -> str:
        t = self.timestamp.ljust(14, "0")
        return f"{t[0:4]}-{t[4:6]}-{t[6:8]}T{t[8:10]}:{t[10:12]}:{t[12:14]}Z"


def find_pages(lines: Iterable[IndexLine]) -> list[Page]:
    """The HTML pages captured with 200 among ``lines`` (see the module docstring)."""
    html_by_digest: dict[str, Page] = {}
    revisits: list[IndexLine] = []
    pages: list[Page] = []
    for line in lines:
        f = line.fields
        if f.get("status") != "200":
            continue
        if f.get("mime") == "text/html":
            page = Page(f["url"], line.timestamp, read_title(line))
            pages.append(page)
            if f.get("digest"):
                html_by_digest.setdefault(f["digest"], page)
        elif f.get("mime") == "warc/revisit":
            revisits.append(line)
    for line in revisits:
        original = html_by_digest.get(line.fields.get("digest", ""))
        if original is not None:
            pages.append(Page(line.fields["url"], line.timestamp, original.title))
    seen: set[tuple[str, str]] = set()
    unique = []
    for page in sorted(pages, key=lambda p: (p.timestamp, p.url)):
        if (page.url, page.timestamp) not in seen:
            seen.add((page.url, page.timestamp))
            unique.append(page)
    return unique


def read_title(line: IndexLine) -> str:
    """The ``<title>`` of the HTML captured at ``line``; empty if none or unreadable."""
    from warcio.archiveiterator import ArchiveIterator

    try:
        with line.warc.open("rb") as fh:
            fh.seek(int(line.fields["offset"]))
            record = next(iter(ArchiveIterator(fh)))
            head = record.content_stream().read(_TITLE_SCAN_BYTES)
            content_type = record.http_headers.get_header("Content-Type") or ""
    except Exception:  # noqa: BLE001 - a damaged record gives a page without a title
        return ""
    match = _TITLE.search(head)
    if match is None:
        return ""
    charset = _CHARSET.search(content_type.encode()) or _CHARSET.search(head[:2048])
    encoding = charset.group(1).decode() if charset else "utf-8"
    try:
        text = match.group(1).decode(encoding, errors="replace")
    except LookupError:
        text = match.group(1).decode("utf-8", errors="replace")
    return " ".join(html.unescape(text).split())[:500]


def pages_jsonl(pages: Iterable[Page]) -> Iterator[str]:
    """The lines of ``pages/pages.jsonl`` (each ending in a newline)."""
    yield json.dumps({"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}) + "\n"
    for n, page in enumerate(pages):
        doc = {"id": f"p{n}", "url": page.url, "ts": page.iso_date(), "title": page.title}
        yield json.dumps(doc, ensure_ascii=False) + "\n"
