"""ExtractorCSS: embeds named by a stylesheet's ``url()`` and ``@import``.

Runs on successful fetches whose Content-Type mentions ``css`` or, unless it is HTML, whose path
ends in ``.css``.
Reads ``curi.recording`` (content-encoding undone up to ``max_body_bytes``) and the Content-Type
charset; appends E links to ``curi.outlinks`` resolved against the stylesheet's URI (absolute,
not normalized), with context ``css/url()`` or ``css/@import``, up to ``max_outlinks`` per URI
(extra ones counted in ``dol:<n>``). :func:`css_links` is also what ExtractorHTML applies to
``<style>`` blocks and ``style`` attributes.

The pattern has bounded, disjoint repetitions only, so any input is scanned in linear time.
Thread-safety: stateless. Heritrix counterpart: ``org.archive.modules.extractor.ExtractorCSS``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from pydantic import Field

from crawler import CrawlURI, Hop, Params, Processor
from processors.extract.link_resolver import LinkResolver
from processors.extract.outlinks import RawLink, add_links, path_ends_with, text_of

_CSS_URL_RE = re.compile(
    r"""(@import\s+(?:url\(\s*)?|url\(\s*)"""
    r"""(?:"([^"\n]{0,16384})"|'([^'\n]{0,16384})'|([^\s'"()]{1,16384}))""",
    re.I,
)


def css_links(text: str) -> Iterator[RawLink]:
    """Raw E links of CSS ``text``: every ``url(...)`` and ``@import`` target, in order."""
    for m in _CSS_URL_RE.finditer(text):
        value = m.group(2)
        if value is None:
            value = m.group(3)
            if value is None:
                value = m.group(4)
        if value:
            context = "css/@import" if m.group(1)[0] == "@" else "css/url()"
            yield (value, Hop.EMBED, context)


class ExtractorCSSParams(Params):
    """Parameters of :class:`ExtractorCSS`."""

    max_outlinks: int = Field(
        6000, ge=0, description="links kept per URI; extra ones are counted as dol:<n>"
    )
    max_body_bytes: int = Field(10_000_000, gt=0, description="decoded body bytes examined at most")


class ExtractorCSS(Processor[ExtractorCSSParams]):
    """Extracts ``url()`` and ``@import`` embeds from stylesheets (see the module docstring)."""

    def should_process(self, curi: CrawlURI) -> bool:
        rec = curi.recording
        if curi.status <= 0 or rec is None or rec.body_size <= 0:
            return False
        mime = curi.mime_type
        if "css" in mime:
            return True
        # A .css path served as HTML is an error page, not a stylesheet.
        return "html" not in mime and path_ends_with(curi.uri, (".css",))

    def inner_process(self, curi: CrawlURI) -> None:
        params = self.params
        body: bytes = curi.recording.decoded_body(
            curi.header("content-encoding"), params.max_body_bytes
        )
        text = text_of(body, curi.content_type)
        add_links(curi, css_links(text), LinkResolver(curi.uri), params.max_outlinks)
