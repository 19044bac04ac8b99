"""A local site for the recrawl tests that answers with real validators.

``ValidatorSite(table)`` serves ``table[path] = (status, headers, body)`` on 127.0.0.1 (any free
port); every 200 carries an ``ETag`` (a hash of its body) and a ``Last-Modified`` (fixed, or
the time the page was last set with :meth:`set`), and a GET whose ``If-None-Match`` matches
(or, without it, whose ``If-Modified-Since`` is not older) gets a ``304 Not Modified`` with the
validators and no Content-Type, as many servers answer. ``validators=False`` sends none (every
fetch is then a full 200). A path not in the table is a 404. ``log`` lists (path, status) of
every answer. Thread-safe (one lock); a context manager.
"""

from __future__ import annotations

import hashlib
import threading
import time
from email.utils import formatdate, parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

Answer = tuple[int, dict[str, str], bytes]
_FIXED_S = 1_700_000_000.0


class ValidatorSite:
    """See the module docstring."""

    def __init__(self, table: dict[str, Answer], validators: bool = True) -> None:
        self.validators = validators
        self.lock = threading.Lock()
        self.log: list[tuple[str, int]] = []
        self._pages: dict[str, tuple[Answer, float]] = {p: (a, _FIXED_S) for p, a in table.items()}
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                site._answer(self)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def set(self, path: str, answer: Answer | None) -> None:
        """Serve ``answer`` at ``path`` from now on (None: a 404), modified now."""
        with self.lock:
            if answer is None:
                self._pages.pop(path, None)
            else:
                self._pages[path] = (answer, time.time())

    def statuses(self, path: str) -> list[int]:
        """The statuses ``path`` was answered with, in order."""
        with self.lock:
            return [status for p, status in self.log if p == path]

    def _answer(self, h: BaseHTTPRequestHandler) -> None:
        with self.lock:
            found = self._pages.get(h.path)
        if found is None:
            status, headers, body = 404, {"Content-Type": "text/plain"}, b"not found"
            modified_s = _FIXED_S
        else:
            (status, headers, body), modified_s = found
        extra: dict[str, str] = {}
        if self.validators and status == 200:
            etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
            extra = {"ETag": etag, "Last-Modified": formatdate(modified_s, usegmt=True)}
            if _matches(h, etag, modified_s):
                status, headers, body = 304, {}, b""
        with self.lock:
            self.log.append((h.path, status))
        h.send_response(status)
        for name, value in {**headers, **extra}.items():
            h.send_header(name, value)
        if status != 304:
            h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    def __enter__(self) -> ValidatorSite:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()


def _matches(h: BaseHTTPRequestHandler, etag: str, modified_s: float) -> bool:
    if_none_match = h.headers.get("If-None-Match")
    if if_none_match is not None:
        return etag in {tag.strip() for tag in if_none_match.split(",")}
    since = h.headers.get("If-Modified-Since")
    if since is None:
        return False
    try:
        return modified_s <= parsedate_to_datetime(since).timestamp()
    except (TypeError, ValueError):
        return False
