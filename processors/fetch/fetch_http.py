"""FetchHTTP: GET (or, for a form login, POST) an http(s) URI and record the exchange byte for byte.

Plain HTTP/1.1 (the default) goes through :class:`~processors.fetch.http11_client.Http11Client`:
keep-alive connections pooled per origin, the request head recorded as sent and the response
head as received. With ``http2: true`` (offered over TLS) or a ``proxy_url``, requests go
through httpx instead (:class:`~processors.fetch.httpx_client.HttpxClient`). Either way one
client and one cookie jar serve every thread, sockets come from a
:class:`~processors.fetch.guarded_backend.GuardedBackend`, so ``timeout_s`` bounds the whole
fetch — connect, a trickling response head, the body — and a stopping crawl cuts fetches after
``stop_grace_s``. Redirects are not followed (ExtractorHTTP turns ``Location`` into an ``R``
outlink). The body is read raw — never inflated here, so a nested ``gzip, gzip`` bomb costs
nothing — so the Recording holds the entity exactly as received (content-encoding kept,
transfer-encoding removed, the header renamed ``X-Crawler-Transfer-Encoding`` in the recorded
head), spooled to a temp file past ``in_memory_bytes``; extractors decode it, capped, with
``Recording.decoded_body``.

A 401 whose challenge matches one of the order's ``credentials`` (same host, scheme, realm) is
sent again with Basic or Digest authentication; the retried exchange is the one recorded. With
a fetch history (``ctx.history``), a URI captured before is requested with ``If-None-Match`` /
``If-Modified-Since``; a 304 is recorded as a ``server-not-modified`` revisit of that capture,
and that capture's payload is read back into the 304's recording
(:class:`~crawler.continuity.earlier_payload.EarlierPayload`) so its links are extracted.
Cookies live in a :class:`~processors.cookies.cookie_store.CookieStore` in
``state/cookies.sqlite`` (``cookies_file`` preloads a cookies.txt; ``ignore_cookies`` turns them
off). With ``form_logins``, a :class:`~processors.login.form_login.FormLogin` holds a host's URIs
back until its login is done (status -50 with the login step as prerequisite, or -62 once it
failed) and reads each login step's response; a step carrying ``curi.data["http_request"]`` is
sent with that method, body (text, or bytes: a browser page's POST), Content-Type and any
``headers`` (name-value pairs), and never conditionally.
TLS certificates are not verified unless ``verify_tls`` (archives want what the site served);
then old protocol versions and weak ciphers are accepted too.

Reads ``curi.uri``, ``curi.via``. Writes ``status``/``http_status`` (the HTTP status, or -2
connect failed (TLS failures included), -3 connection lost or a broken response, -4 timeout
before a response, -7 unfetchable URI, -5006 a non-public address ``ctx.addresses`` refuses,
annotated ``nonPublicAddress:<reason>:<ip>``), ``http_version``, ``response_headers``,
``content_type``, ``content_length``, ``content_size``, ``payload_digest``, ``fetch_start_ms``,
``fetch_duration_ms``, ``ip_address`` (also noted in ``ctx.servers`` unless proxied),
``recording``, ``revisit``, for a 304 read back ``earlier_status`` (and the stored response's
headers, freshened), and the annotations ``lenTrunc``/``timeTrunc``/``stopTrunc``/
``midFetchAbort``/``duplicate:server-not-modified``/``earlierPayload:missing``/
``earlierPayload:unreadable``/``err=<Exception>``.

Mid-fetch abort: with a ``should_fetch_body_rule`` (a DecideRuleSequence of the order, bound
without seeds), the rule is asked once the response head is in — status, ``content_type``,
``content_length`` and ``response_headers`` are set on the CrawlURI by then — and REJECT ends
the fetch there: the status stays the server's, nothing of the body is kept, the Recording is
marked truncated (``WARC-Truncated: unspecified``), the URI annotated ``midFetchAbort``, and
the connection is closed, not pooled. Prerequisites (P hops) and a server's ``/robots.txt`` are
always read whole. Without a rule this costs one ``is None`` test.

After a server's ``/robots.txt`` it feeds ``ctx.servers.update_robots``. Heritrix counterpart:
``org.archive.modules.fetcher.FetchHTTP`` (with FetchHTTP2's pooled keep-alive connections).
"""

from __future__ import annotations

import contextlib
import importlib.util
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from crawler import (
    CrawlURI,
    DecideResult,
    DecideRuleSequence,
    FetchStatus,
    Hop,
    Processor,
    ProcessorContext,
    ProcessResult,
    Recording,
    RevisitInfo,
    RuleContext,
    build_rules,
)
from crawler.continuity.earlier_payload import EarlierPayload
from crawler.frontier import note_protocol_error
from crawler.netguard import AddressRefusedError
from crawler.robots import complete_lines, is_robots_uri
from crawler.urls import UriError, host_port, server_key
from processors.cookies.cookie_store import REQUEST_COOKIE, CookieStore, merge_cookie_headers
from processors.cookies.store_opener import open_cookie_store
from processors.fetch.credentials import find_credential
from processors.fetch.fetch_clients import (
    BODY_ERRORS,
    FETCH_ERRORS,
    TIMEOUTS,
    FetchClient,
    FetchResponse,
    failure_status,
    is_protocol_error,
    make_client,
)
from processors.fetch.fetch_http_params import FetchHTTPParams
from processors.fetch.guarded_backend import CrawlStoppingError, GuardedBackend, fetch_deadline
from processors.fetch.http_heads import content_length, error_name
from processors.fetch.user_agent import user_agent
from processors.login.form_login import MARKER, REQUEST, FormLogin
from processors.login.login_secrets import TOKEN, redact_request

if TYPE_CHECKING:
    from crawler.history import FetchHistoryEntry

NOT_MODIFIED_PROFILE = "server-not-modified"


def _history_date(entry: FetchHistoryEntry) -> str:
    if entry.warc_date:
        return entry.warc_date
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(entry.fetch_time_s))


def _as_httpx(uri: str, response: FetchResponse) -> httpx.Response:
    """An httpx view of a response head, for the Digest arithmetic."""
    return httpx.Response(
        response.status_code, headers=response.raw_headers, request=httpx.Request("GET", uri)
    )


class FetchHTTP(Processor[FetchHTTPParams]):
    """Fetches http(s) URIs into a :class:`~crawler.recording.Recording`.

    ``cookies`` is the crawl's :class:`~processors.cookies.cookie_store.CookieStore` once
    started (None with ``ignore_cookies``): other fetchers (the browser pool) share it.
    """

    _client: FetchClient | None = None
    sheet_params = frozenset({"timeout_s", "max_length_bytes", "proxy_url"})
    _body_rule: DecideRuleSequence | None = None
    cookies: CookieStore | None = None
    _login: FormLogin | None = None
    _earlier: EarlierPayload | None = None

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
            headers.append(("Accept-Encoding", "gzip, deflate, br"))
        names = {name.lower() for name, _ in headers}
        if "accept" not in names:
            headers.append(("Accept", "*/*"))
        headers.append(("Connection", "keep-alive"))
        self._base_headers: list[tuple[bytes, bytes]] = [
            (k.encode("latin-1"), v.encode("latin-1")) for k, v in headers
        ]
        self._base_names = {name.lower() for name, _ in self._base_headers}
        if not p.ignore_cookies:
            self.cookies = open_cookie_store(
                ctx.state_dir,
                p.cookies_file,
                Path(ctx.order.base_dir),
                f"chains.fetch ({self.name}).params.cookies_file",
                ctx.logger,
                ctx.order.memory.max_cookie_partitions,
            )
        if p.form_logins:
            self._login = FormLogin(p.form_logins, ctx.logger)
            self._login.open(ctx.state_dir / "form-logins.jsonl")
            if ctx.tallies is not None:  # a --workers crawl: one login for every worker
                self._login.share(ctx.tallies, self.cookies)
        self._proxied: dict[str, FetchClient] = {}
        self._proxied_lock = threading.Lock()
        self._client = self._make_client(p.proxy_url)
        self._earlier = EarlierPayload.for_crawl(
            ctx.run_dir, ctx.history, ctx.logger, ctx.order.browser.enabled
        )
        if p.should_fetch_body_rule:
            rule = build_rules(p.should_fetch_body_rule, f"{self.name}.should_fetch_body_rule")
            rule.bind(RuleContext(base_dir=ctx.order.base_dir))
            self._body_rule = rule

    def _make_client(self, proxy_url: str | None) -> FetchClient:
        """A client for requests through ``proxy_url`` (None: direct)."""
        ctx, p = self.context, self.params
        # Through a proxy, the proxy connects: only addresses known before the fetch are judged.
        direct = not proxy_url
        backend = GuardedBackend(
            ctx.servers if direct else None,
            ctx.stopping,
            p.stop_grace_s,
            addresses=ctx.addresses if direct else None,
        )
        servers = ctx.servers
        resolve = servers.host_ip if servers.resolver_active else None
        pool = p.max_connections or ctx.order.toe_threads
        return make_client(p, backend, pool, proxy_url, resolve, ctx.in_rotation)

    def _client_for(self, curi: CrawlURI, default: FetchClient) -> tuple[FetchClient, bool]:
        """The client of ``curi``'s proxy (the order's, or another a sheet gives its site), and
        whether it connects directly."""
        proxy_url = self.params_for(curi).proxy_url
        if proxy_url == self.params.proxy_url:
            return default, proxy_url is None
        if proxy_url is None:
            proxy_url = ""  # a sheet's direct connection beside an order-wide proxy
        with self._proxied_lock:
            client = self._proxied.get(proxy_url)
            if client is None:
                client = self._make_client(proxy_url or None)
                self._proxied[proxy_url] = client
            return client, not proxy_url

    def stop(self) -> None:
        client, self._client = self._client, None
        with self._proxied_lock:
            others = list(self._proxied.values())
            self._proxied.clear()
        for each in [client, *others]:
            if each is not None:
                # stop() must never raise.
                with contextlib.suppress(Exception):
                    each.close()
        if self.cookies is not None:
            self.cookies.close()

    def report(self) -> list[str]:
        lines = super().report()
        if self.cookies is not None:
            lines.append(f"  cookies stored: {len(self.cookies)}")
            if self.cookies.write_failures:
                lines.append(f"  cookie store write failures: {self.cookies.write_failures}")
        if self._login is not None:
            lines += self._login.report()
        if self._earlier is not None and (self._earlier.loaded or self._earlier.unread):
            lines += self._earlier.report()
        return lines

    def inner_process(self, curi: CrawlURI) -> ProcessResult | None:
        ctx = self.context
        client = self._client
        if client is None:
            raise RuntimeError(f"processor {self.name!r} used after stop()")
        client, direct = self._client_for(curi, client)
        login = self._login
        if login is not None and not login.gate(curi, ctx.clock.time()):
            return ProcessResult.SKIP_TO_POST
        curi.close_recording()
        started = time.monotonic()
        curi.fetch_start_ms = int(ctx.clock.time() * 1000)
        rec = Recording(self.params.in_memory_bytes)
        try:
            with fetch_deadline(started + self.params_for(curi).timeout_s):
                self._fetch(client, curi, rec)
        finally:
            curi.fetch_duration_ms = int((time.monotonic() - started) * 1000)
            if curi.status > 0:
                curi.recording = rec
            else:
                rec.close()
        if curi.ip_address and curi.status > 0 and direct:
            with contextlib.suppress(UriError, ValueError):
                ctx.servers.note_ip(host_port(curi.uri)[0], curi.ip_address, ctx.clock.time())
        if is_robots_uri(curi.uri):
            self._update_robots(ctx, curi)
        if login is not None:
            if MARKER in curi.data:
                cookies = self.cookies.cookies_for(curi.uri) if self.cookies is not None else []
                login.after_fetch(curi, {c.name for c in cookies})
            elif login.session_lost(curi):
                # Not this capture: the login page. Log in again, then fetch it.
                curi.close_recording()
                curi.reset_for_retry()
                login.gate(curi, ctx.clock.time())
                return ProcessResult.SKIP_TO_POST
        return None

    def _fetch(self, client: FetchClient, curi: CrawlURI, rec: Recording) -> None:
        p = self.params
        headers: dict[str, str] = {}
        via = curi.via
        if p.send_referer and via and via[:4].lower() == "http" and via.isascii():
            headers["Referer"] = via
        # A login step needs the whole page (its form) and a POST is never conditional.
        login_step = REQUEST in curi.data or MARKER in curi.data
        previous = None if login_step else self._conditional_headers(curi, headers)
        response = self._send(client, curi, headers)
        if response is None:
            return
        if response.status_code == 401 and p.credentials:
            authorization = self._authorization(curi, response)
            if authorization is not None:
                response.close()
                response = self._send(client, curi, {**headers, "Authorization": authorization})
                if response is None:
                    return
        try:
            self._read_response(response, curi, rec)
        finally:
            response.close()
        if curi.status == 304 and previous is not None:
            curi.revisit = RevisitInfo(
                profile=NOT_MODIFIED_PROFILE,
                refers_to_uri=curi.uri,
                refers_to_date=_history_date(previous),
                refers_to_record_id=previous.warc_record_id,
                payload_digest=previous.payload_digest,
            )
            curi.annotate("duplicate:" + NOT_MODIFIED_PROFILE)
            if self._earlier is not None:
                self._earlier.load(curi, rec, previous)

    def _send(
        self, client: FetchClient, curi: CrawlURI, headers: dict[str, str]
    ) -> FetchResponse | None:
        """Send the request (a GET, or ``curi.data["http_request"]``'s method and body) and
        return the response with its head read, or None (status set)."""
        base = self._base_headers
        cookies = self.cookies
        method, body = "GET", b""
        try:
            request = curi.data.get(REQUEST)
            if isinstance(request, dict):
                method = str(request.get("method") or "GET").upper()
                raw = request.get("body")
                if isinstance(raw, bytes):
                    body = raw
                else:
                    text = str(raw or "")
                    if self._login is not None and TOKEN in text:
                        text = self._login.reveal(curi, text)
                    body = text.encode("utf-8")
                if request.get("content_type"):
                    headers = {**headers, "Content-Type": str(request["content_type"])}
                for name, value in request.get("headers") or ():
                    headers = {**headers, str(name): str(value)}
            if cookies is not None:
                cookie = cookies.cookie_header(curi.uri)
                extra = curi.data.get(REQUEST_COOKIE)
                if extra:
                    cookie = merge_cookie_headers(cookie, str(extra))
                if cookie:
                    headers = {**headers, "Cookie": cookie}
            if headers:
                added = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
                names = {name.lower() for name, _ in added}
                merged = [(name, value) for name, value in base if name.lower() not in names]
                merged += added
            else:
                merged = base
        except (httpx.InvalidURL, httpx.UnsupportedProtocol, ValueError) as exc:
            self._fail(curi, FetchStatus.UNFETCHABLE_URI, exc)
            return None
        try:
            response = client.send(curi.uri, merged, method, body)
        except FETCH_ERRORS as exc:
            self._fail(curi, failure_status(exc), exc)
            return None
        except AddressRefusedError as exc:
            curi.status = FetchStatus.BLOCKED_BY_ADDRESS
            curi.annotate(exc.note)
            return None
        except CrawlStoppingError as exc:
            # Retryable: a resumed crawl fetches it again.
            self._fail(curi, FetchStatus.CONNECT_LOST, exc)
            return None
        if cookies is not None and any(
            name.lower() == b"set-cookie" for name, _ in response.raw_headers
        ):
            with contextlib.suppress(ValueError, UnicodeError):
                cookies.set_from_response(
                    curi.uri,
                    [(n.decode("latin-1"), v.decode("latin-1")) for n, v in response.raw_headers],
                )
        return response

    def _conditional_headers(
        self, curi: CrawlURI, headers: dict[str, str]
    ) -> FetchHistoryEntry | None:
        """Add If-None-Match / If-Modified-Since from an earlier capture; return its entry."""
        p = self.params
        history = self.context.history
        if history is None or not (p.send_if_none_match or p.send_if_modified_since):
            return None
        # A 304 for robots.txt would leave no rules to parse.
        if is_robots_uri(curi.uri):
            return None
        # Without an imported history only a URI fetched again in this crawl can have an
        # entry: a forced re-fetch, or a retry (the uniq filter lets nothing else through).
        if not (history.has_imported or curi.force_fetch or curi.fetch_attempts):
            return None
        entry = history.fetch_history(curi.uri)
        if entry is None or not entry.payload_digest:
            return None
        sent = False
        if p.send_if_none_match and entry.etag and entry.etag.isascii():
            headers["If-None-Match"] = entry.etag
            sent = True
        if p.send_if_modified_since and entry.last_modified and entry.last_modified.isascii():
            headers["If-Modified-Since"] = entry.last_modified
            sent = True
        return entry if sent else None

    def _authorization(self, curi: CrawlURI, challenged: FetchResponse) -> str | None:
        """The Authorization answering a 401 with the order's credential for this host."""
        try:
            host, port = host_port(curi.uri)
        except (UriError, ValueError):
            return None
        try:
            view = _as_httpx(curi.uri, challenged)
        except (httpx.InvalidURL, ValueError):
            return None
        credential = find_credential(
            self.params.credentials, host, port, view.headers.get_list("www-authenticate")
        )
        return credential.authorization(view) if credential is not None else None

    def _read_response(self, response: FetchResponse, curi: CrawlURI, rec: Recording) -> None:
        curi.status = curi.http_status = response.status_code
        curi.http_version = response.http_version
        curi.response_headers = [
            (name.decode("latin-1"), value.decode("latin-1"))
            for name, value in response.raw_headers
        ]
        curi.content_type = curi.header("content-type")
        curi.content_length = content_length(curi.header("content-length"))
        curi.ip_address = response.peer_ip
        rec.request_head = response.request_head
        if self.params.redact_login_body and (
            MARKER in curi.data or b"\nauthorization:" in rec.request_head.lower()
        ):
            login = self._login
            rec.request_head = (
                login.redacted(curi, rec.request_head)
                if login is not None
                else redact_request(None, rec.request_head)
            )
        rec.response_head = response.response_head
        body_rule = self._body_rule
        if (
            body_rule is not None
            and body_rule.decide(curi) is DecideResult.REJECT
            # Prerequisites (robots.txt above all) are needed whatever their type, as in
            # Heritrix; so are robots.txt files reached otherwise.
            and curi.last_hop != Hop.PREREQ
            and not is_robots_uri(curi.uri)
        ):
            # The body is not read: close() drops the connection (the rest of the body is
            # still on its way) instead of giving it back to the pool.
            rec.truncated = "unspecified"
            curi.annotate("midFetchAbort")
            curi.content_size = 0
            curi.payload_digest = rec.payload_digest
            return
        limit = self.params_for(curi).max_length_bytes
        try:
            for chunk in response.iter_raw():
                if limit and rec.body_size + len(chunk) > limit:
                    rec.write_body(chunk[: limit - rec.body_size])
                    rec.truncated = "length"
                    break
                rec.write_body(chunk)
        except TIMEOUTS:
            rec.truncated = "time"
        except CrawlStoppingError:
            rec.truncated = "unspecified"
            curi.annotate("stopTrunc")
        except BODY_ERRORS as exc:
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
        name = error_name(exc)
        curi.annotate(f"err={name}")
        if is_protocol_error(exc):
            note_protocol_error(curi, f"{name}: {exc}")

    def _update_robots(self, ctx: ProcessorContext, curi: CrawlURI) -> None:
        try:
            server = server_key(curi.uri)
        except (UriError, ValueError):
            return
        max_bytes = ctx.order.robots.max_size_bytes
        body: bytes | None = None
        rec = curi.recording
        if rec is not None and 200 <= curi.status < 300:
            # One byte over the limit tells the parser the file was cut (so it drops the
            # partial last line).
            body = rec.decoded_body(curi.header("content-encoding"), max_bytes + 1)
            if rec.truncated and len(body) <= max_bytes:
                # Cut short by max_length_bytes or a timeout: its last line may be partial.
                body = complete_lines(body)
        ctx.servers.update_robots(
            server, curi.status, body, ctx.clock.time(), max_size_bytes=max_bytes
        )
