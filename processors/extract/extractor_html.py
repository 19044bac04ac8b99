"""ExtractorHTML: links of an HTML page, from a lexbor (selectolax) parse tree.

Reads ``curi.recording`` (the body, content-encoding undone up to ``max_body_bytes``),
``curi.content_type`` and the ``Content-Encoding`` header; appends :class:`crawler.Link` s to
``curi.outlinks`` (absolute, not normalized) and annotates ``dol:<n>`` when more than
``max_outlinks`` were found. Hop letters follow Heritrix: ``a``/``area`` href and plain ``link``
href are L; ``img``/``script``/``iframe``/``frame``/``embed``/``source``/``input type=image``
(and media) sources, ``srcset`` and ``link rel=stylesheet|icon|…`` are E; meta refresh is R;
``<base href>`` changes the base of every link. Context strings look like ``a/@href``.

Documents up to ``max_tree_parse_bytes`` are parsed into a lexbor tree and walked once. lexbor's
tree building is quadratic in the depth of nested block elements (200 K nested ``<div>`` take
minutes), so larger documents go through a linear regular-expression tag scanner instead,
which is also what Heritrix uses for every page. Hostile input (binary as text/html, broken
markup, huge attribute values) never raises: it just yields few links.

Thread-safety: stateless; a parser is created per page. Heritrix counterpart:
``org.archive.modules.extractor.ExtractorHTML``.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable, Iterator, Mapping

from pydantic import Field
from selectolax.lexbor import LexborHTMLParser

from crawler import CrawlURI, Hop, Link, Params, Processor
from processors.extract.link_resolver import LinkResolver

HTML_TYPES = frozenset(
    {
        "text/html",
        "application/xhtml+xml",
        "application/vnd.wap.xhtml+xml",
        "text/vnd.wap.wml",
    }
)
_SNIFF_PREFIXES = (b"<html", b"<!doctype html")
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_META_CHARSET_RE = re.compile(rb"<meta[^>]{0,512}?charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:\-]+)", re.I)
# WHATWG encoding labels whose Python codec differs (the web's supersets of the named ones).
_CHARSET_ALIASES = {
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-sjis": "shift_jis",
    "utf-16": "utf-8",
    "utf-16le": "utf-8",
    "utf-16be": "utf-8",
}
_EMBED_LINK_RELS = frozenset(
    {
        "stylesheet",
        "icon",
        "apple-touch-icon",
        "apple-touch-icon-precomposed",
        "mask-icon",
        "modulepreload",
        "prefetch",
        "prerender",
        "preload",
    }
)
_SRC_EMBEDS = frozenset({"img", "script", "iframe", "frame", "embed", "source", "video", "audio"})
_WANTED_TAGS = _SRC_EMBEDS | {
    "a",
    "area",
    "link",
    "base",
    "meta",
    "input",
    "form",
    "object",
    "track",
}
_REFRESH_URL_RE = re.compile(r"url\s*=\s*[\"']?([^\"'\s>]+)", re.I)
# Linear tag scanner for big documents: only wanted tags, attribute text bounded.
_TAG_NAMES = "|".join(sorted(_WANTED_TAGS))
_ATTRS_TEXT = r"""(?:[^>"']|"[^"]{0,16384}"|'[^']{0,16384}'){0,4096}"""
_TAG_RE = re.compile(rf"<({_TAG_NAMES})(?=[\s/>])({_ATTRS_TEXT})", re.I)
_ATTR_RE = re.compile(r"([^\s\"'=<>/]+)(?:\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s\"'>]+)))?")
_ENTITY_RE = re.compile(r"&(?:amp|#0*38|#x0*26);", re.I)

RawLink = tuple[str, str, str]
"""(raw attribute value, hop letter, context)."""


class ExtractorHTMLParams(Params):
    """Parameters of :class:`ExtractorHTML`."""

    max_outlinks: int = Field(
        6000, ge=0, description="links kept per page; extra ones are counted as dol:<n>"
    )
    max_body_bytes: int = Field(10_000_000, gt=0, description="decoded body bytes examined at most")
    max_tree_parse_bytes: int = Field(
        131072, ge=0, description="bigger documents use the linear tag scanner, not the tree parser"
    )
    extract_forms: bool = Field(False, description="form actions (GET forms) become L links")
    obey_rel_nofollow: bool = Field(False, description="skip a/area/link with rel=nofollow")


class ExtractorHTML(Processor[ExtractorHTMLParams]):
    """Extracts links from HTML pages (see the module docstring)."""

    def should_process(self, curi: CrawlURI) -> bool:
        rec = curi.recording
        if curi.status <= 0 or rec is None or rec.body_size <= 0:
            return False
        if curi.mime_type in HTML_TYPES:
            return True
        head: bytes = rec.decoded_body(curi.header("content-encoding"), 256)
        return head.lstrip().lower().startswith(_SNIFF_PREFIXES)

    def inner_process(self, curi: CrawlURI) -> None:
        params = self.params
        body: bytes = curi.recording.decoded_body(
            curi.header("content-encoding"), params.max_body_bytes
        )
        text = _decode(body, curi.content_type)
        raw: list[RawLink] = []
        base_href: str | None
        if len(body) <= params.max_tree_parse_bytes:
            base_href = _walk_tree(text, raw, params.extract_forms, params.obey_rel_nofollow)
        else:
            if isinstance(text, bytes):
                text = text.decode("utf-8", "replace")
            base_href = _scan_tags(text, raw, params.extract_forms, params.obey_rel_nofollow)
        resolver = LinkResolver(curi.uri)
        if base_href is not None:
            base = resolver.resolve(base_href)
            if base is not None and base.startswith(("http://", "https://")):
                resolver = LinkResolver(base)
        _add_links(curi, raw, resolver, params.max_outlinks)


def _add_links(curi: CrawlURI, raw: list[RawLink], resolver: LinkResolver, limit: int) -> None:
    outlinks = curi.outlinks
    room = limit - len(outlinks)
    seen: set[tuple[str, str]] = set()
    dropped = 0
    resolve = resolver.resolve
    append = outlinks.append
    for value, hop, context in raw:
        key = (value, hop)
        if key in seen:
            continue
        seen.add(key)
        uri = resolve(value)
        if uri is None:
            continue
        if room <= 0:
            dropped += 1
            continue
        room -= 1
        append(Link(uri, hop, context))
    if dropped:
        curi.annotate(f"dol:{dropped}")


def _decode(body: bytes, content_type: str | None) -> str | bytes:
    """The document as text, or as UTF-8 bytes (which lexbor parses without a Python copy)."""
    charset = _charset(body, content_type)
    if charset == "utf-8":
        return body
    try:
        return body.decode(charset, "replace")
    except (LookupError, ValueError):
        return body


def _charset(body: bytes, content_type: str | None) -> str:
    """BOM, then the Content-Type charset, then a meta charset in the first 1 KiB; else utf-8."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            return name
    label: str | None = None
    if content_type:
        pos = content_type.lower().find("charset=")
        if pos >= 0:
            label = content_type[pos + 8 :].split(";", 1)[0].strip(" \"'")
    if not label:
        m = _META_CHARSET_RE.search(body, 0, 1024)
        if m is not None:
            label = m.group(1).decode("ascii")
    if not label:
        return "utf-8"
    label = label.lower()
    label = _CHARSET_ALIASES.get(label, label)
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return "utf-8"
    return "utf-8" if name == "utf-8" else name


def _walk_tree(text: str | bytes, out: list[RawLink], forms: bool, nofollow: bool) -> str | None:
    """Parse with lexbor and collect raw links in document order; returns the base href."""
    try:
        root = LexborHTMLParser(text).root
    except Exception:  # noqa: BLE001 - hostile input must fall back, never raise
        scan = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        return _scan_tags(scan, out, forms, nofollow)
    if root is None:
        return None
    wanted = _WANTED_TAGS
    elements = ((tag, n.attributes) for n in root.traverse() if (tag := n.tag) in wanted)
    return _collect(elements, out, forms, nofollow)


def _scan_tags(text: str, out: list[RawLink], forms: bool, nofollow: bool) -> str | None:
    """Linear fallback for big documents: regex-scan the wanted tags and their attributes."""
    return _collect(
        ((m.group(1).lower(), _parse_attrs(m.group(2))) for m in _TAG_RE.finditer(text)),
        out,
        forms,
        nofollow,
    )


def _parse_attrs(text: str) -> dict[str, str | None]:
    attrs: dict[str, str | None] = {}
    for m in _ATTR_RE.finditer(text):
        name = m.group(1).lower()
        if name not in attrs:
            value = m.group(2)
            if value is None:
                value = m.group(3)
                if value is None:
                    value = m.group(4)
            if value is not None and "&" in value:
                value = _ENTITY_RE.sub("&", value)
            attrs[name] = value
    return attrs


def _collect(
    elements: Iterator[tuple[str, Mapping[str, str | None]]],
    out: list[RawLink],
    forms: bool,
    nofollow: bool,
) -> str | None:
    """The single per-element dispatch shared by the tree walk and the tag scanner."""
    add = out.append
    base_href: str | None = None
    for tag, attrs in elements:
        if tag == "a" or tag == "area":
            href = attrs.get("href")
            if href and not (nofollow and _has_rel(attrs, "nofollow")):
                add((href, Hop.LINK, tag + "/@href"))
        elif tag in _SRC_EMBEDS:
            src = attrs.get("src")
            if src:
                add((src, Hop.EMBED, tag + "/@src"))
            if tag == "img":
                lazy = attrs.get("data-src")
                if lazy:
                    add((lazy, Hop.EMBED, "img/@data-src"))
            if tag == "img" or tag == "source":
                srcset = attrs.get("srcset")
                if srcset:
                    for url in _srcset_urls(srcset):
                        add((url, Hop.EMBED, tag + "/@srcset"))
            elif tag == "video":
                poster = attrs.get("poster")
                if poster:
                    add((poster, Hop.EMBED, "video/@poster"))
        elif tag == "link":
            _link_element(attrs, add, nofollow)
        elif tag == "base":
            if base_href is None:
                base_href = attrs.get("href") or None
        elif tag == "meta":
            _meta_refresh(attrs, add)
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
        elif tag == "form" and forms:
            action = attrs.get("action")
            if action and (attrs.get("method") or "get").strip().lower() == "get":
                add((action, Hop.LINK, "form/@action"))
    return base_href


def _has_rel(attrs: Mapping[str, str | None], token: str) -> bool:
    rel = attrs.get("rel")
    return bool(rel) and token in rel.lower().split()  # type: ignore[union-attr]


def _link_element(
    attrs: Mapping[str, str | None], add: Callable[[RawLink], None], nofollow: bool
) -> None:
    href = attrs.get("href")
    if not href:
        return
    rels = (attrs.get("rel") or "").lower().split()
    if "pingback" in rels or (nofollow and "nofollow" in rels):
        return
    if any(rel in _EMBED_LINK_RELS for rel in rels):
        add((href, Hop.EMBED, "link/@href"))
    else:
        add((href, Hop.LINK, "link/@href"))


def _meta_refresh(attrs: Mapping[str, str | None], add: Callable[[RawLink], None]) -> None:
    equiv = attrs.get("http-equiv")
    if not equiv or equiv.strip().lower() != "refresh":
        return
    content = attrs.get("content")
    if content:
        m = _REFRESH_URL_RE.search(content)
        if m is not None:
            add((m.group(1), Hop.REFER, "meta/@content"))


def _srcset_urls(srcset: str) -> list[str]:
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
