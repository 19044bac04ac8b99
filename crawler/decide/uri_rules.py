"""DecideRules on the URI string: regexes, path shape and scheme.

Regexes are Python ``re`` syntax, checked when the order is loaded and compiled once when the
rule is built; they must match the WHOLE URI (Java's ``matches()``, as in Heritrix). Rules are
immutable and thread-safe; they read ``curi.uri`` only. Heritrix counterparts share the names.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from crawler.decide.rules import Decision, PredicatedDecideRule, PredicatedParams, Regex

if TYPE_CHECKING:
    from crawler.curi import CrawlURI


class MatchesRegexParams(PredicatedParams):
    regex: Regex = Field(description="regex that must match the whole URI")


class MatchesRegexDecideRule(PredicatedDecideRule[MatchesRegexParams]):
    """Applies its decision when the URI fully matches ``regex``."""

    def __init__(self, params: MatchesRegexParams | None = None) -> None:
        super().__init__(params)
        self._pattern = re.compile(self.params.regex)

    def evaluate(self, curi: CrawlURI) -> bool:
        return self._pattern.fullmatch(curi.uri) is not None


class NotMatchesRegexDecideRule(MatchesRegexDecideRule):
    """Applies its decision when the URI does NOT fully match ``regex``."""

    def evaluate(self, curi: CrawlURI) -> bool:
        return self._pattern.fullmatch(curi.uri) is None


class MatchesListRegexParams(PredicatedParams):
    regex_list: list[Regex] = Field(
        default_factory=list, description="regexes, each matched against the whole URI"
    )
    list_logical_or: bool = Field(
        True, description="true: any regex matching suffices; false: all must match"
    )


class MatchesListRegexDecideRule(PredicatedDecideRule[MatchesListRegexParams]):
    """Applies its decision when any (or, with ``list_logical_or: false``, every) regex of
    ``regex_list`` fully matches the URI. An empty list never matches."""

    def __init__(self, params: MatchesListRegexParams | None = None) -> None:
        super().__init__(params)
        self._patterns = tuple(re.compile(regex) for regex in self.params.regex_list)
        self._any = self.params.list_logical_or

    def evaluate(self, curi: CrawlURI) -> bool:
        if not self._patterns:
            return False
        uri = curi.uri
        if self._any:
            return any(p.fullmatch(uri) is not None for p in self._patterns)
        return all(p.fullmatch(uri) is not None for p in self._patterns)


class NotMatchesListRegexDecideRule(MatchesListRegexDecideRule):
    """Applies its decision when :class:`MatchesListRegexDecideRule` would not match."""

    def evaluate(self, curi: CrawlURI) -> bool:
        return not super().evaluate(curi)


class PathologicalPathParams(PredicatedParams):
    decision: Decision = Field("REJECT", description="answer for a pathological path")
    max_repetitions: int = Field(
        2, ge=0, description="times a run of path segments may repeat in a row (0: no limit)"
    )


class PathologicalPathDecideRule(PredicatedDecideRule[PathologicalPathParams]):
    """REJECT URIs where some run of '/'-terminated segments repeats more than
    ``max_repetitions`` times in a row, like ``/a/a/a/`` or ``/x/y/x/y/x/y/`` (crawler traps
    from relative links). Same verdict as Heritrix's regex ``.*?/(.*?/)\\1{N,}.*`` without its
    backtracking cost."""

    def evaluate(self, curi: CrawlURI) -> bool:
        repeats = self.params.max_repetitions
        if repeats <= 0:
            return False
        units = curi.uri.split("/")[1:-1]
        n = len(units)
        if n <= repeats or len(set(units)) == n:
            return False
        for period in range(1, n // (repeats + 1) + 1):
            needed = period * repeats
            same = 0
            for i in range(n - period):
                if units[i] == units[i + period]:
                    same += 1
                    if same >= needed:
                        return True
                else:
                    same = 0
        return False


class TooManyPathSegmentsParams(PredicatedParams):
    decision: Decision = Field("REJECT", description="answer for a too deep path")
    max_path_depth: int = Field(20, ge=0, description="most '/' allowed in the URI's path")


class TooManyPathSegmentsDecideRule(PredicatedDecideRule[TooManyPathSegmentsParams]):
    """REJECT URIs whose path (query excluded) holds more than ``max_path_depth`` slashes."""

    def evaluate(self, curi: CrawlURI) -> bool:
        uri = curi.uri
        start = uri.find("://")
        start = uri.find("/", start + 3) if start >= 0 else uri.find("/")
        if start < 0:
            return False
        end = uri.find("?", start)
        return uri.count("/", start, end if end >= 0 else len(uri)) > self.params.max_path_depth


class SchemeNotInSetParams(PredicatedParams):
    decision: Decision = Field("REJECT", description="answer for a scheme not in the set")
    schemes: list[str] = Field(
        default_factory=lambda: ["http", "https", "dns"],
        description="schemes that are let through (default: the ones the crawler fetches; "
        "Heritrix also lets ftp, whois and sftp through)",
    )


class SchemeNotInSetDecideRule(PredicatedDecideRule[SchemeNotInSetParams]):
    """REJECT URIs whose scheme is not one of ``schemes``. The default set is what the fetch
    chain can fetch (http, https, dns): a scheme let through that no fetcher handles would only
    waste a queue. Heritrix counterpart: ``SchemeNotInSetDecideRule``."""

    def __init__(self, params: SchemeNotInSetParams | None = None) -> None:
        super().__init__(params)
        self._schemes = frozenset(s.lower() for s in self.params.schemes)

    def evaluate(self, curi: CrawlURI) -> bool:
        uri = curi.uri
        colon = uri.find(":")
        return colon <= 0 or uri[:colon].lower() not in self._schemes


FILE_PATTERN_PRESETS: dict[str, str] = {
    "IMAGES": "bmp|gif|jpe?g|png|svg|tiff?|webp|avif|ico",
    "AUDIO": "mid|mp2|mp3|mp4|wav|ogg|oga|m4a|flac|aac",
    "VIDEO": "avi|mov|mpeg|ram|rm|smil|wmv|webm|ogv|mkv|m4v",
    "MISC": "doc|pdf|ppt|swf",
}
"""Extensions of :class:`MatchesFilePatternDecideRule`'s presets: Heritrix's, plus modern
formats (webp, avif, webm…); ``ALL`` is their union."""


class MatchesFilePatternParams(PredicatedParams):
    use_preset_pattern: Literal["ALL", "IMAGES", "AUDIO", "VIDEO", "MISC", "CUSTOM"] = Field(
        "ALL", description="which extensions match; CUSTOM uses 'regex'"
    )
    regex: Regex = Field(
        "", description="with CUSTOM: regex that must match the whole path (query excluded)"
    )


class MatchesFilePatternDecideRule(PredicatedDecideRule[MatchesFilePatternParams]):
    """Applies its decision when the URI's path (query and fragment excluded; case ignored)
    ends in one of the preset's extensions, or fully matches ``regex`` with CUSTOM. Heritrix
    matches the whole URI, so ``img.png?v=2`` escapes it there; here it matches."""

    def __init__(self, params: MatchesFilePatternParams | None = None) -> None:
        super().__init__(params)
        preset = self.params.use_preset_pattern
        if preset == "CUSTOM":
            self._pattern = re.compile(self.params.regex)
        else:
            names = (
                FILE_PATTERN_PRESETS.values() if preset == "ALL" else [FILE_PATTERN_PRESETS[preset]]
            )
            self._pattern = re.compile(r".*\.(?:" + "|".join(names) + ")", re.I)

    def evaluate(self, curi: CrawlURI) -> bool:
        uri = curi.uri
        start = uri.find("://")
        start = uri.find("/", start + 3) if start >= 0 else 0
        if start < 0:
            return False
        end = len(uri)
        for sep in ("?", "#"):
            pos = uri.find(sep, start)
            if 0 <= pos < end:
                end = pos
        return self._pattern.fullmatch(uri, start, end) is not None
