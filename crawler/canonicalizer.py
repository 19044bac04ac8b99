"""Canonicalizer: the key the uniq filter remembers for a normalized URI.

Each rule maps a normalized URI (:func:`crawler.urls.normalize`) to a URI; applied in order,
they give the already-seen key, so trivially different URIs (``www.`` or not, a session id, a
trailing ``?``) are fetched once. The key is never fetched, so it need not be a working URI.
:func:`canonicalize` applies the default rules.

Heritrix counterpart: ``RulesCanonicalizationPolicy``.
Thread-safety: pure functions; a :class:`Canonicalizer` is immutable.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

_USERINFO_RE = re.compile(r"((?:https?|ftps?)://)[^/?#]+@", re.IGNORECASE)
_WWWN_RE = re.compile(r"(https?://)www[0-9]*\.([^/]*/.+)", re.IGNORECASE | re.DOTALL)
_WWW_RE = re.compile(r"(https?://)www\.([^/]*/.+)", re.IGNORECASE | re.DOTALL)
_SESSION_ID_RES = (
    re.compile(r"(?:jsessionid|phpsessid)=[0-9a-z]{32}(?:&|\Z)", re.IGNORECASE),
    re.compile(r"sid=[0-9a-z]{32}(?:&|\Z)", re.IGNORECASE),
    re.compile(r"aspsessionid[a-z]{8}=[a-z]{24}(?:&|\Z)", re.IGNORECASE),
)
_CFID_RE = re.compile(r"cfid=[^&]+&cftoken=[^&]+(?:&jsessionid=[^&]+)?(?:&|\Z)", re.IGNORECASE)
_EXTRA_SLASHES_RE = re.compile(r"/{2,}")


def _lowercase(uri: str) -> str:
    return uri.lower()


def _strip_userinfo(uri: str) -> str:
    if "@" not in uri:
        return uri
    return _USERINFO_RE.sub(r"\1", uri, count=1)


def _strip_prefix_www(pattern: re.Pattern[str]) -> Callable[[str], str]:
    def rule(uri: str) -> str:
        if "://www" not in uri[:12].lower():
            return uri
        m = pattern.fullmatch(uri)
        return uri if m is None else m.group(1) + m.group(2)

    return rule


def _strip_session_ids(uri: str) -> str:
    if "=" not in uri:
        return uri
    low = uri.lower()
    if "sid=" not in low and "sessionid" not in low:
        return uri
    for pattern in _SESSION_ID_RES:
        uri = pattern.sub("", uri)
    return uri


def _strip_session_cfids(uri: str) -> str:
    if "=" not in uri or "cfid=" not in uri.lower():
        return uri
    return _CFID_RE.sub("", uri)


def _fixup_query(uri: str) -> str:
    q = uri.find("?")
    if q < 0:
        return uri
    if uri.startswith("?&", q):
        uri = uri[: q + 1] + uri[q + 2 :]
    uri = uri.rstrip("&")
    return uri[:-1] if uri.endswith("?") else uri


def _sort_query(uri: str) -> str:
    base, _, query = uri.partition("?")
    if not query or "&" not in query:
        return uri
    return f"{base}?{'&'.join(sorted(query.split('&')))}"


def _strip_extra_slashes(uri: str) -> str:
    sep = uri.find("://")
    start = uri.find("/", sep + 3 if sep >= 0 else 0)
    if start < 0:
        return uri
    path, qmark, query = uri[start:].partition("?")
    if "//" not in path:
        return uri
    return uri[:start] + _EXTRA_SLASHES_RE.sub("/", path) + qmark + query


CANONICALIZATION_RULES: dict[str, Callable[[str], str]] = {
    "lowercase": _lowercase,
    "strip_userinfo": _strip_userinfo,
    "strip_www": _strip_prefix_www(_WWW_RE),
    "strip_wwwn": _strip_prefix_www(_WWWN_RE),
    "strip_session_ids": _strip_session_ids,
    "strip_session_cfids": _strip_session_cfids,
    "fixup_query": _fixup_query,
    "sort_query": _sort_query,
    "strip_extra_slashes": _strip_extra_slashes,
}
"""Every rule a :class:`Canonicalizer` can apply, by name."""

DEFAULT_CANONICALIZATION_RULES: tuple[str, ...] = (
    "lowercase",
    "strip_userinfo",
    "strip_wwwn",
    "strip_session_ids",
    "strip_session_cfids",
    "fixup_query",
)
"""Heritrix's default policy (H1 and H3 alike), in its order."""


class Canonicalizer:
    """Applies named canonicalization rules in order (Heritrix ``RulesCanonicalizationPolicy``).

    Rules (see :data:`CANONICALIZATION_RULES`): ``lowercase`` (the whole URI), ``strip_userinfo``,
    ``strip_www`` / ``strip_wwwn`` (``www.``/``www2.``… only when something follows the first
    path slash), ``strip_session_ids`` (jsessionid, phpsessid, sid: 32 alnum; ASPSESSIONIDxxxxxxxx),
    ``strip_session_cfids``, ``fixup_query`` (trailing ``?``/``&``, ``?&``), ``sort_query``,
    ``strip_extra_slashes``. Immutable, thread-safe.
    """

    __slots__ = ("_funcs", "rules")

    def __init__(self, rules: Sequence[str] = DEFAULT_CANONICALIZATION_RULES) -> None:
        unknown = [name for name in rules if name not in CANONICALIZATION_RULES]
        if unknown:
            raise ValueError(
                f"unknown canonicalization rule(s) {unknown}; "
                f"known: {sorted(CANONICALIZATION_RULES)}"
            )
        self.rules: tuple[str, ...] = tuple(rules)
        self._funcs = tuple(CANONICALIZATION_RULES[name] for name in rules)

    def canonicalize(self, uri: str) -> str:
        """The canonical key of the (already normalized) ``uri``."""
        for func in self._funcs:
            uri = func(uri)
        return uri

    def __repr__(self) -> str:
        return f"Canonicalizer({list(self.rules)!r})"


_DEFAULT_CANONICALIZER = Canonicalizer()


def canonicalize(uri: str) -> str:
    """The uniq-filter key of ``uri`` under :data:`DEFAULT_CANONICALIZATION_RULES`.

    Example: ``http://User@WWW3.Example.com/Cart?x=1&JSESSIONID=<32 alnum>`` →
    ``http://example.com/cart?x=1``.
    """
    return _DEFAULT_CANONICALIZER.canonicalize(uri)


__all__ = [
    "CANONICALIZATION_RULES",
    "DEFAULT_CANONICALIZATION_RULES",
    "Canonicalizer",
    "canonicalize",
]
