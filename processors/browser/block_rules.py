"""BrowserBlockRules: the requests of browser pages that are not fetched at all.

The order's ``browser.block`` lists patterns (:mod:`crawler.decide.url_pattern`: a regular
expression searched in the URL, or ``surt:`` and a SURT prefix, host or URL), and
``browser.block_lists`` names bundled host lists (:mod:`processors.browser.block_lists`:
``ads``). A page's request matched by one — its sub-resources, its frames, its scripts' fetch and
XHR calls, GET or POST — is aborted in the browser before any connection, robots.txt or server
slot. Its rule is the pattern as written, or the list's name; the first that matches (patterns
in order, then lists) is the one counted. :meth:`annotation` is what crawl.log shows,
``browser:blocked:<rule>`` (spaces, commas and ``%`` percent-encoded so the line keeps its
columns).

:meth:`note` counts a blocked request; :meth:`report` is ``reports/browser-blocks-report.txt``:
per rule, requests blocked and distinct URLs among them (a URL is logged once per crawl).
Thread-safety: matching reads immutable state; counts are under a lock.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence

from crawler.decide.url_pattern import UrlPattern, parse_url_pattern
from crawler.surt import SurtPrefixSet, prefix_from_directive
from processors.browser.block_lists import BLOCK_LISTS

REPORT_NAME = "browser-blocks-report.txt"
BLOCKED_NOTE = "browser:blocked:"
_ESCAPES = str.maketrans({"%": "%25", " ": "%20", ",": "%2C", "\t": "%09"})


class BrowserBlockRules:
    """The order's block patterns and lists, and what they blocked (see the module docstring)."""

    def __init__(self, patterns: Sequence[str] = (), lists: Sequence[str] = ()) -> None:
        self._patterns: list[UrlPattern] = [parse_url_pattern(p) for p in patterns]
        self._lists: list[tuple[str, SurtPrefixSet]] = []
        for name in lists:
            hosts = BLOCK_LISTS.get(name)
            if hosts is None:
                raise ValueError(f"no block list named {name!r}; known: {sorted(BLOCK_LISTS)}")
            self._lists.append((name, SurtPrefixSet(prefix_from_directive(h) for h in hosts)))
        self.rules = [p.text for p in self._patterns] + [name for name, _ in self._lists]
        self._lock = threading.Lock()
        self._requests: Counter[str] = Counter()
        self._urls: Counter[str] = Counter()

    def __bool__(self) -> bool:
        return bool(self.rules)

    def match(self, url: str) -> str | None:
        """The rule that blocks ``url``, or None."""
        for pattern in self._patterns:
            if pattern.matches(url):
                return pattern.text
        for name, prefixes in self._lists:
            if prefixes.matches_uri(url):
                return name
        return None

    @staticmethod
    def annotation(rule: str) -> str:
        """The crawl.log annotation of a request ``rule`` blocked."""
        return BLOCKED_NOTE + rule.translate(_ESCAPES)

    def note(self, rule: str, *, new_url: bool) -> None:
        """Count a request ``rule`` blocked (``new_url``: its URL was not blocked before)."""
        with self._lock:
            self._requests[rule] += 1
            if new_url:
                self._urls[rule] += 1

    def counts(self) -> dict[str, tuple[int, int]]:
        """Rule -> (requests blocked, distinct URLs), every rule listed."""
        with self._lock:
            return {r: (self._requests[r], self._urls[r]) for r in self.rules}

    def report(self) -> str:
        """``browser-blocks-report.txt``: a header, then one line per rule, most requests first."""
        rows = sorted(self.counts().items(), key=lambda item: (-item[1][0], item[0]))
        lines = ["[requests] [urls] [rule]"]
        lines += [f"{requests} {urls} {rule}" for rule, (requests, urls) in rows]
        return "\n".join(lines) + "\n"
