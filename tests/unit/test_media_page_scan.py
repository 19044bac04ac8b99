"""player_markup's gated scan gives the answers of the plain scan on every page.

The reference below is the scan as it was before the gates (lower-case, five needle searches,
then hosts and markers); the pages are bench-web's filler with needles, gates, markers and
hosted embeds put at random offsets in random case, cut at the scan limit, with non-ASCII bytes.
"""

from __future__ import annotations

import importlib.util
import random
import re
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from processors.media.extractor_url_index import ExtractorUrlIndex
from processors.media.media_page_rule import SCAN_BYTES, player_markup

pytestmark = pytest.mark.timeout(60)

_NEEDLES = (b"video", b"audio", b"player", b".m3u8", b".mpd")
_MARKERS = (
    b"<video", b"<audio", b".m3u8", b".mpd", b"og:video", b"og:audio", b"twitter:player",
    b"videoobject", b"audioobject", b"jwplayer", b"data-setup", b"video-js", b"flowplayer",
)  # fmt: skip
_HOSTS = (b"brightcove", b"kaltura", b"wistia", b"vidyard", b"jwplatform")
_HOSTED = re.compile(
    rb"(?:brightcove|kaltura|wistia|vidyard|jwplatform)[\w./ \"'=-]{0,60}(?:player|embed)"
)


def reference_markup(html: bytes) -> str | None:
    """The scan before the gates: the answers the gated scan must give."""
    low = html.lower()
    if not any(needle in low for needle in _NEEDLES):
        return None
    if any(host in low for host in _HOSTS) and _HOSTED.search(low):
        return "hosted"
    return "markup" if any(marker in low for marker in _MARKERS) else None


# Pieces put into pages: every needle, marker and host, the gates alone (udio, yer, 3u8), near
# misses, and hosted embeds of both endings.
_PIECES = (
    *_NEEDLES, *_MARKERS, *_HOSTS,
    b"udio", b"yer", b"3u8", b"mpd", b"vide", b"audi", b"playe", b".m3u", b"m3u8", b"layer",
    b"studio", b"buyer", b"vid eo", b"au\xc3\xa9dio", b"embed", b"data-setup=\"{}\"",
    b"wistia_embed", b"brightcove player", b'kaltura.com/p/1/embedIframeJs', b"vidyard_player",
)  # fmt: skip


def _gen_web() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "bench" / "web" / "gen_web.py"
    spec = importlib.util.spec_from_file_location("gen_web_for_media_scan", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def filler() -> list[bytes]:
    gen_web = _gen_web()
    rng = random.Random(7)
    return [gen_web._filler(rng, size).encode() for size in (0, 40, 900, 5000, 30000, 80000)]


def _random_case(rng: random.Random, piece: bytes) -> bytes:
    return bytes(
        b ^ 0x20 if chr(b).isalpha() and b < 128 and rng.random() < 0.4 else b for b in piece
    )


def _page(rng: random.Random, base: bytes) -> bytes:
    page = bytearray(base)
    for _ in range(rng.choice((0, 1, 1, 2, 3, 6))):
        kind = rng.random()
        if kind < 0.75:
            piece = _random_case(rng, rng.choice(_PIECES))
        elif kind < 0.9:
            piece = bytes(rng.randrange(128, 256) for _ in range(rng.randrange(1, 8)))
        else:  # letters of the needles in any case: near misses and chance hits
            piece = _random_case(rng, bytes(rng.choice(b"videoaulyr.m3u8p<:") for _ in range(12)))
        at = rng.choice((0, len(page), rng.randrange(len(page) + 1)))
        page[at:at] = piece
    return bytes(page)


def test_gated_scan_answers_as_the_plain_scan_on_random_pages(filler: list[bytes]) -> None:
    rng = random.Random(28)
    answers: Counter[str | None] = Counter()
    for i in range(3000):
        page = _page(rng, filler[i % len(filler)])
        expected = reference_markup(page)
        assert player_markup(page) == expected, page[:200]
        answers[expected] += 1
    # The pages reach every answer, so the comparison tests all three paths.
    assert answers["markup"] > 100 and answers["hosted"] > 50 and answers[None] > 500


@pytest.mark.parametrize("piece", [*_NEEDLES, *_MARKERS, b"wistia player", b"udio", b"3u8"])
def test_pieces_at_the_edges_and_across_the_scan_limit(piece: bytes) -> None:
    rng = random.Random(piece)
    for variant in (piece, piece.upper(), _random_case(rng, piece)):
        for page in (variant, b"x" + variant, variant + b"\xff", b"\xe9" * 3 + variant):
            assert player_markup(page) == reference_markup(page), page
        # The page is cut where the scan stops (decoded_body's max_scan_bytes): a piece across
        # the cut is partly seen, one before it wholly.
        for cut_at in range(-len(variant) - 1, 2):
            page = b"a" * (SCAN_BYTES + cut_at) + variant + b"<p>tail</p>"
            seen = page[:SCAN_BYTES]
            assert player_markup(seen) == reference_markup(seen), cut_at


def test_empty_and_non_ascii_pages() -> None:
    for page in (b"", b"\x00", bytes(range(256)), bytes(range(256)) * 40, "Vidéo ÄUDIO".encode()):
        assert player_markup(page) == reference_markup(page), page[:40]


def test_hosts_asked_again_are_claimed_by_their_paths() -> None:
    index = ExtractorUrlIndex()
    # The keys of a host are remembered; what claims a URL is still its whole URL.
    for _ in range(2):
        assert index.claimed_by("https://www.youtube.com/about/") is None
        assert index.claimed_by("https://www.youtube.com/watch?v=dQw4w9WgXcQ") == "youtube"
        assert index.claimed_by("https://WWW.YouTube.com/watch?v=dQw4w9WgXcQ") == "youtube"
        assert index.claimed_by("https://h00001.web.test/p1.html") is None
        assert index.claimed_by("https://vimeo.com/76979871") == "vimeo"
