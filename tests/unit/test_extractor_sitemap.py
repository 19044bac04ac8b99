"""ExtractorSitemap: robots.txt Sitemap: lines, XML sitemaps and indexes (gzip too) as M links;
XML bombs and external entities are refused quickly with bounded memory."""

from __future__ import annotations

import gzip
import time
import tracemalloc

import pytest

from crawler import CrawlURI, Recording
from processors.extract import ExtractorSitemap, ExtractorSitemapParams, SitemapReader

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def urlset(*locs: str) -> bytes:
    entries = "".join(f"<url><loc>{loc}</loc><lastmod>2024-01-01</lastmod></url>" for loc in locs)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>{entries}</urlset>'.encode()


def fetched(
    uri: str,
    body: bytes,
    content_type: str | None = "application/xml",
    hop_path: str = "PM",
    headers: list[tuple[str, str]] | None = None,
    params: ExtractorSitemapParams | None = None,
) -> CrawlURI:
    rec = Recording()
    rec.write_body(body)
    curi = CrawlURI(
        uri,
        via="http://site.example/robots.txt",
        hop_path=hop_path,
        status=200,
        content_type=content_type,
        recording=rec,
        response_headers=headers or [],
    )
    ExtractorSitemap("sitemap", params).process(curi)
    return curi


def found(curi: CrawlURI) -> list[tuple[str, str]]:
    return [(link.uri, link.hop) for link in curi.outlinks]


def test_robots_txt_sitemap_lines_become_manifest_links() -> None:
    robots = b"User-agent: *\nDisallow: /private/\nSITEMAP: /sitemap.xml\n"
    robots += b"sitemap:https://other.example/s.xml.gz # theirs\nSitemap:\n"
    curi = fetched("http://site.example/robots.txt", robots, "text/plain", hop_path="P")
    assert found(curi) == [
        ("http://site.example/sitemap.xml", "M"),
        ("https://other.example/s.xml.gz", "M"),
    ]
    assert curi.outlinks[0].context == "Sitemap:"


def test_a_urlset_gives_every_loc_with_entities_decoded() -> None:
    body = urlset("http://site.example/a.html", " http://site.example/b?x=1&amp;y=2 ")
    curi = fetched("http://site.example/sitemap.xml", body)
    assert found(curi) == [
        ("http://site.example/a.html", "M"),
        ("http://site.example/b?x=1&y=2", "M"),
    ]


def test_a_gzipped_sitemap_index_is_read_whatever_the_content_type() -> None:
    index = (
        f"<?xml version='1.0'?><sitemapindex {NS}><sitemap><loc>/s1.xml.gz</loc></sitemap>"
        f"<sitemap><loc>http://site.example/s2.xml</loc></sitemap></sitemapindex>"
    ).encode()
    curi = fetched(
        "http://site.example/index.xml.gz", gzip.compress(index), "application/octet-stream"
    )
    assert found(curi) == [
        ("http://site.example/s1.xml.gz", "M"),
        ("http://site.example/s2.xml", "M"),
    ]


def test_content_encoding_gzip_is_undone_too() -> None:
    body = gzip.compress(urlset("http://site.example/z"))
    curi = fetched("http://site.example/sitemap.xml", body, headers=[("Content-Encoding", "gzip")])
    assert found(curi) == [("http://site.example/z", "M")]


def test_a_seed_sitemap_is_read_and_other_xml_or_html_is_not() -> None:
    seed = fetched("http://site.example/feed", urlset("http://site.example/q"), "text/xml", "")
    assert found(seed) == [("http://site.example/q", "M")]
    rss = fetched(
        "http://site.example/rss.xml", b"<rss><channel><link>http://x/</link></channel></rss>"
    )
    assert rss.outlinks == []
    html = fetched("http://site.example/sitemap.html", urlset("http://x/"), "text/html")
    assert html.outlinks == []


def test_a_plain_text_sitemap_reached_by_an_m_hop_is_read() -> None:
    text = b"http://site.example/t1\n\nnot a url\nhttps://site.example/t2\n"
    curi = fetched("http://site.example/sitemap.txt", text, "text/plain")
    assert found(curi) == [("http://site.example/t1", "M"), ("https://site.example/t2", "M")]


def test_urls_over_max_outlinks_are_counted() -> None:
    body = urlset(*(f"http://site.example/{n}" for n in range(10)))
    params = ExtractorSitemapParams(max_outlinks=4)
    curi = fetched("http://site.example/sitemap.xml", body, params=params)
    assert len(curi.outlinks) == 4 and curi.annotations == ["dol:6"]


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<urlset><url><loc>http://site.example/&lol9;</loc></url></urlset>"""


def test_a_billion_laughs_sitemap_is_refused_quickly_with_bounded_memory() -> None:
    tracemalloc.start()
    started = time.perf_counter()
    curi = fetched("http://site.example/sitemap.xml", BILLION_LAUGHS)
    elapsed = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert curi.outlinks == [] and "sitemapError" in curi.annotations
    # bounded memory is the proof; expanding the entities would take hours, not seconds
    assert elapsed < 30 and peak < 5_000_000


@pytest.mark.parametrize(
    "doc",
    [
        b'<?xml version="1.0"?><!DOCTYPE u [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        b"<urlset><url><loc>http://a/&x;</loc></url></urlset>",
        b'<?xml version="1.0"?><!DOCTYPE u [<!ENTITY % p SYSTEM "http://127.0.0.1:1/x.dtd"> %p;]>'
        b"<urlset><url><loc>http://a/</loc></url></urlset>",
    ],
    ids=["external-general", "external-parameter"],
)
def test_external_entities_are_refused(doc: bytes) -> None:
    reader = SitemapReader(100).feed_all([doc])
    assert reader.urls == [] and reader.error is not None


def test_a_gzip_bomb_sitemap_stops_at_max_body_bytes() -> None:
    bomb = gzip.compress(urlset("http://site.example/a") + b" " * 20_000_000, compresslevel=9)
    params = ExtractorSitemapParams(max_body_bytes=1_000_000)
    started = time.process_time()  # this process's CPU time: other processes do not count
    curi = fetched("http://site.example/sitemap.xml.gz", bomb, "application/gzip", params=params)
    assert found(curi) == [("http://site.example/a", "M")]
    assert time.process_time() - started < 2


@pytest.mark.parametrize(
    "body",
    [
        urlset("http://site.example/ok")[:-20],
        b"<urlset>" + b"<url>" * 200_000,
        b"<urlset><url><loc>" + b"x" * 5_000_000 + b"</loc></url></urlset>",
        b"\x00<urlset>\xff\xfe" * 1000,
    ],
    ids=["truncated", "deep", "huge-loc", "binary"],
)
def test_broken_sitemaps_keep_what_was_read_and_never_raise(body: bytes) -> None:
    curi = fetched("http://site.example/sitemap.xml", body)
    assert len(curi.outlinks) <= 1
