"""ExtractorSitemap: the URLs of XML sitemaps and sitemap indexes, and robots.txt ``Sitemap:``.

Two cases, both for successful (2xx) fetches:

* a server's ``/robots.txt``: each ``Sitemap:`` line becomes an M link (context ``Sitemap:``);
* a sitemap: a URI reached by an M hop, a seed, or anything with an XML or gzip Content-Type or
  ``sitemap`` in its path, whose content (after content-encoding, then a gzip layer if the body
  itself is gzip: ``.xml.gz``) starts like a ``<urlset>`` or ``<sitemapindex>`` document. Every
  ``<loc>`` becomes an M link (context ``sitemap/loc``); a plain-text sitemap (one URL a line)
  reached by an M hop is read too.

Links are resolved against the URI and appended to ``curi.outlinks`` (absolute, not normalized)
up to ``max_outlinks`` (50,000 by default: the sitemap protocol's own limit per file); extra
ones are counted in ``dol:<n>``. A sitemap that could not be parsed to its end (broken XML, an
entity declaration — refused, see :mod:`processors.extract.sitemap_parser`) keeps the URLs
read so far and is annotated ``sitemapError``. M links are navigational for the scope (the
TransclusionDecideRule treats M like L), so sitemap URLs are crawled only when the scope
accepts them on their own.

Thread-safety: stateless. Heritrix counterparts: ``ExtractorRobotsTxt`` and ``ExtractorSitemap``.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

from pydantic import Field

from crawler import CrawlURI, Hop, Params, Processor
from crawler.robots import is_robots_uri
from processors.extract.link_resolver import LinkResolver
from processors.extract.outlinks import RawLink, add_links, note_dropped, text_of
from processors.extract.sitemap_parser import SitemapReader

_GZIP_MAGIC = b"\x1f\x8b"
_SNIFF_BYTES = 2048
_CHUNK_BYTES = 65536
_ROOTS = (b"<urlset", b"<sitemapindex", b":urlset", b":sitemapindex")


class ExtractorSitemapParams(Params):
    """Parameters of :class:`ExtractorSitemap`."""

    max_outlinks: int = Field(
        50_000, ge=0, description="links kept per URI (the protocol's 50,000 per sitemap)"
    )
    max_body_bytes: int = Field(
        52_428_800, gt=0, description="uncompressed sitemap bytes read at most (protocol: 50 MiB)"
    )
    robots_sitemaps: bool = Field(True, description="robots.txt Sitemap: lines become M links")


class ExtractorSitemap(Processor[ExtractorSitemapParams]):
    """Extracts sitemap and robots.txt sitemap links (see the module docstring)."""

    def should_process(self, curi: CrawlURI) -> bool:
        rec = curi.recording
        if not 200 <= curi.payload_status < 300 or rec is None or rec.body_size <= 0:
            return False
        if is_robots_uri(curi.uri):
            return self.params.robots_sitemaps
        mime = curi.mime_type
        if "html" in mime:
            return False
        return (
            curi.last_hop == Hop.MANIFEST
            or curi.is_seed
            or "xml" in mime
            or "gzip" in mime
            or "sitemap" in curi.uri.lower()
        )

    def inner_process(self, curi: CrawlURI) -> None:
        params = self.params
        body: bytes = curi.recording.decoded_body(
            curi.header("content-encoding"), params.max_body_bytes
        )
        if is_robots_uri(curi.uri):
            raw: list[RawLink] = [
                (url, Hop.MANIFEST, "Sitemap:") for url in robots_sitemap_lines(body)
            ]
            add_links(curi, raw, LinkResolver(curi.uri), params.max_outlinks)
            return
        gzipped = body.startswith(_GZIP_MAGIC)
        head = _gunzip_head(body) if gzipped else body[:_SNIFF_BYTES]
        if any(root in head for root in _ROOTS):
            chunks = _gunzip_chunks(body, params.max_body_bytes) if gzipped else (body,)
            room = max(0, params.max_outlinks - len(curi.outlinks))
            reader = SitemapReader(room).feed_all(chunks)
            raw = [(url, Hop.MANIFEST, "sitemap/loc") for url in reader.urls]
            add_links(curi, raw, LinkResolver(curi.uri), params.max_outlinks)
            if reader.dropped:
                note_dropped(curi, reader.dropped)
            if reader.error is not None:
                curi.annotate("sitemapError")
        elif curi.last_hop == Hop.MANIFEST and curi.mime_type == "text/plain" and not gzipped:
            lines = text_of(body, curi.content_type).splitlines()
            raw = [
                (line.strip(), Hop.MANIFEST, "sitemap/line")
                for line in lines
                if line.strip().lower().startswith(("http://", "https://"))
            ]
            add_links(curi, raw, LinkResolver(curi.uri), params.max_outlinks)


def robots_sitemap_lines(body: bytes) -> list[str]:
    """The values of a robots.txt's ``Sitemap:`` lines (any case), comments removed."""
    urls = []
    for line in body.decode("utf-8", "replace").splitlines():
        field, colon, value = line.partition(":")
        if colon and field.strip().lower() == "sitemap":
            value = value.split("#", 1)[0].strip() if " #" in value else value.strip()
            if value:
                urls.append(value)
    return urls


def _gunzip_head(body: bytes) -> bytes:
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(body[:65536], _SNIFF_BYTES)
    except zlib.error:
        return b""


def _gunzip_chunks(body: bytes, max_bytes: int) -> Iterator[bytes]:
    """The gunzipped body in chunks, at most ``max_bytes`` in all (a gzip bomb stops there)."""
    decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
    left = max_bytes
    pending = body
    try:
        while left > 0:
            chunk = decoder.decompress(pending, min(left, _CHUNK_BYTES))
            pending = decoder.unconsumed_tail
            if not chunk:
                return
            left -= len(chunk)
            yield chunk
    except zlib.error:
        return
