"""The "needs a browser" test: does an HTML page look built by its scripts?

:func:`script_built_reason` reads the start of a page as fetched over HTTP and names the first
sign that its content or links come from scripts, or returns None:

- ``nextData`` / ``nuxtData``: a framework's serialized state (``__NEXT_DATA__``, ``__NUXT__``);
- ``spaRoot``: an empty application root (``<div id="app"></div>``, ``root``, ``__next``, …);
- ``noscript``: a ``<noscript>`` asking to enable JavaScript;
- ``littleText``: scripts but little text (under 400 characters) and few links (under 3).

:class:`NeedsBrowserDecideRule` is the same test as a decide rule (for a FetchBrowser's
``should_process_rule`` or any other rule sequence); it answers NONE for a URI without an HTML
body. Pure functions over bytes: thread-safe.
"""

from __future__ import annotations

import re

from pydantic import Field

from crawler import CrawlURI
from crawler.decide import PredicatedDecideRule
from crawler.decide.rules import PredicatedParams

HEAD_BYTES = 256 * 1024
_STATE = re.compile(rb"__next_data__|__nuxt__|window\.__initial_state__")
_ROOT = re.compile(
    rb"<div[^>]*\bid\s*=\s*[\"']?(?:app|root|__next|__nuxt|svelte|main-app|application)"
    rb"[\"']?[^>]*>\s*</div>"
)
_NOSCRIPT = re.compile(rb"<noscript[^>]*>[^<]{0,400}(?:<[^/][^>]*>[^<]{0,200})*?(?:javascript|js)")
_SCRIPT = re.compile(rb"<script\b")
_LINK = re.compile(rb"<a\s[^>]*href")
_NOT_TEXT = re.compile(rb"<script\b.*?</script>|<style\b.*?</style>|<!--.*?-->|<[^>]*>", re.S)
_SPACE = re.compile(rb"\s+")


def script_built_reason(html: bytes, min_text_chars: int = 400, min_links: int = 3) -> str | None:
    """Why ``html`` (a page's bytes, decoded from any content-encoding) needs a browser."""
    head = html[:HEAD_BYTES].lower()
    state = _STATE.search(head)
    if state is not None:
        return "nuxtData" if b"nuxt" in state.group(0) else "nextData"
    if _ROOT.search(head):
        return "spaRoot"
    if _NOSCRIPT.search(head):
        return "noscript"
    if not _SCRIPT.search(head):
        return None
    if len(_LINK.findall(head)) >= min_links:
        return None
    text = _SPACE.sub(b" ", _NOT_TEXT.sub(b" ", head)).strip()
    return "littleText" if len(text) < min_text_chars else None


class NeedsBrowserParams(PredicatedParams):
    """Thresholds of the little-text test."""

    min_text_chars: int = Field(400, ge=0, description="less visible text than this looks empty")
    min_links: int = Field(3, ge=0, description="fewer links than this looks empty")
    max_body_bytes: int = Field(HEAD_BYTES, ge=1024, description="bytes of the page examined")


class NeedsBrowserDecideRule(PredicatedDecideRule[NeedsBrowserParams]):
    """``decision`` (ACCEPT) for an HTML page that looks script-built; NONE otherwise."""

    def evaluate(self, curi: CrawlURI) -> bool:
        rec = curi.recording
        if rec is None or curi.status < 200 or curi.status >= 300:
            return False
        if curi.mime_type not in ("text/html", "application/xhtml+xml"):
            return False
        p = self.params
        body = rec.decoded_body(curi.header("content-encoding"), p.max_body_bytes)
        return script_built_reason(body, p.min_text_chars, p.min_links) is not None
