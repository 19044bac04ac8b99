"""For tests of the politeness gap between two fetches from one host: a server of a chain of
pages that records when it began and finished answering each request, and a processor that
takes a set time (the slow extraction or write of a big page).

``TimingSite(pages)`` listens on 127.0.0.1 (any free port): ``/`` links to ``/p1``, ``/p1`` to
``/p2`` … up to ``/p<pages>``. For each request after the first, :meth:`TimingSite.gaps` gives
the time from the previous answer to the start of this request, server side: from when the
previous answer began to be written (``after_write=False``: never longer than the real gap the
crawler left, so the check that it is at least the delay cannot fail because this process was
slow to note the time) or from when its writing was over (``after_write=True``: never shorter,
for the check that it is not much longer). The server runs in the test's process, so a busy
machine can delay its notes by a scheduling slice or two. ``Sleeper``
(``support.politeness_site.Sleeper``, params ``sleep_s``) sleeps that long on each successful
HTML page. Use the site as a context manager: the server stops on exit.
"""

from __future__ import annotations

import itertools
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

from pydantic import Field

from crawler import CrawlURI, Params, Processor


class TimingSite:
    """See the module docstring."""

    def __init__(self, pages: int) -> None:
        self.pages = pages
        self.spans: list[tuple[float, float, float, str]] = []
        lock = threading.Lock()
        spans = self.spans

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                started = time.monotonic()
                path = self.path
                if path == "/" or (path[:2] == "/p" and path[2:].isdigit()):
                    n = int(path[2:] or 0)
                    link = f'<a href="/p{n + 1}">next</a>' if n < pages else ""
                    body = f"<html><body>page {n} {link}</body></html>".encode()
                    self.send_response(200)
                else:
                    body = b"<html><body>not found</body></html>"
                    self.send_response(404)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                writing = time.monotonic()
                self.end_headers()
                self.wfile.write(body)
                self.wfile.flush()
                written = time.monotonic()
                with lock:
                    spans.append((started, writing, written, self.path))

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def seed(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def paths(self) -> list[str]:
        """The paths requested, in the order their requests began."""
        return [span[-1] for span in sorted(self.spans)]

    def gaps(self, *, after_write: bool) -> list[float]:
        """Seconds from each answer (the start or the end of its writing) to the next request."""
        end = 2 if after_write else 1
        spans = sorted(self.spans)
        return [nxt[0] - prev[end] for prev, nxt in itertools.pairwise(spans)]

    def __enter__(self) -> TimingSite:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()


class SleeperParams(Params):
    sleep_s: float = Field(0.5, ge=0)


class Sleeper(Processor[SleeperParams]):
    """Takes ``sleep_s`` over each successful HTML page, as a slow extractor would."""

    def should_process(self, curi: CrawlURI) -> bool:
        return curi.status == 200 and curi.uri.startswith("http")

    def inner_process(self, curi: CrawlURI) -> None:
        time.sleep(self.params.sleep_s)


def order_sets(
    site: TimingSite, delay_s: float, processing_s: float, robots: str = "ignore"
) -> list[str]:
    """``--set`` overrides of the example order: the site as the only seed, one politeness
    delay of ``delay_s`` whatever the fetch took, robots.txt ignored by default (no
    prerequisite fetch; with ``robots="obey"`` /robots.txt, a 404, comes first), and a Sleeper
    of ``processing_s`` after the HTML extractor."""
    delay_ms = int(delay_s * 1000)
    return [
        f"seeds.urls=[{site.seed!r}]",
        "seeds.file=null",
        "toe_threads=2",
        "logging.console=false",
        f"robots.policy={robots}",
        "frontier.politeness.delay_factor=0",
        f"frontier.politeness.min_delay_ms={delay_ms}",
        f"frontier.politeness.max_delay_ms={delay_ms}",
        "chains.extract=[{name: extractor_html, class: processors.extract.ExtractorHTML},"
        " {name: slow, class: support.politeness_site.Sleeper,"
        f" params: {{sleep_s: {processing_s}}}}}]",
    ]
