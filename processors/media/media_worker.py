"""The worker side of media capture: yt-dlp's ``extract_info(url, download=False)`` on a page.

Runs in a worker process of a :class:`~processors.workers.WorkerPool` (:func:`extract_media`
is its handler). yt-dlp gets no network of its own: every socket connect in the worker raises,
and yt-dlp's request director holds one handler, ``CrawlerRH``, which serves
the page itself from the body the crawler already fetched and asks the parent (the handler's
``ask``) for anything else - a manifest, a player's JSON config, an API answer - which the
crawler fetches through its scope, address guard, robots.txt and politeness, and records.
At most ``max_requests`` such fetches per page; more fail inside yt-dlp as HTTP errors.

The answer's header lists the media URLs to queue (:func:`media_links`) and notes
(``live``, ``tooManySegments``, ``tooManyRequests``, ``noMedia``); its body is the info JSON
(yt-dlp's sanitized info, fragment lists left out), for the WARC metadata record.
"""

from __future__ import annotations

import io
import json
import socket
from collections.abc import Callable
from typing import Any

from processors.media.format_policy import media_links

Ask = Callable[[dict[str, Any], bytes], tuple[dict[str, Any], bytes]]
_MAX_ENTRIES = 20


def _refuse_network(*_args: object, **_kwargs: object) -> Any:
    raise OSError("network use outside the crawler's fetch is refused in a media worker")


def _close_network() -> None:
    """No socket in this process reaches anything: yt-dlp's fetches go through the parent."""
    socket.socket.connect = _refuse_network  # type: ignore[method-assign]
    socket.socket.connect_ex = _refuse_network  # type: ignore[method-assign]
    socket.create_connection = _refuse_network
    socket.getaddrinfo = _refuse_network


class _Bridge:
    """What the request handler serves from and asks through, for one page."""

    def __init__(self, page_url: str, page: dict[str, Any], body: bytes, ask: Ask) -> None:
        self.page_url = page_url
        self.page = page
        self.body = body
        self.ask = ask
        self.requests = 0
        self.max_requests = int(page.get("max_requests", 20))
        self.refused = 0


def _handler_class() -> type:
    from yt_dlp.networking.common import RequestHandler, Response
    from yt_dlp.networking.exceptions import HTTPError, TransportError

    class CrawlerRH(RequestHandler):  # type: ignore[misc]
        """yt-dlp's only way out: the page from memory, the rest through the crawler."""

        _SUPPORTED_URL_SCHEMES = ("http", "https")
        _SUPPORTED_PROXY_SCHEMES = None
        _SUPPORTED_FEATURES = None
        RH_NAME = "crawler"
        bridge: _Bridge

        def _check_extensions(self, extensions: dict[str, Any]) -> None:
            for key in ("timeout", "cookiejar", "legacy_ssl", "keep_header_casing"):
                extensions.pop(key, None)
            super()._check_extensions(extensions)

        def _send(self, request: Any) -> Any:
            bridge = self.bridge
            url = request.url
            if url.split("#")[0] == bridge.page_url and request.method in ("GET", "HEAD"):
                status, headers, body = (
                    int(bridge.page["status"]),
                    dict(bridge.page["headers"]),
                    bridge.body if request.method == "GET" else b"",
                )
            else:
                if bridge.requests >= bridge.max_requests:
                    bridge.refused += 1
                    raise TransportError(f"more than {bridge.max_requests} requests for a page")
                bridge.requests += 1
                reply, body = bridge.ask(
                    {"fetch": url, "method": request.method}, request.data or b""
                )
                if reply.get("error"):
                    raise TransportError(str(reply["error"]))
                status, headers = int(reply["status"]), dict(reply["headers"])
                url = str(reply.get("url") or url)
            for name in ("content-encoding", "Content-Encoding", "transfer-encoding"):
                headers.pop(name, None)  # the crawler hands over decoded bodies
            response = Response(io.BytesIO(body), url, headers, status)
            if status >= 400:
                raise HTTPError(response)
            return response

    return CrawlerRH


_HANDLER: type | None = None
GENERIC_ONLY = ["generic", "html5"]
"""The extractors a page chosen for its markup is given: yt-dlp's generic page reader and its
HTML5 media reader. Not the site extractors' embed detection, which would import ~1,000
extractor modules (~15 s of CPU per worker): an embedded player's frame (an ``<iframe>`` of a
video site) is a link of the page, fetched and given to its site's extractor in turn."""
WARM_UP = (
    {
        "url": "http://warm-up.invalid/",
        "status": 200,
        "headers": [["Content-Type", "text/html"]],
        "format": "b",
        "max_segments": 1,
        "max_requests": 0,
        "timeout_s": 1,
        "extractors": GENERIC_ONLY,
    },
    b"<html><body><video src='a.mp4'></video></body></html>",
    120.0,
)
"""The first request of a new worker: yt-dlp's generic extractor on a page served from memory
loads yt-dlp (~1 s of CPU) once, not inside a page's time limit."""


def extract_media(header: dict[str, Any], body: bytes, ask: Ask) -> tuple[dict[str, Any], bytes]:
    """Handle one page: ``header`` holds ``url``, ``status``, ``headers`` (the page's, as a
    list of pairs), ``max_requests``, ``format`` (a yt-dlp format selector), ``max_segments``,
    ``timeout_s``, ``extractors`` (yt-dlp's ``allowed_extractors``, :data:`GENERIC_ONLY` by
    default); ``body`` is the page's decoded body."""
    global _HANDLER
    from yt_dlp import YoutubeDL
    from yt_dlp.networking.common import RequestDirector
    from yt_dlp.utils import DownloadError

    if _HANDLER is None:
        _close_network()
        _HANDLER = _handler_class()
    page_url = str(header["url"])
    bridge = _Bridge(page_url, header, body, ask)
    params = {
        "quiet": True,
        "no_warnings": True,
        "noprogress": True,
        "simulate": True,
        "skip_download": True,
        "format": str(header["format"]),
        "cachedir": False,
        "noplaylist": False,
        "playlistend": _MAX_ENTRIES,
        "extractor_retries": 0,
        "socket_timeout": float(header.get("timeout_s", 20)),
        "check_formats": False,
        "lazy_playlist": True,
        "ignore_no_formats_error": True,
        "allowed_extractors": list(header.get("extractors") or GENERIC_ONLY),
        "remote_components": [],
        "logger": _Silent(),
    }
    notes: list[str] = []
    with YoutubeDL(params) as ydl:
        director = RequestDirector(ydl.to_stderr)
        handler = _HANDLER(logger=ydl.to_stderr)
        handler.bridge = bridge
        director.add_handler(handler)
        ydl.__dict__["_request_director"] = director
        try:
            info = ydl.extract_info(page_url, download=False)
        except DownloadError as exc:
            message = str(exc).splitlines()[0][:300] if str(exc) else "DownloadError"
            if "Unsupported URL" in message or "No suitable extractor" in message:  # nothing found
                return {"notes": ["noMedia"], "links": [], "requests": bridge.requests}, b""
            return {"error": message, "requests": bridge.requests}, b""
        if info is None:
            return {"notes": ["noMedia"], "links": [], "requests": bridge.requests}, b""
        entries = info.get("entries")
        for video in entries[:_MAX_ENTRIES] if isinstance(entries, list) else [info]:
            formats = video.get("formats") if isinstance(video, dict) else None
            if formats:  # yt-dlp's own selection, as a download would make it
                video["requested_downloads"] = ydl._select_formats(formats, ydl.format_selector)
        info = ydl.sanitize_info(info)
    links, chosen_notes = media_links(info, int(header["max_segments"]))
    notes += chosen_notes
    if bridge.refused:
        notes.append("tooManyRequests")
    if not links and not notes:
        notes.append("noMedia")
    record = json.dumps(_without_fragments(info), default=str).encode()
    return {
        "links": links,
        "notes": notes,
        "extractor": str(info.get("extractor_key") or info.get("extractor") or ""),
        "requests": bridge.requests,
    }, record


def _without_fragments(info: Any) -> Any:
    """The info without fragment lists (a manifest may list a million) nor private keys."""
    if isinstance(info, dict):
        return {
            k: _without_fragments(v)
            for k, v in info.items()
            if k not in ("fragments", "http_headers") and not k.startswith("_")
        }
    if isinstance(info, list):
        return [_without_fragments(v) for v in info]
    return info


class _Silent:
    """A yt-dlp logger that says nothing (the worker's stderr goes nowhere anyway)."""

    def debug(self, msg: str) -> None:
        return None

    def info(self, msg: str) -> None:
        return None

    def warning(self, msg: str) -> None:
        return None

    def error(self, msg: str) -> None:
        return None
