"""ViaSurtPrefixed, MatchesFilePattern, ContentLength, HasVia and MatchesStatusCode rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler import CrawlURI, DecideResult
from crawler.decide import (
    ContentLengthDecideRule,
    ContentLengthParams,
    HasViaDecideRule,
    MatchesFilePatternDecideRule,
    MatchesFilePatternParams,
    MatchesStatusCodeDecideRule,
    MatchesStatusCodeParams,
    RuleContext,
    ViaSurtPrefixedDecideRule,
    ViaSurtPrefixedParams,
)

ACCEPT, REJECT, NONE = DecideResult.ACCEPT, DecideResult.REJECT, DecideResult.NONE


def test_via_surt_prefixed_looks_at_the_referring_uri(tmp_path: Path) -> None:
    (tmp_path / "vias.txt").write_text("# hubs\nhttp://hub.example/links/\n")
    rule = ViaSurtPrefixedDecideRule(
        ViaSurtPrefixedParams(surts_file="vias.txt", surts=["https://portal.example"])
    )
    rule.bind(RuleContext(base_dir=str(tmp_path)))
    assert (
        rule.decide(CrawlURI("http://anywhere.example/", via="http://hub.example/links/a"))
        is ACCEPT
    )
    assert rule.decide(CrawlURI("http://x.example/", via="http://www.portal.example/p")) is ACCEPT
    assert rule.decide(CrawlURI("http://hub.example/links/b", via="http://hub.example/")) is NONE
    assert rule.decide(CrawlURI("http://hub.example/links/c")) is NONE


@pytest.mark.parametrize(
    ("preset", "uri", "matches"),
    [
        ("ALL", "http://s.example/a/photo.JPG", True),
        ("ALL", "http://s.example/a/photo.png?size=2", True),
        ("ALL", "http://s.example/a/page.html", False),
        ("IMAGES", "http://s.example/i.webp", True),
        ("IMAGES", "http://s.example/v.mp4", False),
        ("VIDEO", "http://s.example/v.webm#t=3", True),
        ("AUDIO", "http://s.example/a.mp3", True),
        ("MISC", "http://s.example/doc.pdf", True),
        ("ALL", "http://s.example.png/", False),
    ],
)
def test_matches_file_pattern_presets(preset: str, uri: str, matches: bool) -> None:
    params = MatchesFilePatternParams(decision="REJECT", use_preset_pattern=preset)  # type: ignore[arg-type]
    expected = REJECT if matches else NONE
    assert MatchesFilePatternDecideRule(params).decide(CrawlURI(uri)) is expected


def test_matches_file_pattern_custom_regex_applies_to_the_path() -> None:
    params = MatchesFilePatternParams(use_preset_pattern="CUSTOM", regex=r"/docs/.*\.txt")
    rule = MatchesFilePatternDecideRule(params)
    assert rule.decide(CrawlURI("http://s.example/docs/a.txt?x")) is ACCEPT
    assert rule.decide(CrawlURI("http://s.example/a.txt")) is NONE


def test_content_length_accepts_below_the_threshold_or_unknown() -> None:
    rule = ContentLengthDecideRule(ContentLengthParams(content_length_threshold=1000))
    assert rule.decide(CrawlURI("http://s.example/", content_length=999)) is ACCEPT
    assert rule.decide(CrawlURI("http://s.example/", content_length=1000)) is REJECT
    assert rule.decide(CrawlURI("http://s.example/")) is ACCEPT


def test_has_via_and_status_code_rules() -> None:
    assert (
        HasViaDecideRule().decide(CrawlURI("http://s.example/", via="http://s.example/a")) is ACCEPT
    )
    assert HasViaDecideRule().decide(CrawlURI("http://s.example/")) is NONE
    rule = MatchesStatusCodeDecideRule(
        MatchesStatusCodeParams(decision="REJECT", lower_bound=400, upper_bound=499)
    )
    assert rule.decide(CrawlURI("http://s.example/", status=404)) is REJECT
    assert rule.decide(CrawlURI("http://s.example/", status=200)) is NONE
