"""ExtractorJS: speculative (X) links from the string literals of JavaScript.

Runs on successful fetches with a JavaScript Content-Type (``javascript``, ``ecmascript``,
``jscript``) or, unless served as HTML, a path ending in ``.js``/``.mjs``. Reads
``curi.recording`` (decoded, capped at ``max_body_bytes``); appends X links, resolved against
the script's URI, with context ``js/string``, up to ``max_outlinks`` per URI (extra ones
counted in ``dol:<n>``). :func:`js_links` also serves ExtractorHTML's inline-script option.

Deliberately conservative, since every guess costs a fetch: a literal counts only when it has
no whitespace or markup characters and is either an absolute ``http(s)://`` URL, a
protocol-relative ``//host/…`` URL, or a path whose last segment has a well-known web file
extension (``/path/file.html``, ``img/x.png``, ``../a.css?v=2``). MIME types (``text/html``),
bare words, numbers and expressions never match. JSON-style ``\\/`` escapes are undone.
The literal pattern is linear (disjoint, bounded repetitions). Off in the default order
(Heritrix has it on); turn it on with ``enabled: true``.

Thread-safety: stateless. Heritrix counterpart: ``org.archive.modules.extractor.ExtractorJS``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from pydantic import Field

from crawler import CrawlURI, Hop, Params, Processor
from processors.extract.link_resolver import LinkResolver
from processors.extract.outlinks import RawLink, add_links, path_ends_with, text_of

_STRING_RE = re.compile(r""""((?:[^"\\\n]|\\.){3,2048})"|'((?:[^'\\\n]|\\.){3,2048})'""")
_FORBIDDEN = frozenset(" \t\r\n\f\v<>{}|^`\"'\\()[]")
_WEB_EXTENSION_RE = re.compile(
    r"x?html?|shtml|php|aspx?|jsp|cfm|cgi|pl|m?js|css|json|xml|rss|atom|txt|pdf|png|jpe?g|gif|svg"
    r"|webp|ico|bmp|avif|mp[34]|webm|og[gv]|wav|m4a|flac|woff2?|ttf|otf|eot|swf|zip|gz",
    re.I,
)
JS_TYPES = ("javascript", "ecmascript", "jscript")


def looks_like_uri(value: str) -> bool:
    """Whether a string literal is very likely a URL or a path to a web resource."""
    if not 3 <= len(value) <= 2048 or any(ch in _FORBIDDEN for ch in value):
        return False
    lower = value[:8].lower()
    if lower.startswith(("http://", "https://")):
        return len(value) > lower.index("//") + 3 and value[lower.index("//") + 2] not in "/.:"
    if value.startswith("//"):
        return len(value) > 3 and value[2].isalnum() and "." in value.split("/", 3)[2]
    path = value
    for sep in ("?", "#"):
        pos = path.find(sep)
        if pos >= 0:
            path = path[:pos]
    stem, dot, extension = path.rpartition("/")[2].rpartition(".")
    return (
        bool(dot) and bool(stem.strip(".")) and _WEB_EXTENSION_RE.fullmatch(extension) is not None
    )


def js_links(text: str) -> Iterator[RawLink]:
    """Raw X links of JavaScript ``text``: string literals that look like URIs, in order."""
    for m in _STRING_RE.finditer(text):
        value = m.group(1)
        if value is None:
            value = m.group(2)
        if "\\" in value:
            value = value.replace("\\/", "/")
        if looks_like_uri(value):
            yield (value, Hop.SPECULATIVE, "js/string")


class ExtractorJSParams(Params):
    """Parameters of :class:`ExtractorJS`."""

    max_outlinks: int = Field(
        6000, ge=0, description="links kept per URI; extra ones are counted as dol:<n>"
    )
    max_body_bytes: int = Field(10_000_000, gt=0, description="decoded body bytes examined at most")


class ExtractorJS(Processor[ExtractorJSParams]):
    """Extracts speculative links from scripts (see the module docstring)."""

    def should_process(self, curi: CrawlURI) -> bool:
        rec = curi.recording
        if curi.status <= 0 or rec is None or rec.body_size <= 0:
            return False
        mime = curi.mime_type
        if any(t in mime for t in JS_TYPES):
            return True
        return "html" not in mime and path_ends_with(curi.uri, (".js", ".mjs"))

    def inner_process(self, curi: CrawlURI) -> None:
        params = self.params
        body: bytes = curi.recording.decoded_body(
            curi.header("content-encoding"), params.max_body_bytes
        )
        text = text_of(body, curi.content_type)
        add_links(curi, js_links(text), LinkResolver(curi.uri), params.max_outlinks)
