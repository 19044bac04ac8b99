"""Which pages go to yt-dlp: player markup in the page, or a URL a site extractor claims.

:func:`media_page_reason` names why a fetched page (2xx, HTML) is worth asking yt-dlp about,
or returns None, checking the cheap thing first:

- ``markup``: the first ``max_scan_bytes`` of the page hold ``<video``, ``<audio``, a
  manifest reference (``.m3u8``, ``.mpd``), an ``og:video``/``og:audio``/``twitter:player``
  meta, JSON-LD ``VideoObject``/``AudioObject`` or a known player's setup (JW Player, video.js
  ``data-setup``, Flowplayer, Brightcove, Kaltura, Wistia, an ``<iframe>`` of a video site);
- ``extractor:<name>``: one of yt-dlp's site extractors claims the URL
  (:class:`~processors.media.extractor_url_index.ExtractorUrlIndex`, ~5 µs a page).

:class:`MediaPageDecideRule` is the same test as a decide rule (for any rule sequence); it
answers NONE for a URI that is not such a page. Thread-safe.
"""

from __future__ import annotations

import re

from pydantic import Field

from crawler import CrawlURI
from crawler.decide import PredicatedDecideRule
from crawler.decide.rules import PredicatedParams
from processors.media.extractor_url_index import ExtractorUrlIndex

SCAN_BYTES = 512 * 1024
HTML_TYPES = ("text/html", "application/xhtml+xml")
_MARKUP = re.compile(
    rb"<video|<audio|\.m3u8|\.mpd\b|og:video|og:audio|twitter:player|videoobject|audioobject"
    rb"|jwplayer|data-setup|video-js|flowplayer|brightcove|kaltura|wistia"
    rb"|<iframe[^>]+(?:youtube|vimeo|dailymotion|twitch|soundcloud)",
    re.I,
)
_INDEX = ExtractorUrlIndex()


def media_page_reason(
    curi: CrawlURI,
    markup: bool = True,
    extractor_urls: bool = True,
    max_scan_bytes: int = SCAN_BYTES,
) -> str | None:
    """Why ``curi`` (a fetched page) may hold video or audio, or None (see the module)."""
    rec = curi.recording
    if rec is None or not 200 <= curi.status < 300 or curi.mime_type not in HTML_TYPES:
        return None
    if markup:
        body = rec.decoded_body(curi.header("content-encoding"), max_scan_bytes)
        if _MARKUP.search(body):
            return "markup"
    if extractor_urls:
        name = _INDEX.claimed_by(curi.uri)
        if name is not None:
            return f"extractor:{name}"
    return None


class MediaPageParams(PredicatedParams):
    """What :class:`MediaPageDecideRule` looks at."""

    markup: bool = Field(True, description="player markup in the page's first bytes")
    extractor_urls: bool = Field(True, description="URLs one of yt-dlp's site extractors claims")
    max_scan_bytes: int = Field(SCAN_BYTES, ge=1024, description="bytes of the page examined")


class MediaPageDecideRule(PredicatedDecideRule[MediaPageParams]):
    """``decision`` (ACCEPT) for a page that may hold video or audio; NONE otherwise."""

    def evaluate(self, curi: CrawlURI) -> bool:
        p = self.params
        return media_page_reason(curi, p.markup, p.extractor_urls, p.max_scan_bytes) is not None
