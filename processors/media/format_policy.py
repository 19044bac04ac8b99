"""FormatPolicy: which renditions of a video to capture, and the URLs that capture them.

:func:`format_selector` turns the order's policy into a yt-dlp format selector, so yt-dlp's own
ranking picks the rendition: ``best`` (the default) takes one rendition no taller than
``max_height`` and no larger than ``max_size_mb`` where the size is known (video and audio
merged, or one file holding both; if none fits, the smallest); ``all`` keeps every format; any
other text is passed to yt-dlp as a selector (``bv*+ba/b``).

:func:`media_links` reads yt-dlp's (sanitized) info for the chosen formats and lists what the
crawler must fetch, each with its link context:

* ``media/file``: a progressive file (``http``/``https`` protocol);
* ``media/manifest``: an HLS master playlist or a DASH manifest (so replay finds it);
* ``media/hls``: an HLS media playlist; once fetched, its segments are listed by
  :func:`hls_segments` (its fetch is where the segment list is);
* ``media/segment``: a DASH fragment (initialization first).

A live stream (``is_live``, ``is_upcoming``) is endless: nothing of it is listed, note ``live``.
A rendition of more than ``max_segments`` fragments keeps the first ``max_segments``, note
``tooManySegments``. Pure functions: thread-safe.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urljoin

FILE, MANIFEST, HLS, SEGMENT = "media/file", "media/manifest", "media/hls", "media/segment"
_LIVE = ("is_live", "is_upcoming", "post_live")
_MAX_ENTRIES = 20
_NOT_FORMAT_KEYS = ("requested_downloads", "requested_formats", "formats", "entries")
_URI_ATTR = re.compile(r'URI="([^"]+)"')


def format_selector(policy: str, max_height: int, max_size_mb: int) -> str:
    """The yt-dlp format selector of the policy (see the module docstring)."""
    if policy == "all":
        return "all"
    if policy != "best":
        return policy
    size = f"[filesize<?{max_size_mb}M][filesize_approx<?{max_size_mb}M]" if max_size_mb else ""
    fits = f"[height<=?{max_height}]{size}" if max_height else size
    return f"bv*{fits}+ba{size}/b{fits}/wv*+wa/w"


def _chosen_formats(video: dict[str, Any]) -> list[dict[str, Any]]:
    formats: list[dict[str, Any]] = []
    # yt-dlp drops from each requested download the keys equal to the video's own (which hold
    # the last format's values): put them back.
    base = {k: v for k, v in video.items() if k not in _NOT_FORMAT_KEYS}
    for download in video.get("requested_downloads") or []:
        if not isinstance(download, dict):
            continue
        merged = download.get("requested_formats")
        if merged:
            formats.extend(f for f in merged if isinstance(f, dict))
        else:
            formats.append({**base, **download})
    if not formats and video.get("url"):
        formats.append(video)
    return formats


def _format_links(fmt: dict[str, Any], max_segments: int) -> tuple[list[list[str]], bool]:
    """The URLs of one format, and whether its fragments were cut at ``max_segments``."""
    protocol = str(fmt.get("protocol") or "")
    url = fmt.get("url")
    manifest = fmt.get("manifest_url")
    links: list[list[str]] = []
    if isinstance(manifest, str) and manifest:
        links.append([manifest, MANIFEST])
    if protocol.startswith("m3u8"):
        if isinstance(url, str) and url and url != manifest:
            links.append([url, HLS])
        elif isinstance(url, str) and url:
            links[-1][1] = HLS  # a media playlist that is its own manifest
        return links, False
    fragments = fmt.get("fragments")
    if isinstance(fragments, list) and fragments:
        base = str(fmt.get("fragment_base_url") or url or manifest or "")
        cut = len(fragments) > max_segments
        for fragment in fragments[:max_segments]:
            if not isinstance(fragment, dict):
                continue
            target = fragment.get("url") or (
                urljoin(base, fragment["path"]) if fragment.get("path") else None
            )
            if isinstance(target, str):
                links.append([target, SEGMENT])
        return links, cut
    if isinstance(url, str) and url and url != manifest:
        links.append([url, FILE])
    return links, False


def media_links(info: dict[str, Any], max_segments: int) -> tuple[list[list[str]], list[str]]:
    """``([url, context], …)`` to fetch for the chosen formats of ``info``, and notes."""
    videos = [info]
    if info.get("_type") == "playlist" or isinstance(info.get("entries"), list):
        videos = [e for e in (info.get("entries") or [])[:_MAX_ENTRIES] if isinstance(e, dict)]
    links: list[list[str]] = []
    notes: list[str] = []
    seen: set[str] = set()
    for video in videos:
        if video.get("is_live") or video.get("live_status") in _LIVE:
            if "live" not in notes:
                notes.append("live")
            continue
        for fmt in _chosen_formats(video):
            found, cut = _format_links(fmt, max_segments)
            if cut and "tooManySegments" not in notes:
                notes.append("tooManySegments")
            for url, context in found:
                if url not in seen:
                    seen.add(url)
                    links.append([url, context])
    return links, notes


def hls_segments(playlist: str, max_segments: int) -> tuple[list[str], list[str]]:
    """The segment URIs (as written) of an HLS media playlist, with its init section
    (``EXT-X-MAP``) and keys first, and notes: ``live`` without ``#EXT-X-ENDLIST`` (nothing
    listed: it never ends), ``tooManySegments`` past ``max_segments``, ``notHls`` when it is
    not a playlist at all. A master playlist's variants are not followed."""
    lines = [line.strip() for line in playlist.splitlines()]
    if not lines or not lines[0].startswith("#EXTM3U"):
        return [], ["notHls"]
    if not any(line.startswith("#EXT-X-ENDLIST") for line in lines):
        if any(line.startswith("#EXT-X-STREAM-INF") for line in lines):
            return [], []
        return [], ["live"]
    uris: list[str] = []
    segments = 0
    for line in lines:
        if not line:
            continue
        if line.startswith("#"):
            if line.startswith(("#EXT-X-MAP:", "#EXT-X-KEY:")):
                uris.extend(u for u in _URI_ATTR.findall(line) if not u.startswith("data:"))
            continue
        if segments >= max_segments:
            return uris, ["tooManySegments"]
        segments += 1
        uris.append(line)
    return uris, []
