"""Which pages go to yt-dlp: player markup in the page, or a URL a site extractor claims.

:func:`media_page_reason` names why a fetched page (2xx, HTML) is worth asking yt-dlp about,
or returns None, checking the cheap thing first:

- ``markup``: the first ``max_scan_bytes`` of the page hold ``<video``, ``<audio``, a
  manifest reference (``.m3u8``, ``.mpd``), an ``og:video``/``og:audio``/``twitter:player``
  meta, JSON-LD ``VideoObject``/``AudioObject`` or a player's setup (JW Player, video.js
  ``data-setup``, Flowplayer);
- ``hosted``: a hosted player's embed (Brightcove, Kaltura, Wistia, Vidyard, JW Platform),
  which only its site's extractor reads (so yt-dlp is given all of them for this page);
- ``extractor:<name>``: one of yt-dlp's site extractors claims the URL
  (:class:`~processors.media.extractor_url_index.ExtractorUrlIndex`, ~5 µs a page).

The scan lower-cases the bytes and looks for ``video``, ``audio``, ``player``, ``.m3u8`` and
``.mpd`` before the markers, all substring searches. Most pages hold none, so it first looks for
a gate of each needle (a substring of it that starts with a byte rare in HTML: ``video``,
``udio``, ``yer``, ``.m3u8``, ``.mpd``) with a literal-prefix regex, whose tight loop over the
page for that first byte takes less CPU than ``in``; a page that holds no gate holds no needle
and is done after five such passes. A page holding a gate takes the full test, so the answer is the
same for every page (~0.6x the time of five plain ``in`` searches on the pages of bench-web). An
``<iframe>`` of a video site is not a reason: the frame's URL is a link of the page, fetched and
then claimed by its site's extractor.

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
# Every marker holds one of these needles: most pages hold none, and a substring search is far
# cheaper than a regex of alternatives (which tries each alternative at every byte: ~4 ms for
# 90 KB). Markers are substrings too, so a page costs a few searches, never a regex.
_NEEDLES = (b"video", b"audio", b"player", b".m3u8", b".mpd")
_MARKERS = (
    b"<video", b"<audio", b".m3u8", b".mpd", b"og:video", b"og:audio", b"twitter:player",
    b"videoobject", b"audioobject", b"jwplayer", b"data-setup", b"video-js", b"flowplayer",
)  # fmt: skip
# A page holds a needle only if it holds that needle's gate (a substring of it). A compiled
# literal pattern scans a page for its first byte in a tight loop, faster than ``in`` (which
# weighs every byte of the needle): the gates start with bytes rare in HTML. A gate that is a
# whole needle (True) needs no second look.
_GATES = tuple(
    (re.compile(re.escape(gate)).search, gate in _NEEDLES)
    for gate in (b"video", b"udio", b"yer", b".m3u8", b".mpd")
)
_HOSTS = (b"brightcove", b"kaltura", b"wistia", b"vidyard", b"jwplatform")
_HOSTED = re.compile(
    rb"(?:brightcove|kaltura|wistia|vidyard|jwplatform)[\w./ \"'=-]{0,60}(?:player|embed)"
)

_INDEX = ExtractorUrlIndex()


def player_markup(html: bytes) -> str | None:
    """``markup`` if ``html`` (decoded bytes) holds player markup yt-dlp's generic reader
    understands, ``hosted`` for a hosted player's embed (read by its site's extractor), else
    None (see the module docstring)."""
    low = html.lower()
    for gate, whole in _GATES:
        if gate(low) is not None:
            if not whole and not any(needle in low for needle in _NEEDLES):
                return None
            break
    else:
        return None
    if any(host in low for host in _HOSTS) and _HOSTED.search(low):
        return "hosted"
    return "markup" if any(marker in low for marker in _MARKERS) else None


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
        kind = player_markup(body)
        if kind is not None:
            return kind
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
