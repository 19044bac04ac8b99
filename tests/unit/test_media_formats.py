"""Media capture's pure parts: the format policy as a yt-dlp selector, the URLs a chosen
rendition needs (progressive, HLS, DASH fragments), live streams and endless manifests cut,
HLS media playlists read, and which URLs yt-dlp's site extractors claim."""

from __future__ import annotations

import pytest

from processors.media.extractor_url_index import ExtractorUrlIndex
from processors.media.format_policy import (
    FILE,
    HLS,
    MANIFEST,
    SEGMENT,
    format_selector,
    hls_segments,
    media_links,
)
from processors.media.media_page_rule import player_markup

pytestmark = pytest.mark.timeout(30)


def test_the_policy_becomes_a_yt_dlp_selector() -> None:
    best = format_selector("best", 720, 500)
    assert best.startswith("bv*[height<=?720][filesize<?500M]")
    assert "/b[height<=?720]" in best and best.endswith("/wv*+wa/w")
    assert format_selector("all", 720, 500) == "all"
    assert format_selector("bv*+ba/b", 720, 500) == "bv*+ba/b"
    assert "height" not in format_selector("best", 0, 0)


def _video(*downloads: dict[str, object], **extra: object) -> dict[str, object]:
    return {"id": "v", "requested_downloads": list(downloads), **extra}


def test_each_kind_of_rendition_lists_what_replay_needs() -> None:
    progressive = {"protocol": "https", "url": "https://cdn.example/v.mp4"}
    hls = {
        "protocol": "m3u8_native",
        "url": "https://cdn.example/v1/index.m3u8",
        "manifest_url": "https://cdn.example/master.m3u8",
    }
    dash = {
        "protocol": "http_dash_segments",
        "url": "https://cdn.example/d/manifest.mpd",
        "manifest_url": "https://cdn.example/d/manifest.mpd",
        "fragment_base_url": "https://cdn.example/d/",
        "fragments": [{"path": "init.mp4"}, {"path": "s1.m4s"}, {"url": "https://o.example/s2"}],
    }
    links, notes = media_links(_video(progressive, hls, {"requested_formats": [dash]}), 100)
    assert notes == []
    assert links == [
        ["https://cdn.example/v.mp4", FILE],
        ["https://cdn.example/master.m3u8", MANIFEST],
        ["https://cdn.example/v1/index.m3u8", HLS],
        ["https://cdn.example/d/manifest.mpd", MANIFEST],
        ["https://cdn.example/d/init.mp4", SEGMENT],
        ["https://cdn.example/d/s1.m4s", SEGMENT],
        ["https://o.example/s2", SEGMENT],
    ]


def test_live_streams_and_endless_manifests_are_cut() -> None:
    live = _video({"protocol": "m3u8", "url": "https://x/live.m3u8"}, is_live=True)
    assert media_links(live, 10) == ([], ["live"])
    many = {"protocol": "http_dash_segments", "fragment_base_url": "https://x/",
            "fragments": [{"path": f"s{n}"} for n in range(10_000)]}  # fmt: skip
    links, notes = media_links(_video(many), 5)
    assert [u for u, _ in links] == [f"https://x/s{n}" for n in range(5)]
    assert notes == ["tooManySegments"]
    playlist = {
        "_type": "playlist",
        "entries": [_video({"protocol": "https", "url": "https://x/a"})],
    }
    assert media_links(playlist, 5) == ([["https://x/a", FILE]], [])


def test_hls_media_playlists_give_their_segments() -> None:
    vod = (
        '#EXTM3U\n#EXT-X-MAP:URI="init.mp4"\n#EXT-X-KEY:METHOD=AES-128,URI="k.bin"\n'
        "#EXTINF:1,\na.m4s\n#EXTINF:1,\nhttps://o.example/b.m4s\n#EXT-X-ENDLIST\n"
    )
    assert hls_segments(vod, 10) == (["init.mp4", "k.bin", "a.m4s", "https://o.example/b.m4s"], [])
    assert hls_segments(vod, 1) == (["init.mp4", "k.bin", "a.m4s"], ["tooManySegments"])
    assert hls_segments("#EXTM3U\n#EXTINF:1,\nlive1.ts\n", 10) == ([], ["live"])
    master = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv0.m3u8\n"
    assert hls_segments(master, 10) == ([], [])
    assert hls_segments("<html>", 10) == ([], ["notHls"])


def test_site_extractors_claim_their_urls_only() -> None:
    index = ExtractorUrlIndex()
    assert index.claimed_by("https://www.youtube.com/watch?v=dQw4w9WgXcQ") == "youtube"
    assert index.claimed_by("https://vimeo.com/76979871") == "vimeo"
    assert index.claimed_by("https://www.dailymotion.com/video/x5kesuj") == "dailymotion"
    assert index.claimed_by("https://www.youtube.com/about/") is None
    assert index.claimed_by("https://www.example.com/watch?v=dQw4w9WgXcQ") is None
    assert index.claimed_by("http://127.0.0.1:8080/video.html") is None
    assert index.extractors > 1500


@pytest.mark.parametrize(
    ("html", "kind"),
    [
        (b"<p>Watch</p><VIDEO src='a.mp4'></VIDEO>", "markup"),
        (b'<script>jwplayer("p").setup({"file": "/m.m3u8"})</script>', "markup"),
        (b'<meta property="og:video" content="https://x/v.mp4">', "markup"),
        (b'<script type="application/ld+json">{"@type": "VideoObject"}</script>', "markup"),
        (b'<div class="wistia_embed"></div><script src="//fast.wistia.com/player.js">', "hosted"),
        (b"<p>A video about audio players, in words only.</p>", None),
        (b'<iframe src="https://www.youtube.com/embed/dQw4w9WgXcQ"></iframe>', None),
    ],
)
def test_pages_with_players_are_told_from_pages_about_them(html: bytes, kind: str | None) -> None:
    assert player_markup(html) == kind
