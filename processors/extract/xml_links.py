"""XmlLinkReader: a safe, streaming reader of the links of RSS, Atom and generic XML documents.

What it collects, as raw links (value, hop, context):

* RSS: ``<link>`` text (L), ``<guid>`` text (L) when ``isPermaLink="true"``, or when the
  attribute is absent and the text is an absolute http(s) URL,
  ``<enclosure url>`` and ``<media:content url>`` (E: the item's media);
* Atom: ``<link href>`` (L; E for ``rel="enclosure"``), ``<content src>`` (L),
  ``<icon>``/``<logo>`` text (E);
* any XML: ``<loc>`` text, ``href`` attributes (``xlink:href`` too) and absolute http(s) URLs
  standing alone as an attribute value or an element's text (L).

A document whose root is ``<urlset>`` or ``<sitemapindex>`` is a sitemap, ExtractorSitemap's
work: the reader stops at its root and :attr:`XmlLinkReader.kind` says so. The parser (expat)
is hardened as the sitemap reader's is: any entity declaration aborts the parse, external
entities are never loaded, nesting is capped, text is kept only up to ``max_text_chars``, and
links are counted against ``max_links`` (the rest only counted in ``dropped``). A parse error
ends the parse with the links read so far kept and :attr:`XmlLinkReader.error` set.

Not thread-safe: one reader per document.
"""

from __future__ import annotations

import xml.parsers.expat as expat
from collections.abc import Iterable

from crawler import Hop
from processors.extract.outlinks import RawLink
from processors.extract.safe_xml import XmlAbortError, feed_chunks, hardened_parser

SITEMAP_ROOTS = frozenset({"urlset", "sitemapindex"})
_MAX_DEPTH = 256
_URL_PREFIXES = ("http://", "https://")
_TEXT_LINKS = {"link": "xml/link", "loc": "xml/loc", "guid": "xml/guid"}
_EMBED_TEXTS = {"icon": "xml/icon", "logo": "xml/logo"}
_GUID_IF_URL = "xml/guid?"
_NAMED_TEXTS = {
    **dict.fromkeys(_TEXT_LINKS.values(), Hop.LINK),
    **dict.fromkeys(_EMBED_TEXTS.values(), Hop.EMBED),
}


class _Text:
    """The text of one open element and how its link would be named ('' = never a link)."""

    __slots__ = ("chars", "context", "parts")

    def __init__(self, context: str) -> None:
        self.context = context
        self.parts: list[str] = []
        self.chars = 0


class _SitemapError(XmlAbortError):
    """The root says sitemap: not this reader's document."""


def _local(name: str) -> str:
    """The local part of an expat name (``ns-uri:local`` or ``prefix:local``)."""
    return name.rpartition(":")[2]


def _looks_like_url(value: str) -> bool:
    v = value.strip()
    return v[:8].lower().startswith(_URL_PREFIXES) and not any(c.isspace() for c in v)


class XmlLinkReader:
    """Collects the links of one XML document (see the module docstring)."""

    def __init__(self, max_links: int, max_text_chars: int = 16384) -> None:
        self.links: list[RawLink] = []
        self.dropped = 0
        self.kind: str | None = None
        self.error: str | None = None
        self._max_links = max_links
        self._max_text_chars = max_text_chars
        self._stack: list[_Text] = []
        # expat without namespace processing: names stay prefix:local, so <link> of RSS, Atom
        # (default namespace) and atom:link all end in "link".
        self._parser = hardened_parser(self._start, self._end, self._chars)

    def feed_all(self, chunks: Iterable[bytes]) -> XmlLinkReader:
        """Parse the whole document given as byte chunks; never raises for bad input."""
        parser = self._parser
        try:
            feed_chunks(parser, chunks)
        except _SitemapError:
            pass
        except XmlAbortError as exc:
            self.error = str(exc)
        except expat.ExpatError as exc:
            self.error = f"xml: {expat.ErrorString(exc.code)}"
        except (ValueError, RecursionError) as exc:
            self.error = f"xml: {exc}"
        self._parser = None  # type: ignore[assignment]  # frees expat's buffers and handlers
        return self

    def _add(self, value: str, hop: str, context: str) -> None:
        value = value.strip()
        if not value or len(value) > self._max_text_chars:
            return
        if len(self.links) < self._max_links:
            self.links.append((value, hop, context))
        else:
            self.dropped += 1

    def _start(self, name: str, attrs: dict[str, str]) -> None:
        local = _local(name).lower()
        if self.kind is None:
            self.kind = local
            if local in SITEMAP_ROOTS:
                raise _SitemapError(local)
        stack = self._stack
        if len(stack) >= _MAX_DEPTH:
            raise XmlAbortError("nesting too deep")
        if attrs:
            self._attributes(local, attrs)
        context = _TEXT_LINKS.get(local) or _EMBED_TEXTS.get(local)
        if local == "guid":
            permalink = attrs.get("isPermaLink", "").strip().lower()
            # An explicit permalink is taken as it is; an unmarked guid is only a link when
            # it reads as one (many feeds put tag: URIs or numbers there).
            context = {"true": "xml/guid", "false": ""}.get(permalink, _GUID_IF_URL)
        elif context is None:
            context = f"xml/{local}"
        stack.append(_Text(context))

    def _attributes(self, local: str, attrs: dict[str, str]) -> None:
        for attr, value in attrs.items():
            if attr.startswith("xmlns"):
                continue  # a namespace name, not a link
            attr_local = _local(attr).lower()
            if attr_local == "href":
                rel = attrs.get("rel", "").lower()
                hop = Hop.EMBED if rel == "enclosure" else Hop.LINK
                self._add(value, hop, f"xml/{local}/@href")
            elif attr_local == "url" and local in ("enclosure", "content", "thumbnail"):
                self._add(value, Hop.EMBED, f"xml/{local}/@url")
            elif attr_local == "src" and local == "content":
                self._add(value, Hop.LINK, "xml/content/@src")
            elif _looks_like_url(value):
                self._add(value, Hop.LINK, f"xml/{local}/@{attr_local}")

    def _chars(self, data: str) -> None:
        stack = self._stack
        if stack:
            text = stack[-1]
            text.chars += len(data)
            if text.chars <= self._max_text_chars:
                text.parts.append(data)

    def _end(self, _name: str) -> None:
        if not self._stack:
            return
        text = self._stack.pop()
        context = text.context
        if not text.parts or not context or text.chars > self._max_text_chars:
            return
        value = "".join(text.parts).strip()
        # Named link elements are taken as they are (relative ones resolve against the
        # document); any other element's text only when it is an absolute URL on its own.
        if context in _NAMED_TEXTS:
            self._add(value, _NAMED_TEXTS[context], context)
        elif _looks_like_url(value):
            self._add(value, Hop.LINK, "xml/guid" if context == _GUID_IF_URL else context)
