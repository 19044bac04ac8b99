"""TransclusionDecideRule cuts endless redirect chains (which Heritrix's rule follows for ever)."""

from __future__ import annotations

from crawler import CrawlURI, DecideResult
from crawler.decide import TransclusionDecideRule, TransclusionParams


def reached_by(hops: str) -> CrawlURI:
    return CrawlURI("http://a.example/r", via="http://a.example/", hop_path=hops)


def test_a_long_redirect_run_is_no_longer_transcluded() -> None:
    rule = TransclusionDecideRule(TransclusionParams(max_redirect_hops=3))
    assert rule.decide(reached_by("LRR")) is DecideResult.ACCEPT
    assert rule.decide(reached_by("LRRE")) is DecideResult.ACCEPT
    assert rule.decide(reached_by("LRRR")) is DecideResult.NONE
    assert rule.decide(reached_by("L" + "R" * 40)) is DecideResult.NONE
    assert TransclusionDecideRule().decide(reached_by("L" + "R" * 19)) is DecideResult.ACCEPT
