"""ExtractorXML: the links of RSS and Atom feeds and of other XML documents.

Runs on successful (2xx) fetches whose Content-Type mentions ``xml`` but not ``html`` (XHTML is
ExtractorHTML's) or ``svg``, or, with no telling Content-Type (none, ``text/plain``,
``application/octet-stream``), whose path ends in ``.rss``, ``.atom``, ``.xml`` or ``.rdf`` and
whose content starts with ``<``. Reads ``curi.recording`` (content-encoding undone up to
``max_body_bytes``), parses it with :class:`~processors.extract.xml_links.XmlLinkReader`
(hardened expat: no entities, no external loads, capped nesting and text) and appends what it
finds to ``curi.outlinks``, resolved against the document's URI: RSS ``<link>``, permalink
``<guid>``, Atom ``<link href>`` and other ``href``s, ``<loc>`` and standalone absolute URLs as
L; enclosures, ``media:content``, ``<icon>``/``<logo>`` as E; up to ``max_outlinks`` per URI
(extra ones counted in ``dol:<n>``). Sitemaps (root ``<urlset>``/``<sitemapindex>``) are left
to ExtractorSitemap, so their URLs are not found twice. A document that could not be parsed to
its end keeps the links read so far and is annotated ``xmlError``.

Thread-safety: stateless. Heritrix counterpart: ``org.archive.modules.extractor.ExtractorXML``.
"""

from __future__ import annotations

from pydantic import Field

from crawler import CrawlURI, Params, Processor
from processors.extract.link_resolver import LinkResolver
from processors.extract.outlinks import add_links, note_dropped, path_ends_with
from processors.extract.xml_links import XmlLinkReader

_VAGUE_TYPES = frozenset({"", "no-type", "text/plain", "application/octet-stream"})
_XML_SUFFIXES = (".rss", ".atom", ".xml", ".rdf")
_GZIP_MAGIC = b"\x1f\x8b"


class ExtractorXMLParams(Params):
    """Parameters of :class:`ExtractorXML`."""

    max_outlinks: int = Field(
        6000, ge=0, description="links kept per URI; extra ones are counted as dol:<n>"
    )
    max_body_bytes: int = Field(10_000_000, gt=0, description="decoded XML bytes examined at most")


class ExtractorXML(Processor[ExtractorXMLParams]):
    """Extracts feed and XML links (see the module docstring)."""

    def should_process(self, curi: CrawlURI) -> bool:
        rec = curi.recording
        if not 200 <= curi.payload_status < 300 or rec is None or rec.body_size <= 0:
            return False
        mime = curi.mime_type
        if "xml" in mime:
            return "html" not in mime and "svg" not in mime
        return mime in _VAGUE_TYPES and path_ends_with(curi.uri, _XML_SUFFIXES)

    def inner_process(self, curi: CrawlURI) -> None:
        params = self.params
        body: bytes = curi.recording.decoded_body(
            curi.header("content-encoding"), params.max_body_bytes
        )
        if body.startswith(_GZIP_MAGIC):
            return  # a gzipped sitemap (.xml.gz): ExtractorSitemap's
        if "xml" not in curi.mime_type and not body.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<"):
            return
        room = max(0, params.max_outlinks - len(curi.outlinks))
        reader = XmlLinkReader(room).feed_all((body,))
        if reader.links:
            add_links(curi, reader.links, LinkResolver(curi.uri), params.max_outlinks)
        if reader.dropped:
            note_dropped(curi, reader.dropped)
        if reader.error is not None:
            curi.annotate("xmlError")
