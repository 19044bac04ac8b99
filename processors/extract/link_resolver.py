"""LinkResolver: turns the raw value of an href/src into an absolute URI, fast.

Extractors resolve every link they find, so the common shapes (absolute, ``//host/…``,
``/path``, ``?query``, ``file.html``) are handled by string concatenation against the parts of
the base computed once per page; anything unusual (dot segments, odd bases) falls back to
:func:`urllib.parse.urljoin`. The result is absolute but not normalized: the
CandidatesProcessor normalizes. Values that can never be crawled (``javascript:``, ``mailto:``,
``data:``, ``tel:``, ``about:``, fragment-only, empty) give None, cheaply, before any of that.

Immutable after construction; one instance per page (or header), so it needs no lock.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin

_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_IGNORED_SCHEMES = ("javascript:", "mailto:", "data:", "tel:", "about:")
_REMOVED_CHARS = str.maketrans("", "", "\t\r\n")
_SPACE = " \t\r\n\f\v\x00"

MAX_LINK_CHARS = 16384
"""Longer attribute values are not links (Heritrix's maxAttributeValueLength)."""


class LinkResolver:
    """Resolves link values against one base URI (see the module docstring)."""

    __slots__ = ("_base", "_dir", "_origin", "_scheme", "_without_query")

    def __init__(self, base: str) -> None:
        self._base = base
        scheme_end = base.find("://")
        hier = scheme_end + 3
        path_start = base.find("/", hier) if scheme_end > 0 else -1
        cut = len(base)
        for sep in ("?", "#"):
            pos = base.find(sep, hier)
            if 0 <= pos < cut:
                cut = pos
        if scheme_end <= 0 or path_start < 0 or path_start > cut:
            # No path (``http://host``) or not hierarchical: let urljoin decide everything.
            self._scheme = self._origin = self._dir = self._without_query = ""
            return
        self._scheme = base[: scheme_end + 1]
        self._origin = base[:path_start]
        self._dir = base[: base.rindex("/", 0, cut) + 1]
        self._without_query = base[:cut]

    @property
    def base(self) -> str:
        """The URI links are resolved against."""
        return self._base

    def resolve(self, value: str | None) -> str | None:
        """The absolute URI for ``value``, or None when it is not a crawlable link."""
        if not value:
            return None
        ref = value.strip(_SPACE)
        if not ref or ref[0] == "#" or len(ref) > MAX_LINK_CHARS:
            return None
        if "\t" in ref or "\n" in ref or "\r" in ref:
            ref = ref.translate(_REMOVED_CHARS)
        if _SCHEME_RE.match(ref) is not None:
            if ref[:11].lower().startswith(_IGNORED_SCHEMES):
                return None
            return ref
        if not self._origin:
            return self._join(ref)
        first = ref[0]
        if first == "/":
            if ref[1:2] == "/":
                return self._scheme + ref
            if "/." in ref:
                return self._join(ref)
            return self._origin + ref
        if first == "?":
            return self._without_query + ref
        directory, rest = self._climb(ref) if first == "." else (self._dir, ref)
        if "/." in rest or rest in (".", ".."):
            return self._join(ref)
        return directory + rest

    def _climb(self, ref: str) -> tuple[str, str]:
        """Apply leading ``./`` and ``../`` segments to the base directory."""
        directory = self._dir
        floor = len(self._origin) + 1
        while True:
            if ref.startswith("../"):
                ref = ref[3:]
                if len(directory) > floor:
                    directory = directory[: directory.rindex("/", 0, len(directory) - 1) + 1]
            elif ref.startswith("./"):
                ref = ref[2:]
            else:
                return directory, ref

    def _join(self, ref: str) -> str | None:
        try:
            return urljoin(self._base, ref)
        except ValueError:
            return None
