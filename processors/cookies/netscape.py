"""Netscape ``cookies.txt``: the cookie file curl, wget and browser extensions export.

One cookie per line, seven tab-separated fields: domain, include-subdomains flag
(``TRUE``/``FALSE``), path, secure flag, expiry (epoch seconds; ``0`` or empty = a session
cookie), name, value. ``#HttpOnly_`` before the domain marks an HttpOnly cookie; other lines
starting with ``#`` and blank lines are comments. A domain cookie (flag ``TRUE``) gets a leading
dot. Lines that do not parse are reported with their number. Pure, thread-safe.
"""

from __future__ import annotations

import time
from http.cookiejar import Cookie
from pathlib import Path

from crawler.crawler_error import CrawlerError

HTTPONLY_PREFIX = "#HttpOnly_"


class CookieFileError(CrawlerError, ValueError):
    """A line of a cookies.txt that is not a Netscape cookie line."""


def read_netscape(path: Path, now_s: float | None = None) -> list[Cookie]:
    """The unexpired cookies of the cookies.txt at ``path``; raises OSError if it cannot be
    read and :class:`CookieFileError` (naming the line) if a line is malformed."""
    now = time.time() if now_s is None else now_s
    cookies: list[Cookie] = []
    text = path.read_text(encoding="utf-8", errors="replace")
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip("\r\n")
        http_only = line.startswith(HTTPONLY_PREFIX)
        if http_only:
            line = line[len(HTTPONLY_PREFIX) :]
        elif line.lstrip().startswith("#") or not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) == 6:  # a cookie without a value
            fields.append("")
        if len(fields) != 7:
            raise CookieFileError(
                f"{path}:{number}: expected 7 tab-separated fields "
                "(domain, subdomains, path, secure, expiry, name, value)"
            )
        domain, subdomains, cookie_path, secure, expiry, name, value = fields
        domain = domain.strip().lower()
        expiry = expiry.strip()
        if not domain or (expiry and not expiry.lstrip("-").isdigit()):
            raise CookieFileError(f"{path}:{number}: bad domain or expiry {expiry!r}")
        expires = int(expiry) if expiry and int(expiry) > 0 else None
        if expires is not None and expires <= now:
            continue
        is_domain = subdomains.strip().upper() == "TRUE" or domain.startswith(".")
        if is_domain and not domain.startswith("."):
            domain = "." + domain
        cookies.append(
            Cookie(
                0,
                name,
                value,
                None,
                False,
                domain,
                is_domain,
                domain.startswith("."),
                cookie_path or "/",
                True,
                secure.strip().upper() == "TRUE",
                expires,
                expires is None,
                None,
                None,
                {"HttpOnly": ""} if http_only else {},
            )
        )
    return cookies
