"""ExtractorHTML: which links a page yields, with which hop letter; hostile pages are safe."""

from __future__ import annotations

import gzip
import time

import pytest

from crawler import CrawlURI, Recording
from processors.extract import ExtractorHTML, ExtractorHTMLParams, LinkResolver

PAGE_URI = "http://site.example/dir/page.html"


def fetched(
    body: bytes,
    content_type: str | None = "text/html",
    uri: str = PAGE_URI,
    headers: list[tuple[str, str]] | None = None,
) -> CrawlURI:
    rec = Recording()
    rec.write_body(body)
    return CrawlURI(
        uri,
        status=200,
        http_status=200,
        content_type=content_type,
        recording=rec,
        response_headers=headers or [],
    )


def extract(body: bytes | str, **kw: object) -> CrawlURI:
    params = kw.pop("params", None)
    raw = body.encode() if isinstance(body, str) else body
    curi = fetched(raw, **kw)  # type: ignore[arg-type]
    ExtractorHTML("html", params).process(curi)  # type: ignore[arg-type]
    return curi


def links(curi: CrawlURI) -> set[tuple[str, str]]:
    return {(link.uri, link.hop) for link in curi.outlinks}


def test_hop_letters_follow_heritrix() -> None:
    curi = extract(
        """<html><head>
        <link rel="stylesheet" href="/s.css"><link rel="shortcut icon" href="/f.ico">
        <link rel="alternate" href="/feed.xml"><script src="app.js"></script>
        <meta http-equiv="Refresh" content="5; URL=/next.html"></head><body>
        <a href="a.html">a</a><map><area href="/area.html"></map>
        <img src="i.png" srcset="i2.png 2x, /i3.png 3x"><iframe src="/frame.html"></iframe>
        <embed src="/e.swf"><video><source src="/v.mp4"></video>
        <input type="image" src="/btn.png"><input type="text" src="/not.png">
        </body></html>"""
    )
    d = "http://site.example/dir/"
    assert links(curi) == {
        ("http://site.example/s.css", "E"),
        ("http://site.example/f.ico", "E"),
        ("http://site.example/feed.xml", "L"),
        (d + "app.js", "E"),
        ("http://site.example/next.html", "R"),
        (d + "a.html", "L"),
        ("http://site.example/area.html", "L"),
        (d + "i.png", "E"),
        (d + "i2.png", "E"),
        ("http://site.example/i3.png", "E"),
        ("http://site.example/frame.html", "E"),
        ("http://site.example/e.swf", "E"),
        ("http://site.example/v.mp4", "E"),
        ("http://site.example/btn.png", "E"),
    }
    contexts = {link.context for link in curi.outlinks}
    assert {"a/@href", "img/@src", "img/@srcset", "link/@href", "meta/@content"} <= contexts


def test_base_href_changes_the_base_of_every_link() -> None:
    curi = extract(
        '<html><head><base href="http://other.example/base/"></head>'
        '<body><a href="x.html">x</a><a href="/root">r</a><img src="../up.png"></body></html>'
    )
    assert links(curi) == {
        ("http://other.example/base/x.html", "L"),
        ("http://other.example/root", "L"),
        ("http://other.example/up.png", "E"),
    }


def test_uncrawlable_values_are_ignored_and_duplicates_kept_once() -> None:
    curi = extract(
        '<a href="javascript:void(0)">j</a><a href=" MAILTO:me@x">m</a><a href="#top">t</a>'
        '<img src="data:image/png;base64,AAAA"><a href="tel:123">t</a><a href="">e</a>'
        '<a href="x.html">1</a><a href="x.html">2</a><a href="x.html#frag">3</a>'
    )
    assert [link.uri for link in curi.outlinks] == [
        "http://site.example/dir/x.html",
        "http://site.example/dir/x.html#frag",
    ]


def test_outlinks_beyond_the_limit_are_dropped_and_counted() -> None:
    page = "".join(f'<a href="/p{i}">{i}</a>' for i in range(30))
    curi = extract(page, params=ExtractorHTMLParams(max_outlinks=10))
    assert len(curi.outlinks) == 10
    assert curi.outlinks[0].uri == "http://site.example/p0"
    assert "dol:20" in curi.annotations


def test_forms_and_nofollow_follow_their_switches() -> None:
    page = (
        '<form action="/search"><input name=q></form><form method="post" action="/post"></form>'
        '<a rel="nofollow" href="/nf">x</a><a href="/f">y</a>'
    )
    default = extract(page)
    assert ("http://site.example/search", "L") not in links(default)
    assert ("http://site.example/nf", "L") in links(default)
    switched = extract(page, params=ExtractorHTMLParams(extract_forms=True, obey_rel_nofollow=True))
    assert ("http://site.example/search", "L") in links(switched)
    assert ("http://site.example/post", "L") not in links(switched)
    assert ("http://site.example/nf", "L") not in links(switched)
    assert ("http://site.example/f", "L") in links(switched)


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ('<a href="/caf\u00e9">x</a>'.encode("latin-1"), "text/html; charset=ISO-8859-1"),
        ('<meta charset="windows-1252"><a href="/caf\u00e9">x</a>'.encode("cp1252"), "text/html"),
        ('<a href="/caf\u00e9">x</a>'.encode("utf-8"), "text/html"),
        ("\ufeff<a href='/caf\u00e9'>x</a>".encode("utf-16-le"), "text/html"),
    ],
)
def test_charset_comes_from_header_meta_or_bom(body: bytes, content_type: str) -> None:
    curi = extract(body, content_type=content_type)
    assert [link.uri for link in curi.outlinks] == ["http://site.example/caf\u00e9"]


def test_gzip_content_encoding_is_undone() -> None:
    body = gzip.compress(b'<html><a href="/zipped">z</a></html>')
    curi = extract(body, headers=[("Content-Encoding", "gzip")])
    assert links(curi) == {("http://site.example/zipped", "L")}


def test_html_is_sniffed_when_the_type_does_not_say_so() -> None:
    html_body = b'  <!DOCTYPE html><a href="/sniffed">s</a>'
    assert links(extract(html_body, content_type=None)) == {("http://site.example/sniffed", "L")}
    png = b"\x89PNG\r\n\x1a\n" + b'<a href="/no">'
    assert extract(png, content_type="image/png").outlinks == []


def test_failed_or_empty_fetches_are_not_examined() -> None:
    curi = fetched(b"")
    ExtractorHTML("html").process(curi)
    assert curi.outlinks == []
    curi = fetched(b'<a href="/x">')
    curi.status = -2
    ExtractorHTML("html").process(curi)
    assert curi.outlinks == []


def test_big_documents_use_the_tag_scanner_with_the_same_links() -> None:
    page = (
        "<html><head><base href='/b/'><link rel=stylesheet href='s.css'>"
        "<meta http-equiv=refresh content='0;url=r.html'></head><body>"
        + "".join(
            f"<p><a title='a>b' href='p{i}.html?a=1&amp;b=2'>x</a><img src=\"i{i}.png\" "
            f'srcset="j{i}.png 1x, k{i}.png 2x"><!-- c --></p>'
            for i in range(50)
        )
        + "<FORM ACTION=/f><INPUT TYPE=image SRC=/btn.png></FORM></body></html>"
    )
    small = extract(page, params=ExtractorHTMLParams(extract_forms=True))
    scanned = extract(page, params=ExtractorHTMLParams(max_tree_parse_bytes=0, extract_forms=True))
    assert len(small.outlinks) == 2 + 4 * 50 + 2
    assert [(x.uri, x.hop, x.context) for x in scanned.outlinks] == [
        (x.uri, x.hop, x.context) for x in small.outlinks
    ]
    assert ("http://site.example/b/p0.html?a=1&b=2", "L") in links(scanned)


@pytest.mark.parametrize(
    "body",
    [
        bytes(range(256)) * 400,
        b"<div>" * 200_000 + b'<a href="/deep">x</a>',
        b"<ul><li>" * 20_000 + b'<a href="/deep">x</a>',
        b"<div>" * 25_000 + b'<a href="/deep">x</a>',  # under max_tree_parse_bytes
        b"<p>x</p>" * 5_000 + b'<a href="/deep">x</a>',  # many tags, all closed: the tree
        b"<a href='" + b"x" * 100_000,
        b'<a href="/ok"' + b" a=" * 50_000,
        b"<" * 300_000 + b'<img src="/i.png">',
        b"<html><a href='http://[::1/'>v6</a><a href='http://h:99999/'>p</a></html>",
    ],
    ids=[
        "binary",
        "deep-div",
        "deep-list",
        "deep-div-small",
        "closed-tags",
        "open-quote",
        "many-attrs",
        "many-lt",
        "bad-urls",
    ],
)
def test_hostile_pages_neither_raise_nor_hang(body: bytes) -> None:
    start = time.monotonic()
    curi = extract(body)
    assert time.monotonic() - start < 30  # a hang, not a slow machine
    assert len(curi.outlinks) <= 6000
    if b"/deep" in body:
        assert ("http://site.example/deep", "L") in links(curi)


def test_resolver_handles_common_relative_forms() -> None:
    r = LinkResolver("https://h.example/a/b/c.html?q=1")
    assert r.resolve("../x") == "https://h.example/a/x"
    assert r.resolve("../../../../y") == "https://h.example/y"
    assert r.resolve("./z") == "https://h.example/a/b/z"
    assert r.resolve("//cdn.example/p") == "https://cdn.example/p"
    assert r.resolve("?q=2") == "https://h.example/a/b/c.html?q=2"
    assert r.resolve(" /t\n ") == "https://h.example/t"
    assert r.resolve("java\nscript:alert(1)") is None
    assert r.resolve("ftp://files.example/f") == "ftp://files.example/f"
