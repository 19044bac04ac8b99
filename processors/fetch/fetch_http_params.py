"""FetchHTTPParams: the parameters of FetchHTTP (timeouts, limits, headers, TLS, proxy, auth)."""

from __future__ import annotations

from pydantic import Field, field_validator

from crawler import ComponentSpec, Params, build_rules
from crawler.recording import DEFAULT_IN_MEMORY_BYTES
from processors.fetch.credentials import Credential
from processors.fetch.socks5_tunnel import SocksProxy, is_socks_url
from processors.login.form_credential import FormCredential

DEFAULT_ACCEPT = "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


class FetchHTTPParams(Params):
    """Parameters of :class:`FetchHTTP`."""

    timeout_s: float = Field(
        120,
        gt=0,
        description="whole fetch, connect to last body byte; past it the body is cut "
        "and annotated timeTrunc, or, before the response head, status -4 "
        "(Heritrix: timeoutSeconds, 1200)",
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
        (DEFAULT_ACCEPT,),
        description="extra request headers, each 'Name: value' (e.g. 'Accept-Language: en')",
    )
    accept_compression: bool = Field(
        False, description="send 'Accept-Encoding: gzip, deflate, br' (bodies are stored encoded)"
    )
    send_referer: bool = Field(True, description="send the via URI as Referer")
    send_if_modified_since: bool = Field(
        True, description="send If-Modified-Since from the fetch history (a 304 is a revisit)"
    )
    send_if_none_match: bool = Field(
        True, description="send If-None-Match from the fetch history (a 304 is a revisit)"
    )
    http2: bool = Field(False, description="offer HTTP/2 over TLS (needs the h2 package)")
    verify_tls: bool = Field(
        False,
        description="verify TLS certificates (a failure is status -2); off by default because "
        "an archival crawler must capture sites with expired or self-signed certificates too",
    )
    redact_login_body: bool = Field(
        False,
        description="in the WARC request records of form logins and of requests with an "
        "Authorization header, replace the passwords with [redacted] (false: kept as sent, "
        "which replay and provenance need)",
    )
    proxy_url: str | None = Field(
        None,
        description="send requests through this proxy: http://host:port, or SOCKS5 as "
        "socks5://[user:password@]host:port (names resolved by the crawl) or socks5h://... "
        "(resolved by the proxy); per site through sheets",
    )
    credentials: tuple[Credential, ...] = Field(
        (),
        description="HTTP Basic/Digest logins, each {domain, username, password, scheme, "
        "realm}; a 401 from that host is retried with it",
    )
    max_connections: int = Field(
        0,
        ge=0,
        description="size of the connection pool; 0 = one per toe thread, and the idle "
        "keep-alive connections kept follow the hosts in rotation (one each, plus one per "
        "connection slot); set, the idle ones kept are 4 x this (at least 64)",
    )
    keepalive_expiry_s: float = Field(
        30.0,
        ge=0,
        description="drop idle pooled connections after this: above the politeness delay, so a "
        "host's next fetch reuses its connection (one the server closed meanwhile is seen "
        "before reuse, or found dead before any response byte and the request sent again)",
    )
    stop_grace_s: float = Field(
        2.0,
        ge=0,
        description="once the crawl is stopping, a fetch still running gets this long, then "
        "its body is cut (annotated stopTrunc)",
    )
    ignore_cookies: bool = Field(False, description="neither store nor send cookies")
    should_fetch_body_rule: tuple[ComponentSpec, ...] = Field(
        (),
        description="DecideRuleSequence asked once the response head is in (status, "
        "Content-Type, Content-Length); REJECT stops the download before the body, annotated "
        "midFetchAbort (Heritrix: shouldFetchBodyRule); empty = always fetch the body",
    )
    cookies_file: str | None = Field(
        None,
        description="Netscape cookies.txt loaded into the crawl's cookie store once (path "
        "relative to the order); a resumed crawl keeps state/cookies.sqlite instead",
    )
    form_logins: tuple[FormCredential, ...] = Field(
        (),
        description="HTML form logins, each {domain, login_uri, fields, ...}: a host's URIs "
        "wait until its login is done (see processors.login.FormCredential)",
    )

    @field_validator("accept_headers")
    @classmethod
    def _headers_have_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for line in value:
            name, sep, _ = line.partition(":")
            if not sep or not name.strip() or not line.isascii():
                raise ValueError(f"header {line!r} is not 'Name: value' in ASCII")
        return value

    @field_validator("should_fetch_body_rule")
    @classmethod
    def _body_rules_build(cls, value: tuple[ComponentSpec, ...]) -> tuple[ComponentSpec, ...]:
        try:
            build_rules(value, "should_fetch_body_rule")
        except Exception as exc:  # noqa: BLE001 - OrderError: every issue, with its path
            issues = getattr(exc, "issues", None)
            raise ValueError("; ".join(map(str, issues)) if issues else str(exc)) from None
        return value

    @field_validator("proxy_url")
    @classmethod
    def _proxy_is_http(cls, value: str | None) -> str | None:
        if value is None:
            return value
        if is_socks_url(value):
            SocksProxy.parse(value)  # a ValueError names what is wrong
        elif not value.lower().startswith(("http://", "https://")):
            raise ValueError(
                f"proxy_url {value!r} must be an http://, https://, socks5:// or socks5h:// URL"
            )
        return value
