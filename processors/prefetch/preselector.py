"""Preselector: the first pre-fetch gate — operator blocks and an optional second scope check.

Reads ``curi.uri``; on a block writes ``curi.status`` (-5000 out of scope, -5001 blocked by the
operator) and skips to the post chain, so nothing is fetched. Stateless after construction, so
one instance serves every ToeThread. Heritrix counterpart:
``org.archive.crawler.prefetch.Preselector``.
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from crawler.curi import CrawlURI, FetchStatus
from crawler.decide.decide_rule import DecideResult, DecideRuleSequence
from crawler.params import Params
from crawler.processor import Processor, ProcessResult


def _check_regex(value: str) -> str:
    if value:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from exc
    return value


class PreselectorParams(Params):
    """Parameters of :class:`Preselector`."""

    recheck_scope: bool = Field(
        False,
        description="run the crawl scope again before fetching (catches scope changes made "
        "while URIs waited in the frontier); not ACCEPTed gives -5000",
    )
    block_all: bool = Field(False, description="block every URI (-5001)")
    block_by_regex: str = Field(
        "", description="block URIs that fully match this regular expression (-5001); '' = off"
    )
    allow_by_regex: str = Field(
        "",
        description="block URIs that do NOT fully match this regular expression (-5001); '' = off",
    )

    _regex_ok = field_validator("block_by_regex", "allow_by_regex")(_check_regex)


class Preselector(Processor[PreselectorParams]):
    """Blocks URIs by operator rules before any prerequisite or fetch work is done."""

    def __init__(
        self,
        name: str,
        params: PreselectorParams | None = None,
        *,
        enabled: bool = True,
        should_process_rule: DecideRuleSequence | None = None,
    ) -> None:
        super().__init__(name, params, enabled=enabled, should_process_rule=should_process_rule)
        p = self.params
        self._block = re.compile(p.block_by_regex) if p.block_by_regex else None
        self._allow = re.compile(p.allow_by_regex) if p.allow_by_regex else None

    def inner_process(self, curi: CrawlURI) -> ProcessResult | None:
        p = self.params
        if p.recheck_scope and self.context.scope.decide(curi) is not DecideResult.ACCEPT:
            curi.status = FetchStatus.OUT_OF_SCOPE
            return ProcessResult.SKIP_TO_POST
        if p.block_all:
            curi.status = FetchStatus.BLOCKED_BY_USER
            return ProcessResult.SKIP_TO_POST
        if self._block is not None and self._block.fullmatch(curi.uri):
            curi.status = FetchStatus.BLOCKED_BY_USER
            return ProcessResult.SKIP_TO_POST
        if self._allow is not None and not self._allow.fullmatch(curi.uri):
            curi.status = FetchStatus.BLOCKED_BY_USER
            return ProcessResult.SKIP_TO_POST
        return None
