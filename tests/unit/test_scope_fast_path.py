"""The scope's fast path decides exactly as asking every rule in order.

A DecideRuleSequence asks its rules from the last backwards, works the rules that read only the
hops out once per hop combination, and calls predicated rules' tests directly; a SURT prefix set
answers per authority from a memo; the trap budget skips the template of a URI that cannot be in
its via's series. Each is checked here against the plain way over generated candidates: the
default order's scope in a simulated crawl (decisions, deciding rule indexes as scope.log shows
them, trap annotations and series data, the trap budgets spent), sheets that change a hops rule
for some sites, a rule subclass with its own test, prefix sets of every kind of seed, and the
URL templates the trap budget's shortcut relies on.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from crawler import CrawlURI, DecideResult, RuleContext, build_rules
from crawler.decide import (
    RejectDecideRule,
    SeedAcceptDecideRule,
    TransclusionDecideRule,
    TrapBudgetDecideRule,
)
from crawler.decide.decide_rule import PLANS_KEPT, DecideRuleSequence
from crawler.decide.url_template import (
    _origin_and_rest,
    _template_of,
    template_head,
    url_template,
)
from crawler.order.loader import load_order
from crawler.order.schema import SheetConfig
from crawler.sheets import SheetOverlays
from crawler.surt import SurtPrefixSet, coerce_http, surt, surt_prefix_from_seed
from crawler.urls import UriError, normalize

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"

pytestmark = pytest.mark.timeout(60)

SEEDS = [
    "http://seed.example/",
    "https://www.other.org/",
    "http://deep.example/docs/index.html",
    "example.net",
    "http://10.1.2.3:8080/",
]
HOSTS = [
    "seed.example",
    "www.seed.example",
    "www.other.org",
    "other.org",
    "deep.example",
    "a.example.net",
    "example.net",
    "10.1.2.3:8080",
    "elsewhere.com",
    "user@seed.example",
    "SEED.example:81",
]
SEGMENTS = ["a", "b", "docs", "Docs", "p1", "2026", "jan", "cal", "x", "img", "07"]
HOPS = "LLLLLEEEERRXPMIS"


def random_uri(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.03:
        return f"dns:{rng.choice(HOSTS)}"
    if kind < 0.05:
        return "mailto:someone@seed.example"
    scheme = rng.choice(["http", "http", "https", "https", "ftp"])
    depth = rng.choice([0, 1, 2, 3, 4, 6, 12, 22])
    segments = [rng.choice(SEGMENTS) for _ in range(depth)]
    if segments and rng.random() < 0.2:  # a relative-link trap: /x/y/x/y/x/y/
        segments = segments[:2] * 4
    path = "/" + "/".join(segments)
    if rng.random() < 0.3:
        path += f"/page{rng.randrange(40)}.html"
    if rng.random() < 0.2:
        path += f"?page={rng.randrange(9)}&date=2026-0{rng.randrange(1, 10)}-05"
    if rng.random() < 0.05:
        path += "#top"
    return f"{scheme}://{rng.choice(HOSTS)}{path}"


def as_candidate(raw: str) -> str:
    """``raw`` normalized; as it is when it cannot be (an ftp: or mailto: link: the scope
    still answers for it, as for a prerequisite)."""
    try:
        return normalize(raw)
    except UriError:
        return raw


def next_in_series(rng: random.Random, uri: str) -> str:
    """``uri`` with its numbers moved on (the next page, month or day of a calendar)."""
    out: list[str] = []
    digits = ""
    step = rng.choice([1, 1, 2, -1])
    for ch in uri + " ":
        if ch.isdigit():
            digits += ch
            continue
        if digits:
            out.append(str(max(0, int(digits) + step)))
            digits = ""
        out.append(ch)
    return "".join(out[:-1])


def links_of(rng: random.Random, parent: CrawlURI) -> list[tuple[str, str]]:
    links: list[tuple[str, str]] = []
    for _ in range(rng.randint(2, 7)):
        raw = (
            next_in_series(rng, parent.uri)
            if rng.random() < 0.45 and any(c.isdigit() for c in parent.uri)
            else random_uri(rng)
        )
        links.append((as_candidate(raw), rng.choice(HOPS)))
    return links


class EveryTemplateTrapBudget(TrapBudgetDecideRule):
    """The trap budget working out the template of every candidate (no shortcut)."""

    @staticmethod
    def _outside_series(uri: str, via_template: str | None, via_head: str) -> bool:
        return False


def scope_of(overrides: list[str], plain: bool = False) -> DecideRuleSequence:
    """The example order's scope; ``plain``: its trap budget works out every template."""
    order = load_order(EXAMPLE, overrides)
    scope = build_rules(order.scope, "scope")
    if plain:
        scope = DecideRuleSequence(
            [
                EveryTemplateTrapBudget(rule.params)
                if isinstance(rule, TrapBudgetDecideRule)
                else rule
                for rule in scope.rules
            ]
        )
    scope.bind(RuleContext(seeds=SEEDS, base_dir=str(ROOT)))
    return scope


def crawl(scope: DecideRuleSequence, fast: bool, decisions: int) -> list[tuple[Any, ...]]:
    """A depth-first crawl of generated links, every candidate decided by the fast path or by
    asking every rule in order; the record of each decision."""
    rng = random.Random(7)
    stack = [CrawlURI(normalize(s if "://" in s else "http://" + s), is_seed=True) for s in SEEDS]
    record: list[tuple[Any, ...]] = []
    while stack and len(record) < decisions:
        parent = stack.pop()
        for uri, hop in links_of(rng, parent):
            child = parent.create_child(uri, hop)
            child.is_seed = rng.random() < 0.02
            if rng.random() < 0.1:
                child.seed_max_hops = rng.randrange(6)
            decision, index = scope.decide_with_rule(child) if fast else scope.decide_each(child)
            record.append(
                (uri, child.hop_path, decision, index, tuple(child.annotations), child.data)
            )
            if decision is DecideResult.ACCEPT and child.hop_path[-1:] in "LRE":
                stack.append(child)
    return record


def trap_state(scope: DecideRuleSequence) -> list[Any]:
    return [
        (rule.state(), rule.report())
        for rule in scope.rules
        if isinstance(rule, TrapBudgetDecideRule)
    ]


@pytest.mark.parametrize(
    "overrides",
    [
        [],
        [
            "scope.2.params.max_hops=40",
            "scope.8.params.max_series_length=4",
            "scope.8.params.max_series_uris=3",
            "scope.8.params.max_uris_per_template=6",
            "scope.8.params.series_only=false",
        ],
        ["scope.8.params.max_uris_per_template=5", "scope.8.params.max_series_length=6"],
    ],
    ids=["default", "tight-budgets", "template-cap"],
)
def test_the_default_scope_decides_as_asking_every_rule_in_order(overrides: list[str]) -> None:
    fast_scope, plain_scope = scope_of(overrides), scope_of(overrides, plain=True)
    fast = crawl(fast_scope, True, 6000)
    plain = crawl(plain_scope, False, 6000)
    assert len(fast) >= 6000
    for got, want in zip(fast, plain, strict=True):
        assert got == want
    assert trap_state(fast_scope) == trap_state(plain_scope)
    # Not vacuous: every rule of the default scope decided something, both ways.
    deciding = {index for _, _, _, index, _, _ in fast}
    assert deciding >= {0, 1, 2, 3, 4, 5, 6, 7}
    if overrides:
        assert 8 in deciding
        assert any(notes for _, _, _, _, notes, _ in fast)


def test_plain_decide_agrees_with_the_deciding_rule() -> None:
    fast_scope, plain_scope = scope_of([]), scope_of([], plain=True)
    rng = random.Random(3)
    parent = CrawlURI("http://seed.example/p1.html", hop_path="LL")
    for _ in range(3000):
        child = parent.create_child(as_candidate(random_uri(rng)), rng.choice(HOPS))
        twin = parent.create_child(child.uri, child.hop_path[-1])
        assert fast_scope.decide(child) is plain_scope.decide_each(twin)[0]


def test_a_sheet_changing_the_hop_limit_of_one_site_is_obeyed() -> None:
    order = load_order(EXAMPLE, [])
    scope = build_rules(order.scope, "scope")
    scope.bind(RuleContext(seeds=SEEDS, base_dir=str(ROOT)))
    sheet = SheetConfig.model_validate(
        {
            "name": "short",
            "hosts": ["seed.example"],
            "settings": {"scope.TooManyHopsDecideRule.params.max_hops": 2},
        }
    )
    sheets = SheetOverlays(order, [])
    for index, rule in enumerate(scope.rules):
        rule.attach_sheets(sheets, index)
    parent = CrawlURI("http://www.other.org/a", hop_path="LL")
    # Without sheets in force, a plan is made for the hops "LLL" and kept ...
    other = parent.create_child("http://www.other.org/b", "L")
    assert scope.decide_with_rule(other) == (DecideResult.ACCEPT, 1)
    # ... and a sheet put in force later applies to the URIs of its site alone.
    sheets.replace([sheet])
    on_site = parent.create_child("http://seed.example/b", "L")
    assert scope.decide_with_rule(on_site) == (DecideResult.REJECT, 2)
    assert scope.decide_each(on_site) == (DecideResult.REJECT, 2)
    assert scope.decide_with_rule(other) == (DecideResult.ACCEPT, 1)
    sheets.replace([])
    assert scope.decide_with_rule(on_site) == (DecideResult.ACCEPT, 1)


class UriTransclusion(TransclusionDecideRule):
    """A subclass whose test reads the URI: it must not be worked out once per hop path."""

    def evaluate(self, curi: CrawlURI) -> bool:
        return curi.uri.endswith(".png")


def test_a_subclass_with_its_own_test_is_asked_for_every_uri() -> None:
    scope = DecideRuleSequence([TransclusionDecideRule(), UriTransclusion()])
    parent = CrawlURI("http://seed.example/", hop_path="L")
    image = parent.create_child("http://seed.example/i.png", "L")
    page = parent.create_child("http://seed.example/p.html", "L")
    assert scope.decide_with_rule(image) == (DecideResult.ACCEPT, 1)
    assert scope.decide_with_rule(page) == (DecideResult.NONE, -1)
    assert scope.decide(image) is DecideResult.ACCEPT


def test_plans_are_bounded() -> None:
    scope = scope_of([])
    parent = CrawlURI("http://seed.example/", hop_path="")
    for n in range(PLANS_KEPT + 10):
        child = parent.create_child("http://seed.example/a", "L")
        child.hops_dropped = n
        scope.decide(child)
    assert len(scope._plans) <= PLANS_KEPT


PREFIX_ENTRIES = [
    "http://seed.example/",
    "https://www.other.org/",
    "http://deep.example/docs/index.html",
    "http://deep.example/Docs/",
    "example.net",
    "http://10.1.2.3:8080/",
    "http://[2001:db8::1]/v6/",
    "+http://(com,elsewhere,",
    "+(org,other,)/x",
    "http://user@seed.example:81/",
    "seed.example/a/b/",
]


def test_a_prefix_set_answers_each_uri_as_its_surt_does() -> None:
    rng = random.Random(11)
    uris = [random_uri(rng) for _ in range(4000)] + [
        "http://[2001:db8::1]/v6/a",
        "http://[2001:db8::1]/v7",
        "http://deep.example/DOCS/x",
        "http://deep.example",
        "http://seed.example?q=1",
        "dns:seed.example",
        "seed.example/a/b/c",
    ]
    for size in range(1, len(PREFIX_ENTRIES) + 1):
        prefixes = SurtPrefixSet()
        prefixes.import_lines(PREFIX_ENTRIES[:size])
        for _ in range(2):  # the second round answers from the memo
            for uri in uris:
                assert prefixes.matches_uri(uri) is prefixes.matches(coerce_http(surt(uri))), uri
    # A prefix added after answers were kept is seen at once.
    prefixes = SurtPrefixSet([surt_prefix_from_seed("http://seed.example/")])
    assert not prefixes.matches_uri("http://elsewhere.com/a")
    prefixes.add(surt_prefix_from_seed("elsewhere.com"))
    assert prefixes.matches_uri("http://elsewhere.com/a")
    assert prefixes.copy().matches_uri("https://www.elsewhere.com/b")


def test_a_uri_whose_head_differs_has_another_template() -> None:
    rng = random.Random(5)
    uris = [random_uri(rng) for _ in range(3000)] + [
        "http://h#x/1",
        "http://h/#1",
        "http://h",
        "h/1",
        "//h/2",
        "http://h/a//b/3",
        "file:///x/1",
        "http://h/-1?x=-2",
    ]
    uris += [next_in_series(rng, uri) for uri in uris]
    by_template: dict[str, list[str]] = {}
    for uri in uris:
        template = url_template(uri)
        head = template_head(uri)
        if head is None:
            assert template is None, uri
            continue
        assert uri.startswith(head), uri
        if template is not None:
            assert template.startswith(head), uri
            by_template.setdefault(template, []).append(uri)
    # URIs sharing a template share a head: a different head means another template.
    assert any(len(same) > 1 for same in by_template.values())
    for template, same in by_template.items():
        assert {template_head(uri) for uri in same} == {template_head(same[0])}, template


def test_a_seed_and_a_non_seed_with_the_same_hops_get_their_own_answers() -> None:
    scope = DecideRuleSequence([RejectDecideRule(), SeedAcceptDecideRule()])
    parent = CrawlURI("http://seed.example/", is_seed=True)
    seed = parent.create_child("http://moved.example/", "R")
    seed.is_seed = True
    other = parent.create_child("http://moved.example/", "R")
    assert scope.decide_with_rule(seed) == (DecideResult.ACCEPT, 1)
    assert scope.decide_with_rule(other) == (DecideResult.REJECT, 0)
    assert scope.decide(seed) is DecideResult.ACCEPT


def test_a_path_shaped_from_its_digit_free_form_has_the_full_template() -> None:
    rng = random.Random(13)
    alphabet = [*"0123456789-{}n/abcdejfmrpyulgsotvJANFEBSEPx?=&#.", "jan", "Sept", "-1", "{n}"]
    uris = [random_uri(rng) for _ in range(3000)]
    for _ in range(20000):
        body = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        uris.append(rng.choice(["http://h", "https://a.b:8", "http://h/"]) + "/" + body)
    for _ in range(2):  # the second round from the remembered shapes
        for uri in uris:
            parts = _origin_and_rest(uri)
            full = None if parts is None else _template_of(*parts)
            assert url_template(uri) == full, uri
    assert (
        url_template("http://h/cal/2026/jan/-3/p7.html") == "http://h/cal/{n}/{mon}/{n}/p{n}.html"
    )
