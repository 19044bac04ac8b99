"""A local site with video, made at test time by Debian's ffmpeg (no network): a progressive
MP4, an HLS stream (two renditions, fMP4 segments), a DASH stream, a page whose player reads a
JSON setup naming the HLS manifest, and hostile pages (a live HLS playlist, a DASH manifest of a
million segments, a player config that is not JSON). Players are a small MSE script of the
site's own (no player library, no CDN). ``python -m media_site`` (from tests/media/) serves it."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FFMPEG = shutil.which("ffmpeg") or "/usr/bin/ffmpeg"
_X264 = ["-c:v", "libx264", "-profile:v", "baseline", "-level", "3.0", "-pix_fmt", "yuv420p",
         "-g", "5"]  # fmt: skip
GOOD_PAGES = ("mp4.html", "hls.html", "dash.html", "config.html")

PLAYER_JS = r"""
// Plays HLS (fMP4) and DASH (SegmentTemplate) through Media Source Extensions.
const CODEC = 'video/mp4; codecs="avc1.42c01e"';
async function text(url) { return (await fetch(url)).text(); }
async function bytes(url) { return new Uint8Array(await (await fetch(url)).arrayBuffer()); }
async function hlsUrls(master) {
  const lines = (await text(master)).split('\n');
  let best = null, bw = -1;
  for (let i = 0; i < lines.length; i++) {
    const m = lines[i].match(/BANDWIDTH=(\d+).*RESOLUTION=\d+x(\d+)/);
    if (m && +m[2] <= 720 && +m[1] > bw) { bw = +m[1]; best = lines[i + 1].trim(); }
  }
  const media = new URL(best, new URL(master, location.href)).href;
  const urls = [];
  for (const line of (await text(media)).split('\n')) {
    const map = line.match(/#EXT-X-MAP:URI="([^"]+)"/);
    if (map) urls.push(new URL(map[1], media).href);
    else if (line && !line.startsWith('#')) urls.push(new URL(line.trim(), media).href);
  }
  return urls;
}
async function dashUrls(mpd) {
  const doc = new DOMParser().parseFromString(await text(mpd), 'application/xml');
  const rep = doc.getElementsByTagName('Representation')[0];
  const tpl = rep.getElementsByTagName('SegmentTemplate')[0];
  const id = rep.getAttribute('id');
  const base = new URL(mpd, location.href);
  const total = parseFloat(doc.documentElement.getAttribute('mediaPresentationDuration').slice(2));
  const seg = tpl.getAttribute('duration') / tpl.getAttribute('timescale');
  const start = +tpl.getAttribute('startNumber');
  const name = (attr, n) => tpl.getAttribute(attr).replace('$RepresentationID$', id)
    .replace('$Number$', n);
  const urls = [new URL(name('initialization', 0), base).href];
  for (let n = start; n < start + Math.ceil(total / seg - 1e-6); n++) {
    urls.push(new URL(name('media', n), base).href);
  }
  return urls;
}
async function play(video, urls) {
  const ms = new MediaSource();
  video.src = URL.createObjectURL(ms);
  await new Promise(r => ms.addEventListener('sourceopen', r, {once: true}));
  const sb = ms.addSourceBuffer(CODEC);
  for (const u of urls) {
    sb.appendBuffer(await bytes(u));
    await new Promise(r => sb.addEventListener('updateend', r, {once: true}));
  }
  ms.endOfStream();
  video.muted = true;
  await video.play();
}
window.jwplayer = id => ({setup: cfg => {
  const v = document.createElement('video');
  document.getElementById(id).appendChild(v);
  hlsUrls(cfg.file).then(u => play(v, u));
}});
window.addEventListener('DOMContentLoaded', () => {
  const all = selector => document.querySelectorAll(selector);
  for (const v of all('video[data-hls]')) hlsUrls(v.dataset.hls).then(u => play(v, u));
  for (const v of all('video[data-dash]')) dashUrls(v.dataset.dash).then(u => play(v, u));
});
"""


def _page(title: str, body: str) -> str:
    return (
        f"<!doctype html><html><head><title>{title}</title>"
        f'<script src="/player.js"></script></head><body><h1>{title}</h1>{body}</body></html>'
    )


PAGES = {
    "index.html": _page(
        "media site",
        "".join(f'<a href="/{p}">{p}</a> ' for p in GOOD_PAGES)
        + '<a href="/plain.html">plain</a> <a href="/hostile/live.html">live</a> '
        '<a href="/hostile/million.html">million</a> <a href="/hostile/badjson.html">bad</a> '
        '<a href="/hostile/offsite.html">offsite</a>',
    ),
    "plain.html": _page("no media here", "<p>Only text.</p>"),
    "mp4.html": _page("mp4", '<video src="/media/clip.mp4" controls muted autoplay></video>'),
    "hls.html": _page(
        "hls",
        '<video data-hls="/media/hls/master.m3u8" controls>'
        '<source src="/media/hls/master.m3u8" type="application/x-mpegURL"></video>',
    ),
    "dash.html": _page(
        "dash",
        '<video data-dash="/media/dash/manifest.mpd" controls>'
        '<source src="/media/dash/manifest.mpd" type="application/dash+xml"></video>',
    ),
    "config.html": _page(
        "config",
        '<div id="player"></div><script>jwplayer("player").setup('
        '{"file": "/media/hls/master.m3u8", "title": "From a JSON setup", "width": 320});'
        "</script>",
    ),
    "hostile/live.html": _page(
        "live",
        '<video controls><source src="/hostile/live.m3u8" type="application/x-mpegURL"></video>',
    ),
    "hostile/million.html": _page(
        "million",
        '<video controls><source src="/hostile/million.mpd" type="application/dash+xml"></video>',
    ),
    "hostile/badjson.html": _page(
        "bad json",
        '<div id="player"></div><script type="application/ld+json">{"@type": "VideoObject", '
        '"contentUrl": </script><script>jwplayer("player").setup({"file": ,, });</script>',
    ),
}

LIVE_M3U8 = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-MEDIA-SEQUENCE:7\n" + "".join(
    f"#EXTINF:1.0,\nlive{n}.m4s\n" for n in range(7, 10)
)
MILLION_MPD = """<?xml version="1.0"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT500000S"
 minBufferTime="PT1S" profiles="urn:mpeg:dash:profile:isoff-live:2011"><Period>
<AdaptationSet contentType="video" mimeType="video/mp4"><Representation id="0"
 codecs="avc1.42c01e" bandwidth="50000" width="160" height="90">
<SegmentTemplate timescale="1000" duration="500" initialization="init.mp4" media="s$Number$.m4s"
 startNumber="1"/></Representation></AdaptationSet></Period></MPD>
"""


def make_media(root: Path) -> None:
    """Write the site's pages and media under ``root`` (~1 s of ffmpeg)."""
    for name, html in {**PAGES, "player.js": PLAYER_JS}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(html)
    (root / "hostile" / "live.m3u8").write_text(LIVE_M3U8)
    (root / "hostile" / "million.mpd").write_text(MILLION_MPD)
    media = root / "media"
    (media / "hls").mkdir(parents=True)
    (media / "dash").mkdir()
    run = [FFMPEG, "-v", "error", "-nostdin", "-f", "lavfi"]
    subprocess.run(
        [*run, "-i", "testsrc=size=160x90:rate=10", "-f", "lavfi", "-i",
         "sine=frequency=440:sample_rate=22050", "-t", "2", *_X264, "-c:a", "aac", "-b:a", "32k",
         "-movflags", "+faststart", str(media / "clip.mp4")],
        check=True, timeout=60,
    )  # fmt: skip
    subprocess.run(
        [*run, "-i", "testsrc=size=320x180:rate=10", "-t", "2", "-filter_complex",
         "[0:v]split=2[a][b];[b]scale=160:90[b2]", "-map", "[b2]", "-map", "[a]", *_X264,
         "-b:v:0", "60k", "-b:v:1", "150k", "-f", "hls", "-hls_time", "0.5",
         "-hls_playlist_type", "vod", "-hls_segment_type", "fmp4",
         "-master_pl_name", "master.m3u8", "-var_stream_map", "v:0 v:1",
         "-hls_segment_filename", str(media / "hls" / "v%v" / "seg%d.m4s"),
         str(media / "hls" / "v%v" / "index.m3u8")],
        check=True, timeout=60, cwd=media / "hls",
    )  # fmt: skip
    subprocess.run(
        [*run, "-i", "testsrc=size=160x90:rate=10", "-t", "2", *_X264, "-f", "dash",
         "-seg_duration", "0.5", "-use_template", "1", "-use_timeline", "0",
         "-init_seg_name", "init-$RepresentationID$.mp4",
         "-media_seg_name", "seg-$RepresentationID$-$Number$.m4s", "manifest.mpd"],
        check=True, timeout=60, cwd=media / "dash",
    )  # fmt: skip


class _Handler(SimpleHTTPRequestHandler):
    extensions_map = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".m3u8": "application/vnd.apple.mpegurl",
        ".mpd": "application/dash+xml",
        ".m4s": "video/iso.segment",
        ".mp4": "video/mp4",
        ".js": "text/javascript",
    }

    def log_message(self, format: str, *args: Any) -> None:
        return None


class MediaSite:
    """The site on 127.0.0.1 (a free port), its files in a temporary directory; a context
        manager. ``requests`` lists ``(path, Host, User-Agent)`` of every request, in order
    (thread-safe appends). ``hostile/offsite.html`` names its manifest on ``localhost``, a host
    outside a crawl seeded with ``base_url`` (127.0.0.1)."""

    def __init__(self) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="media-site-"))
        make_media(self._dir)
        root = str(self._dir)
        self.requests: list[tuple[str, str, str]] = []
        requests = self.requests

        class Handler(_Handler):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, directory=root, **kwargs)

            def send_head(self) -> Any:
                requests.append(
                    (self.path, self.headers.get("Host", ""), self.headers.get("User-Agent", ""))
                )
                return super().send_head()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        port = self._server.server_address[1]
        self.base_url = f"http://127.0.0.1:{port}/"
        (self._dir / "hostile" / "offsite.html").write_text(
            _page(
                "offsite",
                f'<video controls><source src="http://localhost:{port}/media/hls/master.m3u8" '
                'type="application/x-mpegURL"></video>',
            )
        )
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def files(self) -> list[str]:
        """The site's media files, as paths from its root."""
        return sorted(
            "/" + str(p.relative_to(self._dir)) for p in (self._dir / "media").rglob("*")
            if p.is_file()
        )  # fmt: skip

    def __enter__(self) -> MediaSite:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        shutil.rmtree(self._dir, ignore_errors=True)


if __name__ == "__main__":
    with MediaSite() as site:
        print(site.base_url, flush=True)
        threading.Event().wait()
