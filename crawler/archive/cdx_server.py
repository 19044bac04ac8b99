"""CdxServerIndex: lookups in an earlier collection through a CDX server over HTTP.

Asks ``<endpoint>?url=<URI>&matchType=exact&output=json`` — pywb's ``/<coll>/cdx`` API and
OutbackCDX answer it with one JSON object per line (``url``, ``timestamp``, ``mime``,
``digest``, ``filename``, ``offset``…); a Wayback-style server's JSON array of rows under a
header row is read too. The digest is compared here, not by a server-side filter, because
servers differ in filter syntax and in whether they keep the ``sha1:`` prefix.

A server that does not answer in ``timeout_s``, refuses the connection, or answers with an
error status or unreadable JSON degrades to "no dedup": the lookup says None, one
``dedup_cdx_server_down`` warning goes to alerts.log, and the server is not asked again for
``retry_after_s`` (so an outage costs one timeout, not one per fetch); then one thread asks
again while the others still skip, and the first answer logs ``dedup_cdx_server_up``. A fetch
never fails because of it. A 404 means "no captures" (some servers answer so).

Thread-safety: each thread keeps its own keep-alive connection (``threading.local``); the
outage state and counters change under a lock never held across I/O.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlencode, urlsplit

from crawler.archive.collection_index import Capture, capture_from_fields, digest_b32
from crawler.crawler_error import CrawlerError

_MAX_RESPONSE_BYTES = 16 * 1024 * 1024


class CdxServerError(CrawlerError):
    """The CDX server's answer cannot be used (status, body); the message says why."""


class CdxServerIndex:
    """An earlier collection behind a CDX server (see the module docstring)."""

    def __init__(
        self,
        endpoint: str,
        timeout_s: float = 5.0,
        retry_after_s: float = 60.0,
        logger: Any = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        parts = urlsplit(endpoint)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{endpoint!r} is not an http(s) URL of a CDX server")
        self.name = endpoint
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._path = parts.path or "/"
        self._query = parts.query
        self._timeout_s = timeout_s
        self._retry_after_s = retry_after_s
        self._logger = logger
        self._monotonic = monotonic
        self._local = threading.local()
        self._lock = threading.Lock()
        self._down_until = 0.0
        self._down = False
        self.failures = 0
        self.skipped = 0

    # ----------------------------------------------------------------- lookups
    def find(self, url: str, urlkey: str, digest_b32_value: str) -> Capture | None:
        """The latest non-revisit capture of ``url`` with that payload, or None."""
        if self._down:
            now = self._monotonic()
            with self._lock:
                if now < self._down_until:
                    self.skipped += 1
                    return None
                # This thread asks again; the others go on skipping until it knows.
                self._down_until = now + self._retry_after_s
        try:
            rows = self._ask(url)
        except (OSError, http.client.HTTPException, CdxServerError, ValueError) as exc:
            self._drop_connection()
            self._went_down(exc)
            return None
        if self._down:
            self._came_up()
        found = None
        for fields in rows:
            capture = capture_from_fields(fields, self.name)
            if capture is None or digest_b32(capture.digest) != digest_b32_value:
                continue
            if found is None or capture.timestamp >= found.timestamp:
                found = capture
        return found

    def _ask(self, url: str) -> list[dict[str, Any]]:
        params = urlencode({"url": url, "matchType": "exact", "output": "json"})
        target = f"{self._path}?{self._query + '&' if self._query else ''}{params}"
        conn = self._connection()
        conn.request("GET", target, headers={"Accept": "application/json"})
        resp = conn.getresponse()
        body = resp.read(_MAX_RESPONSE_BYTES + 1)
        if len(body) > _MAX_RESPONSE_BYTES:  # keep what is whole; drop the connection
            body = body[: body.rfind(b"\n") + 1]
            self._drop_connection()
        elif resp.will_close:
            self._drop_connection()
        if resp.status == 404:
            return []
        if resp.status != 200:
            raise CdxServerError(f"HTTP {resp.status} {resp.reason}")
        return list(_rows(body))

    def _connection(self) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is None:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            conn = cls(self._host, self._port, timeout=self._timeout_s)
            self._local.conn = conn
        return conn

    def _drop_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            conn.close()

    # ----------------------------------------------------------------- outages
    def _went_down(self, exc: BaseException) -> None:
        with self._lock:
            self.failures += 1
            first = not self._down
            self._down = True
            self._down_until = self._monotonic() + self._retry_after_s
        if first and self._logger is not None:
            self._logger.warning(
                "dedup_cdx_server_down",
                url=self.name,
                error=f"{type(exc).__name__}: {exc}",
                retry_in_s=self._retry_after_s,
                effect="fetches are written in full (no dedup against this collection)",
            )

    def _came_up(self) -> None:
        with self._lock:
            was_down, self._down = self._down, False
        if was_down and self._logger is not None:
            self._logger.info("dedup_cdx_server_up", url=self.name)

    def close(self) -> None:
        """Close this thread's connection (other threads' close with them). Never raises."""
        with contextlib.suppress(OSError):
            self._drop_connection()


def _rows(body: bytes) -> Iterator[dict[str, Any]]:
    """The entries of a CDX server's JSON answer (JSON lines, or rows under a header row)."""
    text = body.decode("utf-8", "replace").strip()
    if not text:
        return
    if text.startswith("["):
        table = json.loads(text)
        if not isinstance(table, list) or not table:
            return
        header = [str(name) for name in table[0]]
        for row in table[1:]:
            if isinstance(row, list):
                yield dict(zip(header, row, strict=False))
        return
    for line in text.splitlines():
        if line.strip():
            entry = json.loads(line)
            if not isinstance(entry, dict):
                raise CdxServerError(f"not a CDX JSON line: {line[:80]!r}")
            yield entry
