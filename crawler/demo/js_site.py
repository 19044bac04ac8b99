"""``JsSite``: a website built by JavaScript on 127.0.0.1, for browser-capture tests and benchmarks.

The start page ``/`` is an empty shell (``<div id="app"></div>``) whose script asks a JSON API
for the item links (``/api/items?page=1``), offers a "Load more" button (pages 2 and 3),
fills in more items as the reader scrolls (``/api/feed?offset=N``, infinite scroll, three
batches then the end), lazy images far down the page, images inserted by script, and a
stylesheet with ``@import`` and ``@font-face``. The 30 item pages ``/item/N.html`` exist
only as links the script writes: an HTTP-only crawl finds none of them. ``/private/`` is
disallowed by robots.txt (the script asks for ``/private/tracker.png`` anyway).
``/consent.html`` sets a cookie by script and then needs it: ``/api/gated`` and the
``/gated/N.html`` pages it links to answer 403 without it.
``/bad/*.html`` are hostile pages (never settles, pop-ups and dialogs, navigates away,
websocket, download, scrolls forever, hangs its renderer). ``/bench/N.html`` are small
script-built pages for the benchmark (each links to the next ``fanout``).

Run ``python -m crawler.demo.js_site`` to serve it alone. Thread-safe: ``hits`` may be read
while serving.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import parse_qs, urlsplit

ITEMS = 30
PAGE_SIZE = 5
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
ROBOTS = b"User-agent: *\nDisallow: /private/\n"

SHELL = """<!doctype html><html><head><title>JS shell</title>
<link rel="stylesheet" href="/css/main.css"></head>
<body><div id="app"></div><noscript>Please enable JavaScript.</noscript>
<script src="/js/app.js"></script></body></html>"""

APP_JS = """
const app = document.getElementById('app');
const list = document.createElement('ul'); app.appendChild(list);
function add(items) {
  for (const it of items) {
    const li = document.createElement('li');
    li.innerHTML = '<a href="' + it.href + '">' + it.title + '</a>';
    list.appendChild(li);
  }
}
let page = 1;
const more = document.createElement('button'); more.textContent = 'Load more';
more.onclick = () => fetch('/api/items?page=' + (++page)).then(r => r.json()).then(d => {
  add(d.items); if (!d.more) more.remove();
});
fetch('/api/items?page=1').then(r => r.json()).then(d => { add(d.items); app.appendChild(more); });
const pad = document.createElement('div'); pad.style.height = '3000px'; app.appendChild(pad);
const lazy = document.createElement('img'); lazy.loading = 'lazy'; lazy.src = '/img/lazy.png';
app.appendChild(lazy);
let offset = 0, loading = false;
const feed = document.createElement('div'); app.appendChild(feed);
window.addEventListener('scroll', () => {
  if (loading || offset < 0) return;
  if (window.innerHeight + window.scrollY < document.body.scrollHeight - 200) return;
  loading = true;
  fetch('/api/feed?offset=' + offset).then(r => r.json()).then(d => {
    add(d.items); offset = d.next; loading = false;
    const spacer = document.createElement('div'); spacer.style.height = '2000px';
    feed.appendChild(spacer);
  });
});
const inserted = document.createElement('img'); inserted.src = '/img/inserted.png';
app.appendChild(inserted);
new Image().src = '/img/beacon.png';
new Image().src = '/private/tracker.png';
document.body.classList.add('themed');
"""

MAIN_CSS = """@import url("/css/theme.css");
@font-face { font-family: Demo; src: url("/fonts/demo.woff2") format("woff2"); }
body { font-family: Demo, sans-serif; }
"""
THEME_CSS = ".themed { background: url('/img/theme-bg.png'); }\n"

ITEM = """<!doctype html><html><head><title>Item {n}</title></head><body>
<h1>Item {n}</h1><p>A plain page written on the server; it needs no script to read.</p>
<img src="/img/item-{n}.png" alt=""><p><a href="/">home</a></p></body></html>"""

TICK_DELAY_S = 0.3
"""How long ``/api/tick`` (the never-settling page's poll) takes to answer."""

BAD = {
    # the first poll goes out while the page is parsed, so one is in flight at the load event
    # even when a busy machine runs the page's first timer late
    "never-settles": "let i = 0; const tick = () => fetch('/api/tick?n=' + (i++ % 3)); "
    "tick(); setInterval(tick, 50);",
    "popup": "window.open('/item/1.html'); alert('hello'); confirm('sure?');",
    "navigate": "setTimeout(() => { location.href = '/item/2.html'; }, 50);",
    "websocket": "try { new WebSocket('ws://' + location.host + '/ws'); } catch (e) {}",
    "download": "const a = document.createElement('a'); a.href = '/bad/file.bin'; "
    "a.download = 'f.bin'; document.body.appendChild(a); a.click();",
    "endless": "let n = 0; document.getElementById('app').style.height = '3000px'; "
    "window.addEventListener('scroll', () => { const d = "
    "document.createElement('div'); d.style.height = '2000px'; d.textContent = 'more ' + (n++); "
    "document.body.appendChild(d); });",
    "hang": "setTimeout(() => { while (true) {} }, 10);",
}

BENCH = """<!doctype html><html><head><title>bench {n}</title></head><body><div id="app"></div>
<script>
const app = document.getElementById('app');
for (const k of {links}) {{ const a = document.createElement('a'); a.href = '/bench/' + k + '.html';
  a.textContent = 'page ' + k; app.appendChild(a); }}
const img = document.createElement('img'); img.src = '/img/bench-{n}.png'; app.appendChild(img);
</script></body></html>"""


CONSENT = """<!doctype html><html><head><title>consent</title></head><body><div id="app"></div>
<script>
document.cookie = 'consent=yes; path=/';
fetch('/api/gated').then(r => r.json()).then(d => {
  for (const href of d.links) { const a = document.createElement('a'); a.href = href;
    a.textContent = href; document.getElementById('app').appendChild(a); }
});
</script></body></html>"""
GATED_PAGES = 3


class JsSite:
    """The JavaScript test site on 127.0.0.1 (``port`` 0 = any free port). With ``validators``,
    every 200 carries an ``ETag`` of its body and a GET whose ``If-None-Match`` matches it gets
    a 304 (a recrawl's conditional request)."""

    def __init__(
        self, port: int = 0, bench_pages: int = 0, fanout: int = 3, validators: bool = False
    ) -> None:
        self.validators = validators
        self.bench_pages = bench_pages
        self.fanout = fanout
        self.hits: Counter[str] = Counter()
        self._lock = threading.Lock()
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                site._serve(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def url(self, target: str) -> str:
        return self.base + target

    def __enter__(self) -> JsSite:
        self._thread.start()
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _serve(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        path, query = parts.path, parse_qs(parts.query)
        with self._lock:
            self.hits[h.path] += 1
        status, ctype, body, extra = 200, "text/html; charset=utf-8", b"", {}
        if path == "/":
            body = SHELL.encode()
        elif path == "/robots.txt":
            ctype, body = "text/plain", ROBOTS
        elif path == "/js/app.js":
            ctype, body = "application/javascript", APP_JS.encode()
        elif path == "/css/main.css":
            ctype, body = "text/css", MAIN_CSS.encode()
        elif path == "/css/theme.css":
            ctype, body = "text/css", THEME_CSS.encode()
        elif path == "/fonts/demo.woff2":
            ctype, body = "font/woff2", b"wOF2" + bytes(60)
        elif path.startswith(("/img/", "/private/")) and path.endswith(".png"):
            ctype, body = "image/png", PNG
        elif path == "/api/items":
            n = int(query.get("page", ["1"])[0])
            ctype, body = "application/json", _items(n, (n - 1) * PAGE_SIZE, n < 3)
        elif path == "/api/feed":
            offset = int(query.get("offset", ["0"])[0])
            nxt = offset + PAGE_SIZE if offset + PAGE_SIZE < 15 else -1
            ctype, body = "application/json", _feed(offset, nxt)
        elif path in ("/consent.html", "/api/gated") or path.startswith("/gated/"):
            status, ctype, body = self._consent(path, h.headers.get("Cookie") or "")
        elif path == "/api/tick":
            # answered late, so the page's ticks overlap and a request is always in flight, even
            # when a busy machine delays the page's timer
            time.sleep(TICK_DELAY_S)
            ctype, body = "application/json", b"{}"
        elif path.startswith("/item/") and path.endswith(".html"):
            body = ITEM.format(n=path[6:-5]).encode()
        elif path.startswith("/bad/") and path.endswith(".html") and path[5:-5] in BAD:
            script = BAD[path[5:-5]]
            body = (
                f"<!doctype html><html><body><div id=app></div><script>{script}</script>".encode()
            )
        elif path == "/bad/file.bin":
            ctype, body = "application/octet-stream", bytes(1000)
            extra = {"Content-Disposition": "attachment; filename=f.bin"}
        elif path.startswith("/bench/") and path.endswith(".html") and self.bench_pages:
            n = int(path[7:-5])
            links = list(range(n * self.fanout + 1, n * self.fanout + self.fanout + 1))
            links = [k for k in links if k < self.bench_pages]
            body = BENCH.format(n=n, links=json.dumps(links)).encode()
        else:
            status, ctype, body = 404, "text/plain", b"not found"
        if self.validators and status == 200:
            etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
            extra = {**extra, "ETag": etag}
            if h.headers.get("If-None-Match") == etag:
                h.send_response(304)
                h.send_header("ETag", etag)
                h.end_headers()
                return
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body)))
        for k, v in extra.items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(body)

    @staticmethod
    def _consent(path: str, cookie: str) -> tuple[int, str, bytes]:
        """``/consent.html`` sets a cookie by script, then asks ``/api/gated`` for links to
        ``/gated/N.html``: both answer 403 to a request without that cookie."""
        if path == "/consent.html":
            return 200, "text/html; charset=utf-8", CONSENT.encode()
        if "consent=yes" not in cookie:
            return 403, "text/plain", b"consent first"
        if path == "/api/gated":
            links = [f"/gated/{k}.html" for k in range(1, GATED_PAGES + 1)]
            return 200, "application/json", json.dumps({"links": links}).encode()
        return 200, "text/html; charset=utf-8", b"<!doctype html><p>a page behind consent</p>"


def _items(page: int, start: int, more: bool) -> bytes:
    items = [
        {"title": f"Item {k}", "href": f"/item/{k}.html"}
        for k in range(start + 1, min(start + PAGE_SIZE, 15) + 1)
    ]
    return json.dumps({"page": page, "items": items, "more": more}).encode()


def _feed(offset: int, nxt: int) -> bytes:
    items = [
        {"title": f"Item {k}", "href": f"/item/{k}.html"} for k in range(16 + offset, 21 + offset)
    ]
    return json.dumps({"items": items, "next": nxt}).encode()


def item_uris(base: str) -> list[str]:
    """Every item page the site's scripts link to."""
    return [f"{base}/item/{k}.html" for k in range(1, ITEMS + 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve the JavaScript test site on 127.0.0.1")
    parser.add_argument("--port", type=int, default=8090)
    args = parser.parse_args()
    with JsSite(args.port) as site:
        print(f"serving {site.base}/", flush=True)
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    main()
