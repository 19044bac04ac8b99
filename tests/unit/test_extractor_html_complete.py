"""ExtractorHTML's full attribute set, robots meta, charset notes, inline CSS/JS; tree and scanner
agree; hostile pages stay bounded."""

from __future__ import annotations

import pytest

from crawler import CrawlURI, Recording
from processors.extract import ExtractorCSS, ExtractorHTML, ExtractorHTMLParams

PAGE_URI = "http://site.example/dir/page.html"
D = "http://site.example/dir/"
R = "http://site.example/"
TREE = ExtractorHTMLParams()
SCANNER = ExtractorHTMLParams(max_tree_parse_bytes=0)


def extract(
    body: str | bytes,
    params: ExtractorHTMLParams = TREE,
    content_type: str | None = "text/html",
    uri: str = PAGE_URI,
) -> CrawlURI:
    rec = Recording()
    rec.write_body(body.encode() if isinstance(body, str) else body)
    curi = CrawlURI(uri, status=200, http_status=200, content_type=content_type, recording=rec)
    ExtractorHTML("html", params).process(curi)
    return curi


def links(curi: CrawlURI) -> set[tuple[str, str]]:
    return {(link.uri, link.hop) for link in curi.outlinks}


EVERY_KIND = """<!doctype html><html><head>
<link rel="apple-touch-icon" href="/touch.png"><link rel="manifest" href="/app.webmanifest">
<link rel="modulepreload" href="/m.js"><link rel="preload" as="image" href="/hero.jpg"
      imagesrcset="/hero-2x.jpg 2x">
<link rel="canonical" href="/canon.html"><link rel="next" href="p2.html">
<link rel="prev" href="p0.html">
<link rel="alternate" type="application/rss+xml" href="/feed.xml">
<style>@import url("/imp.css"); body { background: url('bg.png') }</style>
</head><body background="/tile.gif">
<img src="a.png" srcset="a-1x.png 1x, a-2x.png 2x"><picture><source srcset="/s.webp 480w, /s2.webp">
</picture>
<object data="/movie.swf"></object><applet code="com.example.Game" archive="g.jar, lib.jar"
 codebase="/applets"></applet>
<video poster="/poster.jpg" src="/v.mp4"><source src="/v.webm"><track src="/subs.vtt"></video>
<audio src="/a.mp3"></audio><input type="image" src="/go.png">
<div style="background-image: url(&quot;/div-bg.png&quot;)">x</div>
<div data-src="/lazy.jpg" data-srcset="/lazy-2x.jpg 2x"></div>
<table><tr><td background="/cell.gif">c</td></tr></table>
<a href="/plain.html">p</a>
</body></html>"""

EXPECTED = {
    (R + "touch.png", "E"),
    (R + "app.webmanifest", "E"),
    (R + "m.js", "E"),
    (R + "hero.jpg", "E"),
    (R + "hero-2x.jpg", "E"),
    (R + "canon.html", "L"),
    (D + "p2.html", "L"),
    (D + "p0.html", "L"),
    (R + "feed.xml", "L"),
    (R + "imp.css", "E"),
    (D + "bg.png", "E"),
    (R + "tile.gif", "E"),
    (D + "a.png", "E"),
    (D + "a-1x.png", "E"),
    (D + "a-2x.png", "E"),
    (R + "s.webp", "E"),
    (R + "s2.webp", "E"),
    (R + "movie.swf", "E"),
    (R + "applets/com/example/Game.class", "E"),
    (R + "applets/g.jar", "E"),
    (R + "applets/lib.jar", "E"),
    (R + "poster.jpg", "E"),
    (R + "v.mp4", "E"),
    (R + "v.webm", "E"),
    (R + "subs.vtt", "E"),
    (R + "a.mp3", "E"),
    (R + "go.png", "E"),
    (R + "div-bg.png", "E"),
    (R + "lazy.jpg", "E"),
    (R + "lazy-2x.jpg", "E"),
    (R + "cell.gif", "E"),
    (R + "plain.html", "L"),
}


@pytest.mark.parametrize("params", [TREE, SCANNER], ids=["tree", "scanner"])
def test_every_link_and_embed_attribute_is_found(params: ExtractorHTMLParams) -> None:
    assert links(extract(EVERY_KIND, params)) == EXPECTED


def test_the_tree_finds_any_element_attributes_in_any_letter_case() -> None:
    page = """<html><body><div Data-Src="/lazy-a.jpg"></div><p BackGround="/tile-b.gif">p</p>
<span STYLE="background: URL(/span-c.png)">s</span></body></html>"""
    assert links(extract(page)) == {
        (R + "lazy-a.jpg", "E"),
        (R + "tile-b.gif", "E"),
        (R + "span-c.png", "E"),
    }


def test_inline_css_can_be_switched_off() -> None:
    params = ExtractorHTMLParams(extract_inline_css=False)
    found = links(extract(EVERY_KIND, params))
    assert (R + "div-bg.png", "E") not in found and (R + "imp.css", "E") not in found
    assert (R + "plain.html", "L") in found


ROBOTS_NOFOLLOW = """<html><head><meta name="ROBOTS" content="NoIndex, NoFollow"></head>
<body><a href="/next.html">n</a><img src="/i.png"></body></html>"""


@pytest.mark.parametrize("params", [TREE, SCANNER], ids=["tree", "scanner"])
def test_robots_meta_nofollow_drops_links_but_keeps_embeds(params: ExtractorHTMLParams) -> None:
    curi = extract(ROBOTS_NOFOLLOW, params)
    assert links(curi) == {(R + "i.png", "E")}
    assert "metaRobots:noindex" in curi.annotations
    assert "metaRobots:nofollow" in curi.annotations


def test_robots_meta_is_ignored_when_asked() -> None:
    curi = extract(ROBOTS_NOFOLLOW, ExtractorHTMLParams(obey_robots_meta=False))
    assert (R + "next.html", "L") in links(curi)
    assert not [a for a in curi.annotations if a.startswith("metaRobots")]


def test_robots_meta_none_means_nofollow() -> None:
    curi = extract('<meta name="robots" content="none"><a href="/x">x</a>')
    assert curi.outlinks == [] and "metaRobots:nofollow" in curi.annotations


def test_charset_annotations_say_which_declaration_decided() -> None:
    page = '<meta charset="windows-1251"><a href="/\u043f.html">x</a>'.encode("cp1251")
    from_meta = extract(page, content_type="text/html")
    assert "usingCharsetInHTML:cp1251" in from_meta.annotations
    assert links(from_meta) == {(R + "\u043f.html", "L")}
    bogus = extract(page, content_type="text/html; charset=x-no-such")
    assert "unsatisfiableCharsetInHeader:x-no-such" in bogus.annotations
    assert links(bogus) == {(R + "\u043f.html", "L")}
    header = extract(b'<a href="/caf\xe9">x</a>', content_type="text/html; charset=ISO-8859-1")
    assert header.annotations == [] and links(header) == {(R + "caf\u00e9", "L")}


def test_utf16_with_bom_is_decoded() -> None:
    page = '\ufeff<html><a href="/wide.html">w</a></html>'.encode("utf-16-le")
    assert links(extract(page, content_type="text/html")) == {(R + "wide.html", "L")}


@pytest.mark.parametrize("params", [TREE, SCANNER], ids=["tree", "scanner"])
def test_inline_scripts_give_speculative_links_only_when_asked(
    params: ExtractorHTMLParams,
) -> None:
    page = """<script>var u = "/js/loaded.html"; var t = "text/html";</script>
    <script src="/ext.js">"/not/inline.html"</script>"""
    assert (R + "js/loaded.html", "X") not in links(extract(page, params))
    on = params.model_copy(update={"extract_javascript": True})
    assert links(extract(page, on)) == {(R + "js/loaded.html", "X"), (R + "ext.js", "E")}


def test_max_outlinks_is_shared_with_earlier_extractors() -> None:
    rec = Recording()
    rec.write_body(b"a{b:url(/1.png)} c{d:url(/2.png)}")
    curi = CrawlURI("http://site.example/s.css", status=200, content_type="text/css",
                    recording=rec)  # fmt: skip
    ExtractorCSS("css").process(curi)
    assert len(curi.outlinks) == 2
    rec2 = Recording()
    rec2.write_body(b'<a href="/a">a</a><a href="/b">b</a><a href="/c">c</a>')
    curi.recording, curi.content_type = rec2, "text/html"
    ExtractorHTML("html", ExtractorHTMLParams(max_outlinks=3)).process(curi)
    assert len(curi.outlinks) == 3 and curi.annotations == ["dol:2"]


HOSTILE = [
    b"<style>" * 50_000,
    b"<div style='" + b"url(" * 100_000,
    b"<a href='" + b"x" * 3_000_000 + b"'>",
    b'<img srcset="' + b"a.png 1x," * 200_000 + b'">',
    b"<html>" + bytes(range(256)) * 4000,
    b'<div data-src="' * 30_000,
    b"<script>" + b'"a\\' * 100_000,
]


@pytest.mark.timeout(20)
@pytest.mark.parametrize("params", [TREE, SCANNER], ids=["tree", "scanner"])
@pytest.mark.parametrize("body", HOSTILE, ids=[f"hostile{i}" for i in range(len(HOSTILE))])
def test_hostile_pages_are_bounded(body: bytes, params: ExtractorHTMLParams) -> None:
    on = params.model_copy(update={"extract_javascript": True})
    curi = extract(body, on)
    assert len(curi.outlinks) <= on.max_outlinks


def test_binary_served_as_html_yields_nothing_and_does_not_raise() -> None:
    curi = extract(bytes(range(256)) * 512, content_type="text/html; charset=utf-8")
    assert curi.outlinks == []
