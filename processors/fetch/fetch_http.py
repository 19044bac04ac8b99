"""FetchHTTP: GET an http(s) URI and record the exchange byte for byte; the only httpx user.

One ``httpx.Client`` (opened in :meth:`FetchHTTP.start`, closed in :meth:`FetchHTTP.stop`) with a
keep-alive pool sized for the ToeThreads serves every thread; httpx's pool is thread-safe and
the processor keeps no per-URI state on ``self``. Redirects are not followed (ExtractorHTTP turns
``Location`` into an ``R`` outlink). The body is read with ``iter_raw()`` — never
``iter_bytes()``, which inflates nested gzip in one unbounded call — so the Recording holds the
entity exactly as received (content-encoding kept, transfer-encoding removed; the response head
renames ``Transfer-Encoding`` so the stored record stays self-consistent).

Reads ``curi.uri``, ``curi.via``. Writes ``status``/``http_status`` (the HTTP status, or -2
connect failed, -3 connection lost, -4 timeout before a response, -7 unfetchable URI),
``http_version``, ``response_headers``, ``content_type``, ``content_length``, ``content_size``,
``payload_digest``, ``fetch_start_ms``, ``fetch_duration_ms``, ``ip_address``, ``recording``
and the annotations ``lenTrunc``/``timeTrunc``/``err=<Exception>``. After a server's
``/robots.txt`` it feeds ``ctx.servers.update_robots``. Heritrix counterpart:
``org.archive.modules.fetcher.FetchHTTP`` (with FetchHTTP2's pooled keep-alive connections).
"""

from __future__ import annotations

import contextlib
import importlib.util
import time
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any

import httpx
from pydantic import Field, field_validator

from crawler import CrawlURI, FetchStatus, Params, Processor, ProcessorContext, Recording
from crawler.recording import DEFAULT_IN_MEMORY_BYTES
from crawler.robots import is_robots_uri
from crawler.urls import UriError, server_key
from processors.fetch.user_agent import user_agent

DEFAULT_ACCEPT = "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
RENAMED_TRANSFER_ENCODING = b"X-Crawler-Transfer-Encoding"


class FetchHTTPParams(Params):
    """Parameters of :class:`FetchHTTP`."""

    timeout_s: float = Field(
        120,
        gt=0,
        description="whole fetch, connect to last body byte; past it the body is cut "
        "and annotated timeTrunc (Heritrix: timeoutSeconds, 1200)",
    )
    connect_timeout_s: float = Field(20, gt=0, description="TCP+TLS connect timeout")
    read_timeout_s: float = Field(
        20, gt=0, description="longest wait for any read (response head or a body chunk)"
    )
    max_length_bytes: int = Field(
        0, ge=0, description="cut bodies longer than this, annotated lenTrunc; 0 = unlimited"
    )
    in_memory_bytes: int = Field(
        DEFAULT_IN_MEMORY_BYTES, ge=0, description="bodies larger than this spill to a temp file"
    )
    accept_headers: tuple[str, ...] = Field(
        (DEFAULT_ACCEPT,), description="extra request headers, each 'Name: value'"
    )
    accept_compression: bool = Field(
        False, description="send 'Accept-Encoding: gzip, deflate' (bodies are stored encoded)"
    )
    send_referer: bool = Field(True, description="send the via URI as Referer")
    http2: bool = Field(False, description="offer HTTP/2 over TLS (needs the h2 package)")
    verify_tls: bool = Field(
        False,
        description="verify TLS certificates; off by default because an archival crawler "
        "must capture sites with expired or self-signed certificates too",
    )
    max_connections: int = Field(
        0, ge=0, description="size of the connection pool; 0 = one per toe thread"
    )
    keepalive_expiry_s: float = Field(
        4.0,
        ge=0,
        description="drop idle pooled connections after this (below common "
        "server idle timeouts, so a reused connection is rarely found closed)",
    )
    ignore_cookies: bool = Field(False, description="neither store nor send cookies")

    @field_validator("accept_headers")
    @classmethod
    def _headers_have_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for line in value:
            name, sep, _ = line.partition(":")
            if not sep or not name.strip() or not line.isascii():
                raise ValueError(f"header {line!r} is not 'Name: value' in ASCII")
        return value


def _request_head(request: httpx.Request) -> bytes:
    """The request line and headers as h11 writes them for HTTP/1.1."""
    parts = [request.method.encode("ascii"), b" ", request.url.raw_path, b" HTTP/1.1\r\n"]
    for name, value in request.headers.raw:
        parts += (name, b": ", value, b"\r\n")
    parts.append(b"\r\n")
    return b"".join(parts)


def _response_head(response: httpx.Response) -> bytes:
    """Status line and raw headers, Transfer-Encoding renamed since the body is de-chunked."""
    reason = response.extensions.get("reason_phrase", b"")
    if not isinstance(reason, bytes):
        reason = str(reason).encode("latin-1", "replace")
    version = response.http_version.encode("ascii", "replace")
    parts = [version, b" ", str(response.status_code).encode("ascii"), b" ", reason, b"\r\n"]
    for name, value in response.headers.raw:
        if name.lower() == b"transfer-encoding":
            name = RENAMED_TRANSFER_ENCODING
        parts += (name, b": ", value, b"\r\n")
    parts.append(b"\r\n")
    return b"".join(parts)


def _peer_ip(response: httpx.Response) -> str | None:
    stream = response.extensions.get("network_stream")
    if stream is None:
        return None
    try:
        addr = stream.get_extra_info("server_addr")
    except Exception:  # noqa: BLE001 - best effort; some streams know no peer
        return None
    if isinstance(addr, tuple) and addr:
        return str(addr[0])
    return None


def _content_length(value: str | None) -> int:
    if value is None:
        return -1
    try:
        length = int(value.split(",")[0].strip())
    except ValueError:
        return -1
    return length if length >= 0 else -1


def _failure_status(exc: Exception) -> int:
    """Heritrix status for an error raised before a response head arrived."""
    if isinstance(exc, httpx.ConnectTimeout | httpx.ConnectError | httpx.PoolTimeout):
        return FetchStatus.CONNECT_FAILED
    if isinstance(exc, httpx.TimeoutException):
        return FetchStatus.TIMEOUT
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.LocalProtocolError | httpx.InvalidURL):
        return FetchStatus.UNFETCHABLE_URI
    return FetchStatus.CONNECT_LOST


class FetchHTTP(Processor[FetchHTTPParams]):
    """Fetches http(s) URIs into a :class:`~crawler.recording.Recording`."""

    _client: httpx.Client | None = None

    def should_process(self, curi: CrawlURI) -> bool:
        uri = curi.uri
        return uri[:7].lower() == "http://" or uri[:8].lower() == "https://"

    def start(self, ctx: ProcessorContext) -> None:
        super().start(ctx)
        p = self.params
        if p.http2 and importlib.util.find_spec("h2") is None:
            raise RuntimeError(f"{self.name}: http2 needs the 'h2' package")
        headers: list[tuple[str, str]] = [("User-Agent", user_agent(ctx.order))]
        if ctx.order.operator.from_email:
            headers.append(("From", ctx.order.operator.from_email))
        for line in p.accept_headers:
            name, _, value = line.partition(":")
            headers.append((name.strip(), value.strip()))
        if p.accept_compression:
            headers.append(("Accept-Encoding", "gzip, deflate"))
        pool = p.max_connections or ctx.order.toe_threads
        read_s = min(p.read_timeout_s, p.timeout_s)
        cookies = CookieJar(DefaultCookiePolicy(allowed_domains=[])) if p.ignore_cookies else None
        client = httpx.Client(
            http1=True,
            http2=p.http2,
            verify=p.verify_tls,
            timeout=httpx.Timeout(
                connect=p.connect_timeout_s, read=read_s, write=read_s, pool=p.connect_timeout_s
            ),
            limits=httpx.Limits(
                max_connections=pool,
                max_keepalive_connections=pool,
                keepalive_expiry=p.keepalive_expiry_s,
            ),
            follow_redirects=False,
            cookies=cookies,
            trust_env=False,
        )
        # httpx merges its defaults (own User-Agent, Accept: */*, Accept-Encoding) into
        # whatever is set; ours override, and Accept-Encoding goes unless asked for.
        client.headers = httpx.Headers(headers)
        if not p.accept_compression:
            del client.headers["Accept-Encoding"]
        self._client = client

    def stop(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            # stop() must never raise.
            with contextlib.suppress(Exception):
                client.close()

    def inner_process(self, curi: CrawlURI) -> None:
        ctx = self.context
        client = self._client
        if client is None:
            raise RuntimeError(f"processor {self.name!r} used after stop()")
        curi.close_recording()
        started = time.monotonic()
        curi.fetch_start_ms = int(ctx.clock.time() * 1000)
        rec = Recording(self.params.in_memory_bytes)
        try:
            self._fetch(client, curi, rec, started)
        finally:
            curi.fetch_duration_ms = int((time.monotonic() - started) * 1000)
            if curi.status > 0:
                curi.recording = rec
            else:
                rec.close()
        if is_robots_uri(curi.uri):
            self._update_robots(ctx, curi)

    def _fetch(self, client: httpx.Client, curi: CrawlURI, rec: Recording, started: float) -> None:
        p = self.params
        headers: dict[str, str] | None = None
        via = curi.via
        if p.send_referer and via and via[:4].lower() == "http" and via.isascii():
            headers = {"Referer": via}
        try:
            request = client.build_request("GET", curi.uri, headers=headers)
        except (httpx.InvalidURL, httpx.UnsupportedProtocol, ValueError) as exc:
            self._fail(curi, FetchStatus.UNFETCHABLE_URI, exc)
            return
        rec.request_head = _request_head(request)
        try:
            response = client.send(request, stream=True)
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            self._fail(curi, _failure_status(exc), exc)
            return
        try:
            self._read_response(response, curi, rec, started)
        finally:
            response.close()

    def _read_response(
        self, response: httpx.Response, curi: CrawlURI, rec: Recording, started: float
    ) -> None:
        p = self.params
        curi.status = curi.http_status = response.status_code
        curi.http_version = response.http_version
        curi.response_headers = [
            (name.decode("latin-1"), value.decode("latin-1"))
            for name, value in response.headers.raw
        ]
        curi.content_type = curi.header("content-type")
        curi.content_length = _content_length(curi.header("content-length"))
        curi.ip_address = _peer_ip(response)
        rec.response_head = _response_head(response)
        limit = p.max_length_bytes
        deadline = started + p.timeout_s
        try:
            for chunk in response.iter_raw():
                if limit and rec.body_size + len(chunk) > limit:
                    rec.write_body(chunk[: limit - rec.body_size])
                    rec.truncated = "length"
                    break
                rec.write_body(chunk)
                if time.monotonic() >= deadline:
                    rec.truncated = "time"
                    break
        except httpx.TimeoutException:
            rec.truncated = "time"
        except httpx.HTTPError as exc:
            self._fail(curi, FetchStatus.CONNECT_LOST, exc)
        if rec.truncated == "length":
            curi.annotate("lenTrunc")
        elif rec.truncated == "time":
            curi.annotate("timeTrunc")
        curi.content_size = rec.body_size
        curi.payload_digest = rec.payload_digest

    @staticmethod
    def _fail(curi: CrawlURI, status: int, exc: Exception) -> None:
        curi.status = status
        curi.annotate(f"err={type(exc).__name__}")

    def _update_robots(self, ctx: ProcessorContext, curi: CrawlURI) -> None:
        try:
            server = server_key(curi.uri)
        except (UriError, ValueError):
            return
        max_bytes = ctx.order.robots.max_size_bytes
        body: bytes | None = None
        rec: Any = curi.recording
        if rec is not None and 200 <= curi.status < 300:
            # One byte over the limit tells the parser the file was cut (so it drops the
            # partial last line).
            body = rec.decoded_body(curi.header("content-encoding"), max_bytes + 1)
        ctx.servers.update_robots(
            server, curi.status, body, ctx.clock.time(), max_size_bytes=max_bytes
        )
