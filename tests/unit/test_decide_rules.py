"""The built-in DecideRules, alone and as a realistic Heritrix-style scope."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from crawler.curi import CrawlURI
from crawler.decide import (
    AcceptDecideRule,
    ContentTypeMatchesRegexDecideRule,
    ContentTypeNotMatchesRegexDecideRule,
    ContentTypeRegexParams,
    DecideResult,
    DecideRule,
    DecideRuleSequence,
    FetchStatusDecideRule,
    FetchStatusParams,
    HopsPathMatchesRegexDecideRule,
    HopsPathMatchesRegexParams,
    MatchesListRegexDecideRule,
    MatchesListRegexParams,
    MatchesRegexDecideRule,
    MatchesRegexParams,
    NotMatchesListRegexDecideRule,
    NotMatchesRegexDecideRule,
    NotOnDomainsDecideRule,
    NotOnHostsDecideRule,
    NotSurtPrefixedDecideRule,
    OnDomainsDecideRule,
    OnDomainsParams,
    OnHostsDecideRule,
    OnHostsParams,
    PathologicalPathDecideRule,
    PathologicalPathParams,
    PrerequisiteAcceptDecideRule,
    RejectDecideRule,
    RuleContext,
    SchemeNotInSetDecideRule,
    SchemeNotInSetParams,
    SeedAcceptDecideRule,
    SurtPrefixedDecideRule,
    SurtPrefixedParams,
    TooManyHopsDecideRule,
    TooManyHopsParams,
    TooManyPathSegmentsDecideRule,
    TooManyPathSegmentsParams,
    TransclusionDecideRule,
)

ACCEPT, REJECT, NONE = DecideResult.ACCEPT, DecideResult.REJECT, DecideResult.NONE


def curi(uri: str, hops: str = "", via: str | None = None, **kw: object) -> CrawlURI:
    c = CrawlURI(uri=uri, hop_path=hops, via=via)
    for key, value in kw.items():
        setattr(c, key, value)
    return c


def test_constant_rules() -> None:
    assert AcceptDecideRule().decide(curi("http://a.com/")) is ACCEPT
    assert RejectDecideRule().decide(curi("http://a.com/")) is REJECT


def test_too_many_hops_counts_every_hop_letter() -> None:
    rule = TooManyHopsDecideRule(TooManyHopsParams(max_hops=3))
    assert rule.decide(curi("http://a.com/", "LLL")) is NONE
    assert rule.decide(curi("http://a.com/", "LERP")) is REJECT
    assert rule.decide(curi("http://a.com/", "L", hops_dropped=3)) is REJECT
    assert TooManyHopsDecideRule().params.max_hops == 20


@pytest.mark.parametrize(
    ("hops", "expected"),
    [
        ("", NONE),  # a seed is not transcluded
        ("L", NONE),
        ("LLE", ACCEPT),
        ("LEE", ACCEPT),
        ("LEEE", NONE),  # 3 non-L hops > max_trans_hops 2
        ("LRRRE", ACCEPT),  # redirects do not count towards the limit
        ("R", ACCEPT),
        ("LX", ACCEPT),
        ("LXX", NONE),  # 2 speculative hops > 1
        ("EEL", NONE),  # ends in a navigational hop
        ("LEM", NONE),
        ("ELS", NONE),
        ("LP", ACCEPT),
    ],
)
def test_transclusion(hops: str, expected: DecideResult) -> None:
    assert TransclusionDecideRule().decide(curi("http://cdn.other.com/x.png", hops)) is expected


def test_prerequisite_and_seed_accept() -> None:
    assert PrerequisiteAcceptDecideRule().decide(curi("dns:a.com", "P")) is ACCEPT
    assert PrerequisiteAcceptDecideRule().decide(curi("http://a.com/robots.txt", "LP")) is ACCEPT
    assert PrerequisiteAcceptDecideRule().decide(curi("http://a.com/", "PL")) is NONE
    assert SeedAcceptDecideRule().decide(curi("http://a.com/", is_seed=True)) is ACCEPT
    assert SeedAcceptDecideRule().decide(curi("http://a.com/", "L")) is NONE


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("http://a.com/a/b/c/", NONE),
        ("http://a.com/a/a/", NONE),
        ("http://a.com/a/a/a/", REJECT),
        ("http://a.com/x/a/a/a/y", REJECT),
        ("http://a.com/x/y/x/y/x/y/", REJECT),
        ("http://a.com/x/y/x/y/", NONE),
        ("http://a.com/a/a/a", NONE),  # the last segment has no trailing '/'
        ("http://a/a/a/", REJECT),  # the host counts as a segment, as in Heritrix's regex
        ("http://a.com/p?x=/q/q/q/", REJECT),
    ],
)
def test_pathological_path(uri: str, expected: DecideResult) -> None:
    assert PathologicalPathDecideRule().decide(curi(uri)) is expected


def test_pathological_path_matches_heritrix_regex_on_random_paths() -> None:
    import random
    import re

    rng = random.Random(7)
    for repeats in (1, 2, 3):
        rule = PathologicalPathDecideRule(PathologicalPathParams(max_repetitions=repeats))
        regex = re.compile(r".*?/(.*?/)\1{" + str(repeats) + r",}.*", re.DOTALL)
        for _ in range(400):
            path = "/".join(rng.choice("ab") for _ in range(rng.randint(0, 9)))
            uri = f"http://h.com/{path}/" if rng.random() < 0.5 else f"http://h.com/{path}"
            expected = REJECT if regex.fullmatch(uri) else NONE
            assert rule.decide(curi(uri)) is expected, uri


def test_too_many_path_segments_counts_path_slashes_only() -> None:
    rule = TooManyPathSegmentsDecideRule(TooManyPathSegmentsParams(max_path_depth=3))
    assert rule.decide(curi("http://a.com/1/2/3")) is NONE
    assert rule.decide(curi("http://a.com/1/2/3/")) is REJECT
    assert rule.decide(curi("http://a.com/1/2?q=/4/5/6/7")) is NONE


def test_regex_rules_full_match() -> None:
    rule = MatchesRegexDecideRule(MatchesRegexParams(regex=r".*\.pdf", decision="REJECT"))
    assert rule.decide(curi("http://a.com/x.pdf")) is REJECT
    assert rule.decide(curi("http://a.com/x.pdf?download")) is NONE
    not_rule = NotMatchesRegexDecideRule(
        MatchesRegexParams(regex=r"https?://a\.com/.*", decision="REJECT")
    )
    assert not_rule.decide(curi("http://a.com/x")) is NONE
    assert not_rule.decide(curi("http://b.com/x")) is REJECT


def test_matches_list_regex_or_and() -> None:
    model = MatchesListRegexParams
    any_rule = MatchesListRegexDecideRule(
        model(regex_list=[r".*\.jpg", r".*/cal/.*"], decision="REJECT")
    )
    assert any_rule.decide(curi("http://a.com/x.jpg")) is REJECT
    assert any_rule.decide(curi("http://a.com/cal/2020")) is REJECT
    assert any_rule.decide(curi("http://a.com/x.html")) is NONE
    all_rule = MatchesListRegexDecideRule(
        model(regex_list=[r".*\.jpg", r".*/img/.*"], list_logical_or=False)
    )
    assert all_rule.decide(curi("http://a.com/img/x.jpg")) is ACCEPT
    assert all_rule.decide(curi("http://a.com/x.jpg")) is NONE
    assert MatchesListRegexDecideRule().decide(curi("http://a.com/")) is NONE
    not_rule = NotMatchesListRegexDecideRule(model(regex_list=[r".*\.jpg"]))
    assert not_rule.decide(curi("http://a.com/x.html")) is ACCEPT


@pytest.mark.parametrize(
    "rule_class",
    [MatchesRegexDecideRule, HopsPathMatchesRegexDecideRule, ContentTypeMatchesRegexDecideRule],
)
def test_invalid_regex_fails_validation(rule_class: type[MatchesRegexDecideRule]) -> None:
    with pytest.raises(ValidationError, match="invalid regular expression"):
        rule_class.params_model.model_validate({"regex": "(unclosed"})


def test_invalid_regex_in_list_and_bad_decision_fail_validation() -> None:
    with pytest.raises(ValidationError, match="invalid regular expression"):
        MatchesListRegexDecideRule.params_model.model_validate({"regex_list": ["ok", "[bad"]})
    with pytest.raises(ValidationError):
        AcceptDecideRule.params_model.model_validate({"decision": "ACCEPT"})
    with pytest.raises(ValidationError):
        TooManyHopsDecideRule.params_model.model_validate({"decision": "MAYBE"})


def test_scheme_not_in_set() -> None:
    rule = SchemeNotInSetDecideRule()
    assert rule.decide(curi("https://a.com/")) is NONE
    assert rule.decide(curi("dns:a.com")) is NONE
    assert rule.decide(curi("gopher://a.com/")) is REJECT
    narrow = SchemeNotInSetDecideRule(SchemeNotInSetParams(schemes=["HTTPS"]))
    assert narrow.decide(curi("http://a.com/")) is REJECT


def test_on_domains_includes_subdomains() -> None:
    model = OnDomainsParams
    rule = OnDomainsDecideRule(model(domains=["www.example.com", "https://Other.org/x"]))
    assert rule.decide(curi("http://example.com/")) is ACCEPT
    assert rule.decide(curi("https://a.b.example.com:8443/")) is ACCEPT
    assert rule.decide(curi("http://sub.other.org/")) is ACCEPT
    assert rule.decide(curi("http://notexample.com/")) is NONE
    assert rule.decide(curi("http://example.com.evil.net/")) is NONE
    not_rule = NotOnDomainsDecideRule(model(domains=["example.com"], decision="REJECT"))
    assert not_rule.decide(curi("http://cdn.example.com/")) is NONE
    assert not_rule.decide(curi("http://elsewhere.net/")) is REJECT
    with pytest.raises(ValidationError, match="not a host name"):
        model(domains=["bad host.com"])


def test_on_hosts_is_exact() -> None:
    model = OnHostsParams
    rule = OnHostsDecideRule(model(hosts=["Example.com"]))
    assert rule.decide(curi("http://example.com:81/")) is ACCEPT
    assert rule.decide(curi("http://www.example.com/")) is NONE
    assert (
        NotOnHostsDecideRule(model(hosts=["example.com"])).decide(curi("http://x.com/")) is ACCEPT
    )


def test_hops_content_type_and_status_rules() -> None:
    hops = HopsPathMatchesRegexDecideRule(
        HopsPathMatchesRegexParams(regex=".*X.*", decision="REJECT")
    )
    assert hops.decide(curi("http://a.com/", "LXE")) is REJECT
    assert hops.decide(curi("http://a.com/", "LLE")) is NONE
    model = ContentTypeRegexParams
    ctype = ContentTypeMatchesRegexDecideRule(model(regex="text/html.*"))
    assert ctype.decide(curi("http://a.com/", content_type="text/html; charset=utf-8")) is ACCEPT
    assert ctype.decide(curi("http://a.com/", content_type="image/png")) is NONE
    assert ctype.decide(curi("http://a.com/")) is NONE
    not_ctype = ContentTypeNotMatchesRegexDecideRule(model(regex="text/.*", decision="REJECT"))
    assert not_ctype.decide(curi("http://a.com/", content_type="image/png")) is REJECT
    status = FetchStatusDecideRule(FetchStatusParams(statuses=[404, -1]))
    assert status.decide(curi("http://a.com/", status=404)) is ACCEPT
    assert status.decide(curi("http://a.com/", status=200)) is NONE


def test_surt_prefixed_from_seeds_file_and_via(tmp_path: Path) -> None:
    (tmp_path / "surts.txt").write_text("# extra\n+http://(org,extra,)/keep/\nthird.net\n")
    model = SurtPrefixedParams
    rule = SurtPrefixedDecideRule(model(surts_file="surts.txt", also_check_via=True))
    ctx = RuleContext(seeds=["http://example.com/", "https://docs.site.org/guide/intro.html"])
    assert rule.decide(curi("http://example.com/a")) is NONE  # not bound yet: no prefixes
    rule.bind(RuleContext(seeds=ctx.seeds, base_dir=str(tmp_path)))
    assert rule.decide(curi("http://example.com/a")) is ACCEPT
    assert rule.decide(curi("https://example.com/a")) is ACCEPT  # http and https alike
    assert rule.decide(curi("http://sub.example.com/")) is NONE  # seed with '/' = that host
    assert rule.decide(curi("http://docs.site.org/guide/x/y")) is ACCEPT
    assert rule.decide(curi("http://docs.site.org/other")) is NONE
    assert rule.decide(curi("http://extra.org/keep/1")) is ACCEPT
    assert rule.decide(curi("http://www.third.net/")) is ACCEPT
    assert rule.decide(curi("http://cdn.net/x", "LE", via="http://example.com/")) is ACCEPT
    negative = NotSurtPrefixedDecideRule(model(decision="REJECT"))
    negative.bind(ctx)
    assert negative.decide(curi("http://elsewhere.com/")) is REJECT
    assert negative.decide(curi("http://example.com/")) is NONE


def test_surt_prefixed_missing_file_fails_at_bind(tmp_path: Path) -> None:
    rule = SurtPrefixedDecideRule(SurtPrefixedParams(surts_file="nope.txt"))
    with pytest.raises(OSError):
        rule.bind(RuleContext(base_dir=str(tmp_path)))


def test_realistic_scope_sequence() -> None:
    rules: list[DecideRule[Any]] = [
        RejectDecideRule(),
        SurtPrefixedDecideRule(),
        TooManyHopsDecideRule(TooManyHopsParams(max_hops=3)),
        TransclusionDecideRule(),
        PathologicalPathDecideRule(),
        PrerequisiteAcceptDecideRule(),
    ]
    scope = DecideRuleSequence(rules)
    scope.bind(RuleContext(seeds=["http://example.com"]))
    cases = {
        ("http://example.com/", ""): ACCEPT,
        ("http://www.example.com/page", "L"): ACCEPT,
        ("http://elsewhere.org/", "L"): REJECT,
        ("http://cdn.elsewhere.org/logo.png", "LE"): ACCEPT,  # embedded off-site
        ("http://cdn.elsewhere.org/a.css", "LEEE"): REJECT,
        ("http://example.com/deep", "LLLL"): REJECT,  # too many hops
        ("http://example.com/robots.txt", "LLLLP"): ACCEPT,  # prerequisite wins last
        ("dns:elsewhere.org", "LP"): ACCEPT,
        ("http://example.com/a/a/a/", "L"): REJECT,
    }
    for (uri, hops), expected in cases.items():
        assert scope.decide(curi(uri, hops)) is expected, (uri, hops)


def test_seed_list_directives_feed_accept_and_reject_rules() -> None:
    seeds = [
        "http://example.com/",
        "+http://(org,partner,",
        "-http://(com,example,)/private/",
    ]
    ctx = RuleContext(seeds=seeds)
    accept = SurtPrefixedDecideRule()
    reject = SurtPrefixedDecideRule(
        SurtPrefixedParams(decision="REJECT", seeds_as_surt_prefixes=False)
    )
    accept.bind(ctx)
    reject.bind(ctx)
    assert accept.decide(curi("http://www.partner.org/")) is ACCEPT
    assert accept.decide(curi("http://example.com/private/x")) is ACCEPT
    assert reject.decide(curi("http://example.com/private/x")) is REJECT
    assert reject.decide(curi("http://example.com/public")) is NONE
    assert reject.decide(curi("http://www.partner.org/")) is NONE
    rules: list[DecideRule[Any]] = [RejectDecideRule(), accept, reject]
    scope = DecideRuleSequence(rules)
    assert scope.decide(curi("http://example.com/private/x")) is REJECT
    assert scope.decide(curi("http://example.com/public")) is ACCEPT


def test_a_seed_added_while_running_widens_seed_prefix_rules_only() -> None:
    ctx = RuleContext(seeds=["http://example.com/"])
    accept = SurtPrefixedDecideRule()
    directives_only = SurtPrefixedDecideRule(SurtPrefixedParams(seeds_as_surt_prefixes=False))
    scope = DecideRuleSequence([RejectDecideRule(), accept, directives_only])
    scope.bind(ctx)
    before = accept.prefixes
    scope.seed_added("https://example.com/moved/")  # already under the seed's prefix
    assert accept.prefixes is before
    scope.seed_added("http://www.example.org/")
    assert accept.prefixes is not before and len(before) == 1  # copied, not changed in place
    assert scope.decide(curi("http://www.example.org/page", "RL")) is ACCEPT
    assert scope.decide(curi("http://example.org/page", "RL")) is REJECT
    assert directives_only.decide(curi("http://www.example.org/page")) is NONE
    scope.seed_added("not a uri at all")  # ignored
