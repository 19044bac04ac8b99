"""Who may use the console: a secret token, and same-origin checks on state-changing requests.

Every request except the login page and the static assets must carry the token, either as
``Authorization: Bearer <token>`` (scripts, the REST API) or in the ``crawler_console`` cookie that
the login page sets (the browser UI). Tokens are compared in constant time. A request that changes
state (any method but GET/HEAD/OPTIONS) is refused when the browser says it comes from another
site: an ``Origin`` that is not this console's own, or ``Sec-Fetch-Site: cross-site``. With the
cookie being ``SameSite=Strict`` and ``HttpOnly`` this closes cross-site request forgery, and the
token closes DNS rebinding (a rebound page has no cookie for our origin). Heritrix counterpart:
the console's admin login and its ``--web-admin`` password (digest auth over HTTPS).
"""

from __future__ import annotations

import hmac
import json
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

COOKIE_NAME = "crawler_console"
TOKEN_ENV = "CRAWLER_CONSOLE_TOKEN"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
PUBLIC_PREFIXES = ("/static/", "/login", "/favicon.ico")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def new_token() -> str:
    """A fresh random token (32 bytes of entropy, URL-safe)."""
    return secrets.token_urlsafe(32)


def token_matches(given: str | None, expected: str) -> bool:
    """Constant-time comparison of ``given`` with the console's token."""
    if not given:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


def request_token(headers: dict[str, str]) -> str | None:
    """The token a request carries: its Bearer credentials, else its console cookie."""
    auth = headers.get("authorization", "")
    scheme, _, credentials = auth.partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        return credentials.strip()
    return _cookie(headers.get("cookie", ""), COOKIE_NAME)


def cross_site(method: str, headers: dict[str, str]) -> str | None:
    """Why a state-changing request must be refused as cross-site, or None if it may go on."""
    if method in SAFE_METHODS:
        return None
    if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        return f"cross-site request refused (Sec-Fetch-Site: {headers['sec-fetch-site']})"
    origin = headers.get("origin")
    if origin is None:
        return None  # not sent by a browser (curl, scripts): the token decides
    host = headers.get("host", "")
    parts = urlsplit(origin)
    if origin == "null" or parts.scheme not in ("http", "https") or parts.netloc != host:
        return f"request from another origin refused (Origin: {origin})"
    return None


class TokenAuthMiddleware:
    """ASGI middleware enforcing the token and the origin rule on every non-public path.

    Unauthenticated API calls get ``401`` JSON; pages redirect to ``/login``; cross-site
    state-changing requests get ``403`` JSON (checked before the token, so a forged request
    learns nothing). Stateless and thread-safe.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        path: str = scope["path"]
        refused = cross_site(scope["method"], headers)
        if refused is not None:
            await _json(send, 403, refused)
            return
        if path.startswith(PUBLIC_PREFIXES) or token_matches(request_token(headers), self.token):
            await self.app(scope, receive, send)
            return
        if path.startswith("/api/") or path in ("/api", "/metrics"):
            await _json(
                send,
                401,
                "missing or wrong token: send 'Authorization: Bearer <token>' "
                "(the token is printed when the console starts)",
                [(b"www-authenticate", b'Bearer realm="crawler console"')],
            )
            return
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [(b"location", b"/login"), (b"content-length", b"0")],
            }
        )
        await send({"type": "http.response.body", "body": b""})


async def _json(
    send: Send, status: int, message: str, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = json.dumps({"status": status, "message": message}).encode("utf-8")
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *(extra or []),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
