"""ExtractorXML: RSS, Atom and generic XML links; sitemaps left to ExtractorSitemap; entity
declarations, deep nesting and broken XML refused with what was read kept."""

from __future__ import annotations

import pytest

from crawler import CrawlURI, Recording
from processors.extract import (
    ExtractorSitemap,
    ExtractorXML,
    ExtractorXMLParams,
)

pytestmark = pytest.mark.timeout(20)

RSS = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"
     xmlns:atom="http://www.w3.org/2005/Atom">
<channel><title>News http://not.a/link here</title><link>http://site.example/</link>
<atom:link href="http://site.example/feed.rss" rel="self"/>
<item><title>One</title><link>/news/1.html</link><guid isPermaLink="false">tag:1</guid>
  <enclosure url="/audio/1.mp3" length="10" type="audio/mpeg"/></item>
<item><title>Two</title><guid>http://site.example/news/2.html</guid>
  <media:content url="http://cdn.example/2.jpg"/>
  <description>http://site.example/news/2-more.html</description></item>
</channel></rss>"""

ATOM = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title>
<link rel="self" href="/feed.atom"/><link href="/"/><icon>/icon.png</icon>
<entry><title>E1</title><link href="entries/1.html"/><id>urn:uuid:1</id>
  <link rel="enclosure" href="/video/1.mp4"/><content src="/entries/1.txt"/></entry>
</feed>"""


def fetched(
    uri: str,
    body: bytes,
    content_type: str | None = "application/rss+xml",
    params: ExtractorXMLParams | None = None,
) -> CrawlURI:
    rec = Recording()
    rec.write_body(body)
    curi = CrawlURI(uri, hop_path="L", status=200, content_type=content_type, recording=rec)
    ExtractorXML("xml", params).process(curi)
    return curi


def found(curi: CrawlURI) -> list[tuple[str, str, str]]:
    return [(link.uri, link.hop, link.context) for link in curi.outlinks]


def test_rss_links_permalink_guids_and_enclosures() -> None:
    curi = fetched("http://site.example/feed.rss", RSS)
    assert found(curi) == [
        ("http://site.example/", "L", "xml/link"),
        ("http://site.example/feed.rss", "L", "xml/link/@href"),
        ("http://site.example/news/1.html", "L", "xml/link"),
        ("http://site.example/audio/1.mp3", "E", "xml/enclosure/@url"),
        ("http://site.example/news/2.html", "L", "xml/guid"),
        ("http://cdn.example/2.jpg", "E", "xml/content/@url"),
        ("http://site.example/news/2-more.html", "L", "xml/description"),
    ]
    assert not curi.annotations


def test_atom_link_hrefs_enclosures_content_and_icon() -> None:
    curi = fetched("http://site.example/blog/feed.atom", ATOM, "application/atom+xml")
    assert found(curi) == [
        ("http://site.example/feed.atom", "L", "xml/link/@href"),
        ("http://site.example/", "L", "xml/link/@href"),
        ("http://site.example/icon.png", "E", "xml/icon"),
        ("http://site.example/blog/entries/1.html", "L", "xml/link/@href"),
        ("http://site.example/video/1.mp4", "E", "xml/link/@href"),
        ("http://site.example/entries/1.txt", "L", "xml/content/@src"),
    ]


def test_generic_xml_loc_href_and_url_texts() -> None:
    body = (
        b'<?xml version="1.0"?><catalog xmlns:xlink="http://www.w3.org/1999/xlink">'
        b'<book xlink:href="/b/1"><loc>/b/1/loc</loc><note>see https://x.example/y</note>'
        b"<home>https://x.example/home</home><isbn>123</isbn></book></catalog>"
    )
    curi = fetched("http://site.example/cat.xml", body, "text/xml")
    assert [(u, h) for u, h, _ in found(curi)] == [
        ("http://site.example/b/1", "L"),
        ("http://site.example/b/1/loc", "L"),
        ("https://x.example/home", "L"),
    ]


def test_a_sitemap_is_left_to_the_sitemap_extractor() -> None:
    sitemap = (
        b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<url><loc>http://site.example/a.html</loc></url></urlset>"
    )
    rec = Recording()
    rec.write_body(sitemap)
    curi = CrawlURI(
        "http://site.example/sitemap.xml",
        hop_path="PM",
        status=200,
        content_type="application/xml",
        recording=rec,
    )
    ExtractorSitemap("sitemap").process(curi)
    ExtractorXML("xml").process(curi)
    assert [(link.uri, link.hop) for link in curi.outlinks] == [("http://site.example/a.html", "M")]
    assert not curi.annotations


@pytest.mark.parametrize(
    ("content_type", "uri", "handled"),
    [
        ("application/xhtml+xml", "http://s.example/x.xml", False),
        ("image/svg+xml", "http://s.example/i.svg", False),
        ("text/html", "http://s.example/feed.rss", False),
        ("text/plain", "http://s.example/feed.rss", True),
        (None, "http://s.example/feed.atom", True),
        ("text/plain", "http://s.example/notes.txt", False),
    ],
)
def test_which_documents_are_read(content_type: str | None, uri: str, handled: bool) -> None:
    curi = fetched(uri, b"<r><link>http://s.example/l</link></r>", content_type)
    assert bool(curi.outlinks) is handled


def test_entity_declarations_are_refused_and_marked() -> None:
    bomb = b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">'
    bomb += b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><r><link>&b;</link></r>'
    assert fetched("http://s.example/f.xml", bomb).annotations == ["xmlError"]
    xxe = b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
    xxe += b"<r><link>&x;</link></r>"
    curi = fetched("http://s.example/f.xml", xxe)
    assert curi.annotations == ["xmlError"] and not curi.outlinks


def test_broken_or_deep_xml_keeps_what_was_read() -> None:
    broken = b"<rss><channel><link>http://s.example/kept</link><item><link>"
    curi = fetched("http://s.example/f.rss", broken)
    assert found(curi) == [("http://s.example/kept", "L", "xml/link")]
    assert curi.annotations == ["xmlError"]
    deep = b"<r><link>http://s.example/top</link>" + b"<a>" * 5000 + b"</a>" * 5000 + b"</r>"
    curi = fetched("http://s.example/deep.xml", deep)
    assert found(curi) == [("http://s.example/top", "L", "xml/link")]
    assert curi.annotations == ["xmlError"]


def test_outlink_cap_counts_the_rest() -> None:
    items = b"".join(b"<item><link>/i/%d</link></item>" % i for i in range(10))
    curi = fetched(
        "http://s.example/f.rss",
        b"<rss>" + items + b"</rss>",
        params=ExtractorXMLParams(max_outlinks=4),
    )
    assert len(curi.outlinks) == 4
    assert curi.annotations == ["dol:6"]
