"""UrlPattern: one entry of a URL block list, a regular expression or a SURT prefix.

``surt:`` followed by a SURT prefix (``surt:http://(com,example,``) or by a host or URL whose
implied prefix is meant (``surt:example.com`` — the domain and its subdomains,
``surt:http://example.com/ads/`` — that directory), as a surts file takes it; ``https`` and
``http`` are the same, as in scope prefixes. Anything else is a Python regular expression
searched anywhere in the URL (``re.search``; anchor it with ``^``), as ``crawler block`` rules
are. :func:`parse_url_pattern` raises ValueError saying what is wrong with a bad entry, so an
order names it at load time. Immutable; any thread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from crawler.surt import coerce_http, prefix_from_directive, surt
from crawler.urls import UriError

SURT_TAG = "surt:"


@dataclass(frozen=True, slots=True)
class UrlPattern:
    """A parsed entry: ``text`` as written, and either a compiled regex or a SURT prefix."""

    text: str
    regex: re.Pattern[str] | None
    surt_prefix: str | None

    def matches(self, url: str) -> bool:
        """Whether ``url`` (absolute, normalized as a browser sends it) is matched."""
        if self.regex is not None:
            return self.regex.search(url) is not None
        assert self.surt_prefix is not None
        return coerce_http(surt(url)).startswith(self.surt_prefix)


def parse_url_pattern(text: str) -> UrlPattern:
    """The UrlPattern of ``text`` (see the module docstring); ValueError if unusable."""
    if not text or not text.strip() or "\n" in text or "\r" in text:
        raise ValueError("a pattern is one non-empty line")
    if text.startswith(SURT_TAG):
        rest = text[len(SURT_TAG) :].strip()
        if not rest:
            raise ValueError(f"{text!r}: nothing after {SURT_TAG!r}")
        try:
            return UrlPattern(text, None, prefix_from_directive(rest))
        except (UriError, ValueError) as exc:
            raise ValueError(f"{text!r}: not a SURT prefix, host or URL ({exc})") from None
    try:
        return UrlPattern(text, re.compile(text), None)
    except re.error as exc:
        raise ValueError(f"invalid regular expression {text!r}: {exc}") from None
