"""ExtractorHTML: links of an HTML page, from a lexbor (selectolax) parse tree.

Reads ``curi.recording`` (the body, content-encoding undone up to ``max_body_bytes``),
``curi.content_type`` and the ``Content-Encoding`` header; appends :class:`crawler.Link` s to
``curi.outlinks`` (absolute, not normalized) up to ``max_outlinks`` per URI (the rest counted
in ``dol:<n>``) and may annotate the charset used (:mod:`processors.extract.html_charset`) and
``metaRobots:noindex`` / ``metaRobots:nofollow``. Which attributes are links, with which hop
letter, is :mod:`processors.extract.html_links`; ``<base href>`` changes the base of every
link; ``<style>`` blocks and ``style`` attributes go through ExtractorCSS's pattern (E), inline
scripts optionally through ExtractorJS's (X). With ``obey_robots_meta`` (and ``robots.policy:
obey``) a robots ``<meta>`` saying ``nofollow`` or ``none`` drops the page's L links (its embeds
are still needed to render it) and ``noindex`` is only annotated, as archival crawlers keep
the page.

Documents up to ``max_tree_parse_bytes`` are parsed into a lexbor tree and walked once. lexbor's
tree building is quadratic in the depth of nested block elements (200 K nested ``<div>`` take
minutes), so larger documents go through a linear regular-expression tag scanner instead,
which is also what Heritrix uses for every page. Hostile input (binary as text/html, broken
markup, huge attribute values) never raises: it just yields few links.

Thread-safety: stateless; a parser is created per page. Heritrix counterpart:
``org.archive.modules.extractor.ExtractorHTML``.
"""

from __future__ import annotations

import html
import re
from typing import Any

from pydantic import Field
from selectolax.lexbor import LexborHTMLParser

from crawler import CrawlURI, Hop, Params, Processor, ProcessorContext
from processors.extract.extractor_css import css_links
from processors.extract.extractor_js import js_links
from processors.extract.html_charset import decode_html
from processors.extract.html_links import (
    ANY_ELEMENT_ATTRS,
    STYLE_TEXT,
    WANTED_TAGS,
    PageFacts,
    attribute_links,
    collect,
)
from processors.extract.link_resolver import LinkResolver
from processors.extract.outlinks import RawLink, add_links

HTML_TYPES = frozenset(
    {
        "text/html",
        "application/xhtml+xml",
        "application/vnd.wap.xhtml+xml",
        "text/vnd.wap.wml",
    }
)
_SNIFF_PREFIXES = (b"<html", b"<!doctype html")
# Linear tag scanner for big documents: only wanted tags, attribute text bounded.
_TAG_NAMES = "|".join(sorted(WANTED_TAGS))
_ATTRS_TEXT = r"""(?:[^>"']|"[^"]{0,16384}"|'[^']{0,16384}'){0,4096}"""
_TAG_RE = re.compile(rf"<({_TAG_NAMES})(?=[\s/>])({_ATTRS_TEXT})", re.I)
_ATTR_RE = re.compile(r"([^\s\"'=<>/]+)(?:\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s\"'>]+)))?")
_ANY_ATTR_VALUE_RE = re.compile(
    rb"""\s*=\s*(?:"([^"]{0,16384})"|'([^']{0,16384})'|([^\s"'>]{1,16384}))"""
)
# Searched for by the tag scanner; ``data-src`` also finds ``data-srcset`` (one pass, not two).
_ANY_ATTR_NAMES = tuple(
    (spelling.encode(), name)
    for name in ANY_ELEMENT_ATTRS
    if name != "data-srcset"
    for spelling in ((name, name.upper()) if name == "background" else (name,))
)
_SRCSET_TAIL = b"set"
_ATTR_PRECEDERS = frozenset(b" \t\r\n\f\"'/")
_STYLE_OPEN_RE = re.compile(rb"<style\b[^>]{0,1024}>", re.I)
_STYLE_CLOSE_RE = re.compile(rb"</style", re.I)
_SCRIPT_OPEN_RE = re.compile(rb"<script\b[^>]{0,1024}>", re.I)
_SCRIPT_CLOSE_RE = re.compile(rb"</script", re.I)
_ANY_ATTR_SELECTOR = '[style*="url"], [style*="URL"], [background], [data-src], [data-srcset]'
_WANTED_WITH_STYLE = WANTED_TAGS | {"style"}
# Deepest element nesting (estimated as start tags minus twice the end tags) handed to lexbor:
# 25,000 unclosed <div>s fit in 128 KiB and cost it seconds of CPU; real pages stay far below.
MAX_TREE_NESTING = 4096
_NOFOLLOW = frozenset({"nofollow", "none"})
_NOINDEX = frozenset({"noindex", "none"})


class ExtractorHTMLParams(Params):
    """Parameters of :class:`ExtractorHTML`."""

    max_outlinks: int = Field(
        6000, ge=0, description="links kept per URI; extra ones are counted as dol:<n>"
    )
    max_body_bytes: int = Field(10_000_000, gt=0, description="decoded body bytes examined at most")
    max_tree_parse_bytes: int = Field(
        131072, ge=0, description="bigger documents use the linear tag scanner, not the tree parser"
    )
    extract_forms: bool = Field(False, description="form actions (GET forms) become L links")
    obey_rel_nofollow: bool = Field(False, description="skip a/area/link with rel=nofollow")
    obey_robots_meta: bool = Field(
        True,
        description="under robots.policy obey, a robots meta nofollow/none drops the page's L "
        "links; noindex is only annotated",
    )
    extract_inline_css: bool = Field(
        True, description="url()s of <style> blocks and style/background attributes become E"
    )
    extract_javascript: bool = Field(
        False, description="URI-like strings of inline <script> blocks become X links"
    )


class ExtractorHTML(Processor[ExtractorHTMLParams]):
    """Extracts links from HTML pages (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._obey_meta = self.params.obey_robots_meta

    def start(self, ctx: ProcessorContext) -> None:
        super().start(ctx)
        self._obey_meta = self.params.obey_robots_meta and ctx.order.robots.policy == "obey"

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
        text, notes = decode_html(body, curi.content_type)
        for note in notes:
            curi.annotate(note)
        raw: list[RawLink] = []
        if len(body) <= params.max_tree_parse_bytes and _nesting_within(body, MAX_TREE_NESTING):
            facts = _walk_tree(text, raw, params)
        else:
            if isinstance(text, bytes):
                facts = _scan_tags(text.decode("utf-8", "replace"), text, raw, params)
            else:
                facts = _scan_tags(text, None, raw, params)
        if facts.robots and self._obey_meta:
            tokens = set(facts.robots.replace(",", " ").split())
            if tokens & _NOINDEX:
                curi.annotate("metaRobots:noindex")
            if tokens & _NOFOLLOW:
                curi.annotate("metaRobots:nofollow")
                raw = [link for link in raw if link[1] != Hop.LINK]
        resolver = LinkResolver(curi.uri)
        if facts.base_href is not None:
            base = resolver.resolve(facts.base_href)
            if base is not None and base.startswith(("http://", "https://")):
                resolver = LinkResolver(base)
        add_links(curi, raw, resolver, params.max_outlinks)


def _nesting_within(body: bytes, limit: int) -> bool:
    """Whether an upper-bound-ish guess of the element nesting depth (tags opened but never
    closed: ``<`` count minus twice the ``</`` count) is at most ``limit``.

    Void elements and implied end tags make it overestimate on real pages (hundreds at most);
    a document of unclosed block elements, quadratic for the tree builder, scores in the
    thousands. One ``bytes.count`` pass, and the costlier ``</`` count only when the ``<``
    count alone exceeds ``limit`` (the guess is never above it).
    """
    opened = body.count(b"<")
    return opened <= limit or opened - 2 * body.count(b"</") <= limit


def _walk_tree(text: str | bytes, out: list[RawLink], params: ExtractorHTMLParams) -> PageFacts:
    """Parse with lexbor and collect raw links in document order."""
    try:
        tree = LexborHTMLParser(text)
        root = tree.root
    except Exception:  # noqa: BLE001 - hostile input must fall back, never raise
        if isinstance(text, bytes):
            return _scan_tags(text.decode("utf-8", "replace"), text, out, params)
        return _scan_tags(text, None, out, params)
    if root is None:
        return PageFacts()
    css = params.extract_inline_css
    wanted = _WANTED_WITH_STYLE if css else WANTED_TAGS
    elements = (
        (tag, n.attributes if tag != "style" else {STYLE_TEXT: n.text(deep=True)})
        for n in root.traverse()
        if (tag := n.tag) in wanted
    )
    facts = collect(elements, out, params.extract_forms, params.obey_rel_nofollow)
    if css:
        # lexbor's selector walks the parsed tree in C: cheaper than even a byte search of the
        # page for the attribute names (bench/extract_html.py), and it sees them in any case.
        for node in tree.css(_ANY_ATTR_SELECTOR):
            attribute_links(node.attributes, out)
    if params.extract_javascript:
        for node in tree.css("script"):
            if node.attributes.get("src") is None:
                out.extend(js_links(node.text(deep=True)))
    return facts


def _scan_tags(
    text: str, utf8: bytes | None, out: list[RawLink], params: ExtractorHTMLParams
) -> PageFacts:
    """Linear fallback for big documents: regex-scan the wanted tags and their attributes.

    ``utf8`` is the document as UTF-8 bytes when the caller has them: the scans for
    ``<style>``/``<script>`` blocks and any-element attributes run on bytes, where substring
    search is several times faster than on a non-ASCII ``str``.
    """
    facts = collect(
        ((tag.lower(), _parse_attrs(attrs)) for tag, attrs in _TAG_RE.findall(text)),
        out,
        params.extract_forms,
        params.obey_rel_nofollow,
    )
    if not (params.extract_inline_css or params.extract_javascript):
        return facts
    data = utf8 if utf8 is not None else text.encode("utf-8", "replace")
    if params.extract_inline_css:
        for block in _blocks(data, _STYLE_OPEN_RE, _STYLE_CLOSE_RE):
            out.extend(css_links(block))
        _scan_any_element_attrs(data, out)
    if params.extract_javascript:
        for block in _blocks(data, _SCRIPT_OPEN_RE, _SCRIPT_CLOSE_RE, skip_with_src=True):
            out.extend(js_links(block))
    return facts


def _scan_any_element_attrs(data: bytes, out: list[RawLink]) -> None:
    """The ``style``/``background``/``data-src*`` attributes of any element, found with
    ``bytes.find`` (far cheaper than a regex alternation tried at every position)."""
    match_value = _ANY_ATTR_VALUE_RE.match
    for spelling, name in _ANY_ATTR_NAMES:
        if name == "style" and b"url(" not in data and b"URL(" not in data:
            continue
        pos = data.find(spelling)
        while pos >= 0:
            end = pos + len(spelling)
            attr = name
            if name == "data-src" and data.startswith(_SRCSET_TAIL, end):
                attr, end = "data-srcset", end + len(_SRCSET_TAIL)
            if pos > 0 and data[pos - 1] in _ATTR_PRECEDERS:
                m = match_value(data, end)
                if m is not None:
                    found = m.group(1)
                    if found is None:
                        found = m.group(2)
                        if found is None:
                            found = m.group(3)
                    value = found.decode("utf-8", "replace")
                    if "&" in value:
                        value = html.unescape(value)
                    attribute_links({attr: value}, out)
                    end = m.end()
            pos = data.find(spelling, end)


def _blocks(
    data: bytes,
    opening: re.Pattern[bytes],
    closing: re.Pattern[bytes],
    skip_with_src: bool = False,
) -> list[str]:
    """Contents of ``<style>``/``<script>`` elements, found in one linear pass."""
    blocks: list[str] = []
    pos = 0
    while True:
        start = opening.search(data, pos)
        if start is None:
            return blocks
        end = closing.search(data, start.end())
        if end is None:
            return blocks
        if not (skip_with_src and b"src" in start.group(0)[7:].lower()):
            blocks.append(data[start.end() : end.start()].decode("utf-8", "replace"))
        pos = end.end()


def _parse_attrs(text: str) -> dict[str, str | None]:
    """Attributes of a tag's text; the first of a repeated name wins; no value gives ``""``."""
    attrs: dict[str, str | None] = {}
    for name, double, single, bare in _ATTR_RE.findall(text):
        name = name.lower()
        if name not in attrs:
            value = double or single or bare
            if "&" in value:
                value = html.unescape(value)
            attrs[name] = value
    return attrs
