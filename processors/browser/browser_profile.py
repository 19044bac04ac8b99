"""BrowserProfile: a saved browser state — cookies and localStorage — that every tab starts with.

The file is Playwright's storage-state JSON: ``{"cookies": [{name, value, domain, path, expires,
httpOnly, secure, sameSite}, ...], "origins": [{"origin", "localStorage": [{name, value}]}]}``.
``crawler profile create`` writes one after a scripted login
(:mod:`~processors.browser.profile_login`); ``browser.profile: PATH`` loads it: each browser tab
is opened with it, and its cookies go into the crawl's cookie jar too, so the HTTP fetches (a
page's own document comes from FetchHTTP) carry the session as well.

The file holds session cookies — whoever reads it is logged in as the account that made it:
:func:`save_profile` writes it readable by its owner only (mode 0600), atomically.

Pure functions and a frozen value: thread-safe.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crawler.crawler_error import CrawlerError
from processors.cookies.cookie_store import CookieRecord


class ProfileError(CrawlerError, ValueError):
    """A profile file that cannot be used; the message names the file."""


@dataclass(frozen=True)
class BrowserProfile:
    """A loaded profile: the storage state as Playwright takes it, and its cookies."""

    path: Path
    state: dict[str, Any]

    @property
    def cookies(self) -> list[CookieRecord]:
        """The profile's cookies as the crawl's jar takes them."""
        out = []
        for c in self.state.get("cookies", []):
            expires = c.get("expires", -1)
            out.append(
                CookieRecord(
                    name=str(c["name"]),
                    value=str(c["value"]),
                    domain=str(c["domain"]),
                    path=str(c.get("path") or "/"),
                    secure=bool(c.get("secure")),
                    http_only=bool(c.get("httpOnly")),
                    expires=None if expires is None or expires < 0 else int(expires),
                )
            )
        return out

    @property
    def origins(self) -> list[str]:
        """The origins whose localStorage the profile holds."""
        return [str(o.get("origin")) for o in self.state.get("origins", [])]


def load_profile(path: Path) -> BrowserProfile:
    """The profile at ``path``; raises :class:`ProfileError` (one line naming the file)."""
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProfileError(f"{path}: not a JSON profile: {exc}") from None
    problem = _shape_problem(state)
    if problem is not None:
        raise ProfileError(f"{path}: not a browser profile (storage state): {problem}")
    return BrowserProfile(path, state)


def save_profile(path: Path, state: dict[str, Any]) -> None:
    """Write ``state`` to ``path`` (mode 0600, replacing any file there atomically)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(state, fh, indent=1)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _shape_problem(state: Any) -> str | None:
    if not isinstance(state, dict):
        return "the top level is not an object"
    cookies, origins = state.get("cookies", []), state.get("origins", [])
    if not isinstance(cookies, list) or not isinstance(origins, list):
        return "'cookies' and 'origins' must be lists"
    for n, c in enumerate(cookies):
        if not isinstance(c, dict) or not all(k in c for k in ("name", "value", "domain")):
            return f"cookies[{n}] lacks name, value or domain"
        expires = c.get("expires", -1)
        if expires is not None and not isinstance(expires, int | float):
            return f"cookies[{n}].expires is not a number"
    for n, o in enumerate(origins):
        if not isinstance(o, dict) or not isinstance(o.get("origin"), str):
            return f"origins[{n}] lacks its origin"
        if not isinstance(o.get("localStorage", []), list):
            return f"origins[{n}].localStorage is not a list"
    return None
