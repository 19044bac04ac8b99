"""ExtractorMedia: the video and audio of pages, found by yt-dlp and queued for FetchHTTP.

For a fetched page (2xx HTML, not a revisit) that :func:`media_page_reason` picks (player
markup, or a URL one of yt-dlp's site extractors claims), runs yt-dlp's
``extract_info(url, download=False)`` in a worker process (:class:`~processors.workers.
WorkerPool`, ``max_workers`` started on first use, killed past ``timeout_s``). yt-dlp reads the
page from the body already fetched; anything else it asks for (a manifest, a player config) is
fetched by the crawler (:class:`~processors.browser.subresource_fetcher.SubresourceFetcher`:
scope, address guard, robots.txt, the server gate), recorded in the WARC, logged in crawl.log
(annotated ``media``) and marked seen; at most ``max_requests`` per page. yt-dlp itself never
connects anywhere (see :mod:`processors.media.media_worker`).

The format policy (:mod:`processors.media.format_policy`) chooses renditions; their URLs become
E outlinks of the page (contexts ``media/file``, ``media/manifest``, ``media/hls``,
``media/segment``, up to ``max_outlinks`` links per URI), so FetchHTTP fetches them through the
frontier: politeness, dedup, WARC and crawl.log apply. An HLS media playlist queued so
(context ``media/hls``) is read here again once fetched, its segments (``EXT-X-MAP`` init
and keys first) becoming E outlinks, at most ``max_segments``; one yt-dlp had fetched already
(so the frontier never fetches it) gives its segments to the page. The info JSON (fragment lists
left out) goes into a ``metadata`` record concurrent to the page's response
(``WARC-Target-URI: youtube-dl:<page>``, ``application/vnd.youtube-dl_formats+json``, as
Heritrix's ExtractorYoutubeDL writes it), through ``curi.data[EXTRA_METADATA]``.

Annotations on the page: ``media:<n>`` (links queued), ``mediaPage:<reason>``, and for trouble
``mediaNone`` (yt-dlp found nothing), ``mediaTimeout`` (worker killed), ``mediaError`` (yt-dlp
gave up; the worker died, past ``max_memory_mb``, or sent more than ``max_info_bytes``),
``mediaLive`` (a live stream: nothing queued), ``mediaTooManySegments`` (cut at
``max_segments``), ``mediaTooManyRequests``. The status stays the server's.

Thread-safety: one instance serves all threads; the worker pool and the fetcher are
thread-safe, per-page state lives on the stack and the CrawlURI. Heritrix counterpart:
``ExtractorYoutubeDL`` (brozzler's youtube-dl step).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any

from pydantic import Field

from crawler import CrawlURI, Hop, Params, Processor, ProcessorContext
from crawler.decide import DecideResult
from processors.browser.subresource_fetcher import SubresourceFetcher
from processors.extract.link_resolver import LinkResolver
from processors.extract.outlinks import RawLink, add_links
from processors.fetch.user_agent import user_agent
from processors.media.format_policy import HLS, SEGMENT, format_selector, hls_segments
from processors.media.media_page_rule import SCAN_BYTES, media_page_reason
from processors.media.media_worker import GENERIC_ONLY, WARM_UP
from processors.workers import WorkerPool
from processors.write.warc_records import EXTRA_METADATA

MEDIA_NOTE = "media"
PAGE_NOTE = "mediaPage"
INFO_TYPE = "application/vnd.youtube-dl_formats+json"
_HANDLER = "processors.media.media_worker:extract_media"
_NOTES = {
    "live": "mediaLive",
    "tooManySegments": "mediaTooManySegments",
    "tooManyRequests": "mediaTooManyRequests",
    "noMedia": "mediaNone",
}
_MAX_PLAYLIST_BYTES = 16 * 1024 * 1024


class ExtractorMediaParams(Params):
    """Parameters of :class:`ExtractorMedia`."""

    formats: str = Field(
        "best",
        description="best: one rendition within max_height/max_size_mb; all: every format; "
        "anything else is a yt-dlp format selector",
    )
    max_height: int = Field(720, ge=0, description="tallest rendition under `best` (0: any)")
    max_size_mb: int = Field(
        500, ge=0, description="largest rendition under `best`, where its size is known (0: any)"
    )
    markup: bool = Field(True, description="pages with player markup go to yt-dlp")
    extractor_urls: bool = Field(True, description="pages one of yt-dlp's extractors claims do")
    max_scan_bytes: int = Field(SCAN_BYTES, ge=1024, description="page bytes scanned for markup")
    max_page_bytes: int = Field(
        10_000_000, gt=0, description="decoded page bytes handed to yt-dlp at most"
    )
    max_segments: int = Field(
        5000, ge=1, description="segments queued per rendition; past it mediaTooManySegments"
    )
    max_requests: int = Field(
        20, ge=0, description="fetches yt-dlp may ask for per page (manifests, configs)"
    )
    max_outlinks: int = Field(
        20000, ge=0, description="links kept per URI; extra ones are counted as dol:<n>"
    )
    timeout_s: float = Field(
        30.0, gt=0, description="longest extraction of one page; past it mediaTimeout"
    )
    max_workers: int = Field(2, ge=1, description="worker processes running yt-dlp at once")
    max_memory_mb: int = Field(
        1024, ge=0, description="address-space cap of a worker (past it mediaError); 0 = none"
    )
    max_info_bytes: int = Field(
        32 * 1024 * 1024, gt=0, description="largest answer of a worker (info JSON and links)"
    )
    http_processor: str = Field(
        "fetch_http", description="the FetchHTTP whose client fetches what yt-dlp asks for"
    )
    write_info: bool = Field(
        True, description="write the info JSON as a WARC metadata record of the page"
    )


class ExtractorMedia(Processor[ExtractorMediaParams]):
    """Finds a page's video and audio with yt-dlp (see the module docstring)."""

    _pool: WorkerPool | None = None
    _fetcher: SubresourceFetcher | None = None

    def start(self, ctx: ProcessorContext) -> None:
        super().start(ctx)
        p = self.params
        find = ctx.find_processor
        http = find(p.http_processor) if find is not None else None
        if http is None and find is not None:
            raise RuntimeError(
                f"{self.name}: no processor named {p.http_processor!r} to fetch for yt-dlp "
                "(params.http_processor)"
            )
        if http is not None:  # else (a bare test context) yt-dlp reads the page alone
            agent = user_agent(ctx.order)
            self._fetcher = SubresourceFetcher(ctx, http, agent, note=MEDIA_NOTE)
        self._pool = WorkerPool(_HANDLER, p.max_workers, p.max_memory_mb, p.max_info_bytes, WARM_UP)
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()

    def stop(self) -> None:
        pool = self._pool
        if pool is not None:
            pool.close()

    def should_process(self, curi: CrawlURI) -> bool:
        if not 200 <= curi.status < 300 or curi.recording is None or curi.revisit is not None:
            return False
        if curi.via_context == HLS:
            return True
        p = self.params
        reason = media_page_reason(curi, p.markup, p.extractor_urls, p.max_scan_bytes)
        if reason is None:
            return False
        curi.annotate(f"{PAGE_NOTE}:{reason}")
        return True

    def inner_process(self, curi: CrawlURI) -> None:
        if curi.via_context == HLS:
            self._list_segments(curi)
        else:
            self._extract(curi)

    # ----------------------------------------------------------------- pages
    def _extract(self, curi: CrawlURI) -> None:
        pool, fetcher = self._pool, self._fetcher
        if pool is None:
            raise RuntimeError(f"processor {self.name!r} used before start()")
        p = self.params
        body = curi.recording.decoded_body(curi.header("content-encoding"), p.max_page_bytes)
        header: dict[str, Any] = {
            "url": curi.uri,
            "status": curi.http_status or curi.status,
            "headers": [list(h) for h in curi.response_headers],
            "format": format_selector(p.formats, p.max_height, p.max_size_mb),
            "max_segments": p.max_segments,
            "max_requests": p.max_requests,
            "timeout_s": p.timeout_s,
            # a page a site extractor claims, or a hosted player's, may need any extractor
            "extractors": GENERIC_ONLY
            if f"{PAGE_NOTE}:markup" in curi.annotations
            else ["default"],
        }
        deadline = time.monotonic() + p.timeout_s
        held: dict[str, bytes] = {}
        asker = self._asker(curi, fetcher, deadline, held)
        answer = pool.call(header, body, p.timeout_s, asker)
        if answer.error is not None:
            note = "mediaTimeout" if answer.error == "timeout" else "mediaError"
            curi.annotate(note)
            self._count(note)
            return
        head = answer.header
        for note in head.get("notes") or []:
            if note in _NOTES:
                curi.annotate(_NOTES[note])
                self._count(_NOTES[note])
        raw: list[RawLink] = []
        for url, context in head.get("links") or []:
            raw.append((str(url), Hop.EMBED, str(context)))
            playlist = held.get(str(url)) if context == HLS else None
            if playlist is not None:
                # fetched for yt-dlp already, so never by the frontier: its segments are here
                raw.extend(self._segments(curi, str(url), playlist))
        added = add_links(curi, raw, LinkResolver(curi.uri), p.max_outlinks) if raw else 0
        if added:
            curi.annotate(f"{MEDIA_NOTE}:{added}")
        self._count("pages")
        self._count("links", added)
        if p.write_info and answer.body:
            records = curi.data.setdefault(EXTRA_METADATA, [])
            text = answer.body.decode("utf-8", "replace")
            records.append([f"youtube-dl:{curi.uri}", INFO_TYPE, text])

    def _asker(
        self,
        page: CrawlURI,
        fetcher: SubresourceFetcher | None,
        deadline: float,
        held: dict[str, bytes],
    ) -> Any:
        """Answers the worker's fetch calls: scope first, then the crawler's own fetch. HLS
        playlists fetched so are kept in ``held`` (URL -> body) for their segments."""
        scope = self.context.scope

        def ask(call: dict[str, Any], _body: bytes) -> tuple[dict[str, Any], bytes]:
            url = call.get("fetch")
            if not isinstance(url, str) or call.get("method", "GET") not in ("GET", "HEAD"):
                return {"error": "only GET and HEAD are fetched for yt-dlp"}, b""
            if fetcher is None:
                return {"error": "no fetcher (params.http_processor)"}, b""
            child = page.create_child(url, Hop.EMBED, MEDIA_NOTE)
            if scope.decide(child) is not DecideResult.ACCEPT:
                self._count("out_of_scope")
                return {"error": f"out of the crawl's scope: {url}"}, b""
            self._count("fetches")
            try:
                served = fetcher.fetch(page, url, deadline)
            except Exception as exc:  # noqa: BLE001 - yt-dlp gets an error; the page goes on
                return {"error": f"{type(exc).__name__} fetching {url}"}, b""
            if served is None:
                return {"error": f"not fetched: {url}"}, b""
            if served.body.startswith(b"#EXTM3U") and len(served.body) <= _MAX_PLAYLIST_BYTES:
                held[url] = served.body
            return {"status": served.status, "headers": served.headers, "url": url}, served.body

        return ask

    # ----------------------------------------------------------------- HLS
    def _segments(self, curi: CrawlURI, playlist_uri: str, data: bytes) -> list[RawLink]:
        """The segments of an HLS media playlist as E links (absolute); its notes annotate
        ``curi``."""
        uris, notes = hls_segments(data.decode("utf-8", "replace"), self.params.max_segments)
        for note in notes:
            name = _NOTES.get(note, "mediaError")
            if name not in curi.annotations:
                curi.annotate(name)
            self._count(name)
        resolver = LinkResolver(playlist_uri)
        resolved = (resolver.resolve(uri) for uri in uris)
        return [(uri, Hop.EMBED, SEGMENT) for uri in resolved if uri is not None]

    def _list_segments(self, curi: CrawlURI) -> None:
        p = self.params
        data = curi.recording.decoded_body(curi.header("content-encoding"), _MAX_PLAYLIST_BYTES)
        raw = self._segments(curi, curi.uri, data)
        added = add_links(curi, raw, LinkResolver(curi.uri), p.max_outlinks) if raw else 0
        if added:
            curi.annotate(f"{MEDIA_NOTE}:{added}")
        self._count("links", added)

    def _count(self, name: str, n: int = 1) -> None:
        with self._lock:
            self._counts[name] += n

    def report(self) -> list[str]:
        lines = super().report()
        pool = self._pool
        if pool is not None:
            c = self._counts
            lines.append(
                f"  {c['pages']} pages extracted, {c['links']} media links queued, "
                f"{c['fetches']} fetches for yt-dlp ({c['out_of_scope']} out of scope)"
            )
            trouble = ", ".join(f"{k} {v}" for k, v in sorted(c.items()) if k.startswith("media"))
            if trouble:
                lines.append(f"  {trouble}")
            lines.append(f"  {pool.started} media workers started, {pool.killed} killed")
        return lines
