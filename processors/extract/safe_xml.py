"""Hardened expat for XML from strangers (sitemaps, feeds): what the XML readers share.

:func:`hardened_parser` refuses what XML bombs need — any entity declaration (billion laughs,
quadratic blow-up) and any external entity (XXE) stop the parse with :class:`XmlAbortError` —
and keeps the character data together (``buffer_text``). :func:`feed_chunks` gives it a
document's byte chunks in slices of at most 64 KiB, so a handler that aborts stops the work
within one slice. Not thread-safe: one parser per document, as expat requires.
"""

from __future__ import annotations

import xml.parsers.expat as expat
from collections.abc import Callable, Iterable
from typing import Any

from crawler.crawler_error import CrawlerError

CHUNK_BYTES = 65536


class XmlAbortError(CrawlerError):
    """Raised from a handler (or by the parser's refusals) to stop the parse at once."""


def _refuse_entity(*_args: object) -> None:
    raise XmlAbortError("entity declaration refused")


def _refuse_external(*_args: object) -> int:
    raise XmlAbortError("external entity refused")


def hardened_parser(
    start: Callable[[str, dict[str, str]], Any],
    end: Callable[[str], Any],
    chars: Callable[[str], Any],
) -> expat.XMLParserType:
    """An expat parser without namespace processing, entities refused, with these handlers."""
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.EntityDeclHandler = _refuse_entity
    parser.ExternalEntityRefHandler = _refuse_external
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    parser.buffer_text = True
    return parser


def feed_chunks(parser: expat.XMLParserType, chunks: Iterable[bytes]) -> None:
    """Parse a whole document; raises what the handlers raise and ``expat.ExpatError``."""
    for chunk in chunks:
        for begin in range(0, len(chunk), CHUNK_BYTES):
            parser.Parse(chunk[begin : begin + CHUNK_BYTES], False)
    parser.Parse(b"", True)
