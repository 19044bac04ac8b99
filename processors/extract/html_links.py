"""Which attributes of which HTML elements are links, and with which hop letter.

One dispatch, :func:`collect`, serves both ways ExtractorHTML reads a page (lexbor's tree and
the linear tag scanner), so they agree link for link. Hop letters follow Heritrix: ``a``/
``area`` href, plain ``link`` href (alternate, canonical, next, prev…) and GET form actions are
L; everything a browser loads to render the page is E (``img``/``script``/``iframe``/``frame``/
``embed``/media ``src``, ``srcset``, ``video/@poster``, ``input type=image``, ``object/@data``,
``applet`` code and archives, ``link rel=stylesheet|icon|manifest|preload|…``); ``meta``
refresh is R. :func:`attribute_links` handles the attributes any element may carry
(``style`` url(), ``background``, ``data-src``, ``data-srcset``). Pure functions, thread-safe.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from crawler import Hop
from processors.extract.extractor_css import css_links
from processors.extract.outlinks import EMBED_LINK_RELS, RawLink

SRC_EMBEDS = frozenset({"img", "script", "iframe", "frame", "embed", "source", "video", "audio"})
WANTED_TAGS = SRC_EMBEDS | {
    "a",
    "area",
    "link",
    "base",
    "meta",
    "input",
    "form",
    "object",
    "track",
    "applet",
}
STYLE_TEXT = "#text"
"""Pseudo-attribute under which the tree walk passes a ``<style>`` element's text to
:func:`collect`."""
ANY_ELEMENT_ATTRS = ("style", "background", "data-src", "data-srcset")
_REFRESH_URL_RE = re.compile(r"url\s*=\s*[\"']?([^\"'\s>]+)", re.I)

Attrs = Mapping[str, str | None]


class PageFacts:
    """What a page says about itself besides links: ``<base href>`` and robots ``<meta>``."""

    __slots__ = ("base_href", "robots")

    def __init__(self) -> None:
        self.base_href: str | None = None
        self.robots: str | None = None


def collect(
    elements: Iterable[tuple[str, Attrs]],
    out: list[RawLink],
    forms: bool,
    nofollow: bool,
) -> PageFacts:
    """Append the raw links of ``elements`` (tag, attributes) to ``out``, in document order."""
    add = out.append
    facts = PageFacts()
    for tag, attrs in elements:
        if tag == "a" or tag == "area":
            href = attrs.get("href")
            if href and not (nofollow and _has_rel(attrs, "nofollow")):
                add((href, Hop.LINK, tag + "/@href"))
        elif tag in SRC_EMBEDS:
            src = attrs.get("src")
            if src:
                add((src, Hop.EMBED, tag + "/@src"))
            if tag == "img" or tag == "source":
                srcset = attrs.get("srcset")
                if srcset:
                    for url in srcset_urls(srcset):
                        add((url, Hop.EMBED, tag + "/@srcset"))
            elif tag == "video":
                poster = attrs.get("poster")
                if poster:
                    add((poster, Hop.EMBED, "video/@poster"))
        elif tag == "link":
            _link_element(attrs, add, nofollow)
        elif tag == "meta":
            _meta(attrs, add, facts)
        elif tag == "base":
            if facts.base_href is None:
                facts.base_href = attrs.get("href") or None
        elif tag == "input":
            src = attrs.get("src")
            if src and (attrs.get("type") or "").lower() == "image":
                add((src, Hop.EMBED, "input/@src"))
        elif tag == "track":
            src = attrs.get("src")
            if src:
                add((src, Hop.EMBED, "track/@src"))
        elif tag == "object":
            data = attrs.get("data")
            if data:
                add((data, Hop.EMBED, "object/@data"))
        elif tag == "applet":
            _applet(attrs, add)
        elif tag == "form":
            action = attrs.get("action")
            if forms and action and (attrs.get("method") or "get").strip().lower() == "get":
                add((action, Hop.LINK, "form/@action"))
        elif tag == "style":
            css = attrs.get(STYLE_TEXT)
            if css:
                out.extend(css_links(css))
    return facts


def attribute_links(attrs: Attrs, out: list[RawLink]) -> None:
    """Append the E links of the attributes any element may carry (see module docstring)."""
    style = attrs.get("style")
    if style and "url" in style.lower():
        out.extend(css_links(style))
    background = attrs.get("background")
    if background:
        out.append((background, Hop.EMBED, "@background"))
    lazy = attrs.get("data-src")
    if lazy:
        out.append((lazy, Hop.EMBED, "@data-src"))
    lazy_set = attrs.get("data-srcset")
    if lazy_set:
        out.extend((url, Hop.EMBED, "@data-srcset") for url in srcset_urls(lazy_set))


def _has_rel(attrs: Attrs, token: str) -> bool:
    rel = attrs.get("rel")
    return bool(rel) and token in rel.lower().split()  # type: ignore[union-attr]


def _link_element(attrs: Attrs, add: Callable[[RawLink], None], nofollow: bool) -> None:
    rels = (attrs.get("rel") or "").lower().split()
    if "pingback" in rels or (nofollow and "nofollow" in rels):
        return
    embed = any(rel in EMBED_LINK_RELS for rel in rels)
    href = attrs.get("href")
    if href:
        add((href, Hop.EMBED if embed else Hop.LINK, "link/@href"))
    image_srcset = attrs.get("imagesrcset")
    if image_srcset and embed:
        for url in srcset_urls(image_srcset):
            add((url, Hop.EMBED, "link/@imagesrcset"))


def _meta(attrs: Attrs, add: Callable[[RawLink], None], facts: PageFacts) -> None:
    equiv = attrs.get("http-equiv")
    if equiv and equiv.strip().lower() == "refresh":
        content = attrs.get("content")
        if content:
            m = _REFRESH_URL_RE.search(content)
            if m is not None:
                add((m.group(1), Hop.REFER, "meta/@content"))
        return
    name = attrs.get("name")
    if name and name.strip().lower() == "robots":
        content = (attrs.get("content") or "").lower()
        facts.robots = content if facts.robots is None else facts.robots + "," + content


def _applet(attrs: Attrs, add: Callable[[RawLink], None]) -> None:
    codebase = (attrs.get("codebase") or "").strip()
    if codebase and not codebase.endswith("/"):
        codebase += "/"
    code = attrs.get("code")
    if code:
        code = code.strip()
        if not code.endswith(".class"):
            code = code.replace(".", "/") + ".class"
        add((codebase + code, Hop.EMBED, "applet/@code"))
    archive = attrs.get("archive")
    if archive:
        for jar in archive.split(","):
            if jar.strip():
                add((codebase + jar.strip(), Hop.EMBED, "applet/@archive"))


def srcset_urls(srcset: str) -> list[str]:
    """URLs of a srcset: comma-separated candidates, each a URL and optional descriptors."""
    urls: list[str] = []
    pos, end = 0, len(srcset)
    while pos < end:
        while pos < end and (srcset[pos] in " \t\r\n\f,"):
            pos += 1
        start = pos
        while pos < end and srcset[pos] not in " \t\r\n\f":
            pos += 1
        url = srcset[start:pos]
        if url.endswith(","):
            url = url.rstrip(",")
        else:
            comma = srcset.find(",", pos)
            pos = end if comma < 0 else comma + 1
        if url:
            urls.append(url)
    return urls
