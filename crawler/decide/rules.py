"""The basic DecideRules: constants, predicated rules, and rules on hops, seeds and fetch results.

Every rule here is immutable after construction (``bind`` aside) and safe to share between
ToeThreads. Rules read the CrawlURI and never write it. Heritrix counterparts are in
``org.archive.modules.deciderules`` under the same names.

A *predicated* rule answers its ``decision`` param (ACCEPT or REJECT) when its test holds and
NONE otherwise, so it only ever changes the verdict of a :class:`DecideRuleSequence` when it
applies. Regex-based and SURT-based rules live in :mod:`crawler.decide.uri_rules` and
:mod:`crawler.decide.surt_rules`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Literal, TypeVar

from pydantic import AfterValidator, Field

from crawler.curi import Hop
from crawler.decide.decide_rule import HOPS, DecideResult, DecideRule
from crawler.params import NoParams, Params

if TYPE_CHECKING:
    from crawler.curi import CrawlURI

Decision = Literal["ACCEPT", "REJECT"]
"""What a predicated rule answers when its test holds."""


def _check_regex(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None
    return pattern


Regex = Annotated[str, AfterValidator(_check_regex)]
"""A Python regular expression, checked when the order is loaded."""


class AcceptDecideRule(DecideRule[NoParams]):
    """Always ACCEPT (Heritrix ``AcceptDecideRule``)."""

    def decide(self, curi: CrawlURI) -> DecideResult:
        return DecideResult.ACCEPT


class RejectDecideRule(DecideRule[NoParams]):
    """Always REJECT; usually first in a scope so that only later ACCEPTs let URIs in."""

    def decide(self, curi: CrawlURI) -> DecideResult:
        return DecideResult.REJECT


class PredicatedParams(Params):
    """Parameters of every predicated rule."""

    decision: Decision = Field("ACCEPT", description="answer when the rule's test holds")


PP = TypeVar("PP", bound=PredicatedParams)


class PredicatedDecideRule(DecideRule[PP]):
    """Answers ``params.decision`` when :meth:`evaluate` is true, else NONE."""

    def __init__(self, params: PP | None = None) -> None:
        super().__init__(params)
        self._decision = DecideResult(self.params.decision)

    def predicate(self) -> tuple[Callable[[CrawlURI], object], DecideResult] | None:
        """``(evaluate, params.decision)``, unless a subclass changed :meth:`decide`."""
        if type(self).decide is not PredicatedDecideRule.decide:
            return None
        return self.evaluate, self._decision

    def decide(self, curi: CrawlURI) -> DecideResult:
        return self._decision if self.evaluate(curi) else DecideResult.NONE

    def evaluate(self, curi: CrawlURI) -> bool:
        """The rule's test."""
        raise NotImplementedError


class TooManyHopsParams(PredicatedParams):
    decision: Decision = Field("REJECT", description="answer when there are too many hops")
    max_hops: int = Field(20, ge=0, description="most hops (of any kind) from a seed allowed")


class TooManyHopsDecideRule(PredicatedDecideRule[TooManyHopsParams]):
    """REJECT when the total hop count from the seed exceeds ``max_hops`` (all hop letters
    count, including those dropped from the shown hop path), or the hop limit of the URI's seed
    when its seed-list line set one (``http://example.com/ max_hops=2``: ``seed_max_hops``, more
    or less than ``max_hops``). A sheet may set ``max_hops`` for some sites."""

    sheet_params = frozenset({"max_hops"})
    reads = frozenset({HOPS})

    def evaluate(self, curi: CrawlURI) -> bool:
        limit = curi.seed_max_hops
        if limit < 0:
            limit = self.params_for(curi).max_hops
        return curi.hops_dropped + len(curi.hop_path) > limit


class TransclusionParams(PredicatedParams):
    max_trans_hops: int = Field(
        2, ge=0, description="most trailing non-navigational hops (redirects not counted)"
    )
    max_speculative_hops: int = Field(
        1, ge=0, description="most speculative (X) hops among those trailing hops"
    )
    max_redirect_hops: int = Field(
        20, ge=1, description="a chain of this many redirects in a row is cut (a redirect trap)"
    )


_NAVIGATIONAL_HOPS = frozenset(Hop.LINK + Hop.MANIFEST + Hop.SUBMIT)


class TransclusionDecideRule(PredicatedDecideRule[TransclusionParams]):
    """ACCEPT things embedded in (or redirected to from) in-scope pages, even off-site.

    Looks at the trailing run of hops that are not L, M or S: it must be non-empty, hold at
    most ``max_trans_hops`` hops other than R, and at most ``max_speculative_hops`` X hops.
    So ``LLE`` (an image on a page) and ``LLRE`` qualify; ``LLEEE`` and ``LXX`` do not.
    Beyond Heritrix, whose rule follows an endless redirect chain for ever (it overrides
    TooManyHops), a run of ``max_redirect_hops`` redirects or more is not accepted.
    """

    reads = frozenset({HOPS})

    def evaluate(self, curi: CrawlURI) -> bool:
        path = curi.hop_path
        run = 0
        non_refer = 0
        refers = 0
        speculative = 0
        for i in range(len(path) - 1, -1, -1):
            hop = path[i]
            if hop in _NAVIGATIONAL_HOPS:
                break
            run += 1
            if hop == Hop.REFER:
                refers += 1
            else:
                non_refer += 1
                if hop == Hop.SPECULATIVE:
                    speculative += 1
        return (
            run > 0
            and speculative <= self.params.max_speculative_hops
            and non_refer <= self.params.max_trans_hops
            and refers < self.params.max_redirect_hops
        )


class PrerequisiteAcceptDecideRule(PredicatedDecideRule[PredicatedParams]):
    """ACCEPT prerequisites (last hop P: dns:, robots.txt) so a scope never blocks them."""

    reads = frozenset({HOPS})

    def evaluate(self, curi: CrawlURI) -> bool:
        return curi.hop_path[-1:] == Hop.PREREQ


class SeedAcceptDecideRule(PredicatedDecideRule[PredicatedParams]):
    """ACCEPT seeds."""

    reads = frozenset({HOPS})

    def evaluate(self, curi: CrawlURI) -> bool:
        return curi.is_seed


class HopsPathMatchesRegexParams(PredicatedParams):
    regex: Regex = Field(description="regex that must match the whole hop path, e.g. '.*X.*'")


class HopsPathMatchesRegexDecideRule(PredicatedDecideRule[HopsPathMatchesRegexParams]):
    """Applies its decision when the hop path (``LLE``; empty for seeds) fully matches."""

    reads = frozenset({HOPS})

    def __init__(self, params: HopsPathMatchesRegexParams | None = None) -> None:
        super().__init__(params)
        self._pattern = re.compile(self.params.regex)

    def evaluate(self, curi: CrawlURI) -> bool:
        return self._pattern.fullmatch(curi.hop_path) is not None


class FetchStatusParams(PredicatedParams):
    statuses: list[int] = Field(
        default_factory=list, description="fetch status codes (HTTP or Heritrix) that match"
    )


class FetchStatusDecideRule(PredicatedDecideRule[FetchStatusParams]):
    """Applies its decision when the URI's fetch status is one of ``statuses``; meant for
    processors' ``should_process_rule`` after the fetch."""

    def __init__(self, params: FetchStatusParams | None = None) -> None:
        super().__init__(params)
        self._statuses = frozenset(self.params.statuses)

    def evaluate(self, curi: CrawlURI) -> bool:
        return curi.status in self._statuses


class ContentTypeRegexParams(PredicatedParams):
    regex: Regex = Field(description="regex that must match the whole Content-Type header value")


class ContentTypeMatchesRegexDecideRule(PredicatedDecideRule[ContentTypeRegexParams]):
    """Applies its decision when the response's Content-Type fully matches ``regex``.

    A URI without a content type (not yet fetched, or none sent) never matches.
    """

    def __init__(self, params: ContentTypeRegexParams | None = None) -> None:
        super().__init__(params)
        self._pattern = re.compile(self.params.regex)

    def evaluate(self, curi: CrawlURI) -> bool:
        ctype = curi.content_type
        return ctype is not None and self._pattern.fullmatch(ctype) is not None


class ContentTypeNotMatchesRegexDecideRule(ContentTypeMatchesRegexDecideRule):
    """Applies its decision when the Content-Type is absent or does not fully match."""

    def evaluate(self, curi: CrawlURI) -> bool:
        return not super().evaluate(curi)


class HasViaDecideRule(PredicatedDecideRule[PredicatedParams]):
    """Applies its decision to URIs found on another URI (every URI but seeds and injected
    ones). Heritrix counterpart: ``HasViaDecideRule``."""

    def evaluate(self, curi: CrawlURI) -> bool:
        return bool(curi.via)


class MatchesStatusCodeParams(PredicatedParams):
    lower_bound: int = Field(0, description="lowest fetch status that matches")
    upper_bound: int = Field(600, description="highest fetch status that matches")


class MatchesStatusCodeDecideRule(PredicatedDecideRule[MatchesStatusCodeParams]):
    """Applies its decision when the fetch status lies in [lower_bound, upper_bound]; for
    processors' ``should_process_rule``. Heritrix counterpart: ``MatchesStatusCodeDecideRule``."""

    def evaluate(self, curi: CrawlURI) -> bool:
        return self.params.lower_bound <= curi.status <= self.params.upper_bound


class ContentLengthParams(Params):
    content_length_threshold: int = Field(
        2**63 - 1, ge=0, description="URIs whose Content-Length is below this are ACCEPTed"
    )


class ContentLengthDecideRule(DecideRule[ContentLengthParams]):
    """ACCEPT when the response's declared Content-Length is below the threshold (or unknown),
    else REJECT; for a fetcher's or writer's ``should_process_rule`` after the headers.
    Heritrix counterpart: ``ContentLengthDecideRule``."""

    def decide(self, curi: CrawlURI) -> DecideResult:
        if curi.content_length < self.params.content_length_threshold:
            return DecideResult.ACCEPT
        return DecideResult.REJECT
