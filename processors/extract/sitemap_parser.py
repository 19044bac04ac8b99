"""A safe, streaming reader of the ``<loc>`` URLs of XML sitemaps and sitemap indexes.

Sitemaps come from strangers, so the parser (expat) refuses what XML bombs need: any entity
declaration (internal or external, general or parameter) aborts the parse, parameter-entity
parsing and external entity loading are off, and the input is fed in chunks while the URLs
found are counted, so neither time nor memory grows beyond the document's own size and the
``max_urls`` cap. A parse error (bomb, broken XML, binary) ends the parse; the URLs read up to
that point are kept and :attr:`SitemapReader.error` says why it stopped.

Not thread-safe: one reader per document. Heritrix counterpart: the sitemap parsing inside
``org.archive.modules.extractor.ExtractorSitemap`` (crawler-commons' SiteMapParser).
"""

from __future__ import annotations

import xml.parsers.expat as expat
from collections.abc import Iterable

from processors.extract.safe_xml import XmlAbortError, feed_chunks, hardened_parser

_URL_PARENTS = frozenset({"url", "sitemap"})


class SitemapReader:
    """Collects ``<loc>`` texts under ``<url>`` / ``<sitemap>`` elements (see module docstring).

    ``kind`` becomes ``"urlset"`` or ``"sitemapindex"`` once the root element is seen.
    """

    def __init__(self, max_urls: int, max_loc_chars: int = 16384) -> None:
        self.urls: list[str] = []
        self.dropped = 0
        self.kind: str | None = None
        self.error: str | None = None
        self._max_urls = max_urls
        self._max_loc_chars = max_loc_chars
        self._stack: list[str] = []
        self._text: list[str] | None = None
        self._text_chars = 0
        self._parser = hardened_parser(self._start, self._end, self._chars)

    def feed_all(self, chunks: Iterable[bytes]) -> SitemapReader:
        """Parse the whole document given as byte chunks; never raises for bad input."""
        parser = self._parser
        try:
            feed_chunks(parser, chunks)
        except XmlAbortError as exc:
            self.error = str(exc)
        except expat.ExpatError as exc:
            self.error = f"xml: {expat.ErrorString(exc.code)}"
        except (ValueError, RecursionError) as exc:
            self.error = f"xml: {exc}"
        self._parser = None  # type: ignore[assignment]  # frees expat's buffers and handlers
        return self

    def _start(self, name: str, _attrs: dict[str, str]) -> None:
        local = name.rpartition(":")[2]
        if self.kind is None:
            self.kind = local
        stack = self._stack
        if local == "loc" and stack and stack[-1] in _URL_PARENTS and self._text is None:
            self._text = []
            self._text_chars = 0
        if len(stack) < 64:
            stack.append(local)
        else:
            raise XmlAbortError("nesting too deep")

    def _chars(self, data: str) -> None:
        text = self._text
        if text is not None:
            self._text_chars += len(data)
            if self._text_chars <= self._max_loc_chars:
                text.append(data)

    def _end(self, name: str) -> None:
        if self._stack:
            self._stack.pop()
        if self._text is None or name.rpartition(":")[2] != "loc":
            return
        loc = "".join(self._text).strip()
        self._text = None
        if not loc or self._text_chars > self._max_loc_chars:
            return
        if len(self.urls) < self._max_urls:
            self.urls.append(loc)
        else:
            self.dropped += 1
