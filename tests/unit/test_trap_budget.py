"""URL templates and TrapBudgetDecideRule: endless series are cut at the budget, nothing else is."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from support.processor_context import make_context

from crawler import CrawlURI, DecideResult, DecideRuleSequence, Link, ManualClock
from crawler.decide import (
    PrerequisiteAcceptDecideRule,
    RejectDecideRule,
    RuleContext,
    SurtPrefixedDecideRule,
    TrapBudgetDecideRule,
    TrapBudgetParams,
)
from crawler.decide.url_template import url_template
from processors.postprocess import CandidatesParams, CandidatesProcessor

pytestmark = pytest.mark.timeout(30)


@pytest.mark.parametrize(
    ("uri", "template"),
    [
        ("http://h/calendar/2026/01", "http://h/calendar/{n}/{n}"),
        ("http://h/calendar?month=-3", "http://h/calendar?month={n}"),
        ("http://h/list?page=7&sort=name", "http://h/list?page={n}&sort=name"),
        ("http://h/list?sort=name&page=8", "http://h/list?page={n}&sort=name"),
        ("http://h/events?date=2026-01-05", "http://h/events?date={n}-{n}-{n}"),
        ("http://h/events?date=5-Jan-2026", "http://h/events?date={n}-{mon}-{n}"),
        ("http://h/item/123/456#top", "http://h/item/{n}/{n}"),
        ("http://h/story-123.html", "http://h/story-{n}.html"),
        ("http://127.0.0.1:8080/p/1", "http://127.0.0.1:8080/p/{n}"),
        ("http://h/archive/march/", "http://h/archive/{mon}/"),
    ],
)
def test_templates_replace_numbers_and_months(uri: str, template: str) -> None:
    assert url_template(uri) == template


@pytest.mark.parametrize(
    "uri", ["http://h/about.html", "http://10.0.0.1:81/", "http://h/a/b?q=x", "http://h"]
)
def test_uris_without_changing_parts_have_no_template(uri: str) -> None:
    assert url_template(uri) is None


def link(uri: str, hops: str = "L", via: str | None = None) -> CrawlURI:
    """A candidate found on a page of its own series (its via shares its template) by default."""
    return CrawlURI(uri, via=uri if via is None else via, hop_path=hops)


def test_numbered_pages_found_outside_their_series_always_pass() -> None:
    rule = TrapBudgetDecideRule(TrapBudgetParams(max_uris_per_template=3))
    # /item/N listed on /list?page=1 (another template) and on the home page: never counted.
    items = [link(f"http://h/item/{n}", via="http://h/list?page=1") for n in range(10)]
    items += [link(f"http://h/item/{n}", via="http://h/") for n in range(10, 20)]
    assert all(rule.decide(c) is DecideResult.ACCEPT for c in items)
    # The list's own pages link to the next page: a series, held to the budget.
    pages = [
        link(f"http://h/list?page={n}", via=f"http://h/list?page={n - 1}") for n in range(2, 7)
    ]
    assert [rule.decide(c) for c in pages] == [DecideResult.ACCEPT] * 3 + [DecideResult.REJECT] * 2
    # An item linking to the next item is a series too.
    chained = [link(f"http://h/item/{n}", via=f"http://h/item/{n - 1}") for n in range(30, 35)]
    assert [rule.decide(c) for c in chained].count(DecideResult.REJECT) == 2


def test_series_only_off_counts_every_numbered_uri() -> None:
    rule = TrapBudgetDecideRule(TrapBudgetParams(max_uris_per_template=3, series_only=False))
    items = [link(f"http://h/item/{n}", via="http://h/list") for n in range(5)]
    assert [rule.decide(c) for c in items].count(DecideResult.REJECT) == 2


def test_the_budget_counts_distinct_uris_per_template() -> None:
    rule = TrapBudgetDecideRule(TrapBudgetParams(max_uris_per_template=3))
    first = [link(f"http://h/cal/{m}") for m in range(3)]
    assert [rule.decide(c) for c in first] == [DecideResult.ACCEPT] * 3
    # Asked again (the same month linked from another page): still let through.
    assert rule.decide(link("http://h/cal/1")) is DecideResult.ACCEPT
    over = link("http://h/cal/3")
    assert rule.decide(over) is DecideResult.REJECT
    assert over.annotations == ["trap:http://h/cal/{n}"]
    # Other templates and other hosts have budgets of their own.
    assert rule.decide(link("http://h/page?n=3")) is DecideResult.ACCEPT
    assert rule.decide(link("http://other/cal/3")) is DecideResult.ACCEPT
    assert rule.decide(link("http://h/about.html")) is DecideResult.ACCEPT
    assert rule.rejected == 1
    assert rule.top_templates(5) == [("http://h/cal/{n}", 1)]


def test_seeds_prerequisites_and_sitemap_links_are_never_rejected() -> None:
    rule = TrapBudgetDecideRule(TrapBudgetParams(max_uris_per_template=1))
    assert rule.decide(link("http://h/robots1.txt")) is DecideResult.ACCEPT
    assert rule.decide(link("http://h/robots2.txt", "LP")) is DecideResult.ACCEPT
    assert rule.decide(CrawlURI("http://h/robots3.txt", is_seed=True)) is DecideResult.ACCEPT
    assert rule.decide(link("http://h/robots4.txt", "PMM")) is DecideResult.ACCEPT
    assert rule.decide(link("http://h/robots5.txt")) is DecideResult.REJECT
    strict = TrapBudgetDecideRule(
        TrapBudgetParams(max_uris_per_template=1, exempt_sitemap_links=False)
    )
    assert strict.decide(link("http://h/item/1", "PMM")) is DecideResult.ACCEPT
    assert strict.decide(link("http://h/item/2", "PMM")) is DecideResult.REJECT


def test_zero_budget_turns_the_rule_off() -> None:
    rule = TrapBudgetDecideRule(TrapBudgetParams(max_uris_per_template=0))
    assert all(rule.decide(link(f"http://h/p/{i}")) is DecideResult.ACCEPT for i in range(100))


def test_memory_is_bounded_by_max_templates() -> None:
    rule = TrapBudgetDecideRule(TrapBudgetParams(max_uris_per_template=1, max_templates=2))
    for name in ("a", "b", "c"):
        assert rule.decide(link(f"http://h/{name}/1")) is DecideResult.ACCEPT
    assert len(rule.state()["templates"]) == 2
    # /a/ was forgotten (least recently used): its budget starts again.
    assert rule.decide(link("http://h/a/2")) is DecideResult.ACCEPT
    assert rule.decide(link("http://h/c/2")) is DecideResult.REJECT


def test_state_survives_a_restore() -> None:
    rule = TrapBudgetDecideRule(TrapBudgetParams(max_uris_per_template=2))
    for m in range(3):
        rule.decide(link(f"http://h/cal/{m}"))
    again = TrapBudgetDecideRule(TrapBudgetParams(max_uris_per_template=2))
    again.restore(rule.state())
    assert again.decide(link("http://h/cal/1")) is DecideResult.ACCEPT
    assert again.decide(link("http://h/cal/9")) is DecideResult.REJECT
    assert again.rejected == 2
    with pytest.raises(ValueError, match="trap budget state"):
        again.restore({"templates": [["x", [1]]]})


def test_threads_never_let_more_than_the_budget_through() -> None:
    rule = TrapBudgetDecideRule(TrapBudgetParams(max_uris_per_template=30))
    accepted: list[str] = []
    lock = threading.Lock()

    def work(start: int) -> None:
        for m in range(start, 400, 4):
            uri = f"http://h/cal/{m}"
            if rule.decide(link(uri)) is DecideResult.ACCEPT:
                with lock:
                    accepted.append(uri)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(accepted) == 30
    assert rule.rejected == 370


def scope(budget: int) -> DecideRuleSequence:
    seq = DecideRuleSequence(
        [
            RejectDecideRule(),
            TrapBudgetDecideRule(TrapBudgetParams(max_uris_per_template=budget)),
            SurtPrefixedDecideRule(),
            PrerequisiteAcceptDecideRule(),
        ]
    )
    seq.bind(RuleContext(seeds=["http://site.example/"]))
    return seq


def test_the_sequence_asks_the_budget_only_about_what_it_accepts() -> None:
    seq = scope(budget=2)
    # Out-of-scope links spend no budget.
    for m in range(5):
        assert seq.decide(link(f"http://off.example/cal/{m}")) is DecideResult.REJECT
    assert seq.decide(link("http://site.example/cal/1")) is DecideResult.ACCEPT
    assert seq.decide_with_rule(link("http://site.example/cal/2")) == (DecideResult.ACCEPT, 2)
    assert seq.decide_with_rule(link("http://site.example/cal/3")) == (DecideResult.REJECT, 1)
    trap = seq.rules[1]
    assert isinstance(trap, TrapBudgetDecideRule) and trap.rejected == 1


def calendar_page(month: int) -> CrawlURI:
    return CrawlURI(
        f"http://site.example/cal/{month}",
        via="http://site.example/",
        hop_path="L",
        status=200,
        outlinks=[Link(f"http://site.example/cal/{month + 1}", "L")],
    )


def test_candidates_log_trap_rejections_to_scope_log_and_report_them(tmp_path: Path) -> None:
    scheduled: list[str] = []
    ctx = make_context(
        tmp_path,
        clock=ManualClock(1_700_000_000.25),
        scope=scope(budget=3),
        schedule=lambda curi: scheduled.append(curi.uri) is None,
    )
    proc = CandidatesProcessor("candidates", CandidatesParams())
    proc.start(ctx)
    for month in range(5):
        proc.process(calendar_page(month))
    report = "\n".join(proc.report())
    proc.stop()
    assert scheduled == [f"http://site.example/cal/{m}" for m in (1, 2, 3)]
    lines = (tmp_path / "logs" / "scope.log").read_text().splitlines()
    assert lines == [
        f"2023-11-14T22:13:20.250Z 1 TrapBudgetDecideRule REJECT http://site.example/cal/{m}"
        ' {"status":-5000,"annotations":"trap:http://site.example/cal/{n}"}'
        for m in (4, 5)
    ]
    assert "candidates out of scope: 2" in report
    assert "candidates over a trap budget: 2 (1 templates)" in report
    assert "    2 http://site.example/cal/{n}" in report
    # The budgets spent are saved in the state directory and read back on a resumed start.
    proc2 = CandidatesProcessor("candidates", CandidatesParams())
    ctx2 = make_context(tmp_path, scope=scope(budget=3), schedule=lambda curi: True)
    proc2.start(ctx2)
    trap = ctx2.scope.rules[1]
    assert isinstance(trap, TrapBudgetDecideRule)
    assert trap.rejected == 2
    assert trap.decide(link("http://site.example/cal/7")) is DecideResult.REJECT
    proc2.stop()


def test_no_scope_log_without_trap_rejections_or_when_not_asked(tmp_path: Path) -> None:
    ctx = make_context(tmp_path, scope=scope(budget=1), schedule=lambda curi: True)
    proc = CandidatesProcessor("candidates", CandidatesParams(log_trap_rejections=False))
    proc.start(ctx)
    for month in range(3):
        proc.process(calendar_page(month))
    proc.stop()
    assert not (tmp_path / "logs" / "scope.log").exists()
    assert "candidates out of scope: 2" in "\n".join(proc.report())


def test_a_series_is_cut_after_max_series_length_uris_in_a_row() -> None:
    rule = TrapBudgetDecideRule(TrapBudgetParams(max_series_length=5))
    page = CrawlURI("http://h/", hop_path="")
    page.is_seed = True
    decisions = []
    for month in range(10):
        child = page.create_child(f"http://h/calendar/2026/{month}", "L")
        decisions.append(rule.decide(child))
        if decisions[-1] is DecideResult.REJECT:
            break
        # The frontier stores and reloads the URI before it is fetched and its links scoped.
        page = CrawlURI.from_bytes(child.to_bytes())
    # Month 0 enters the series from the home page; months 1-5 continue it; 6 would be the 6th.
    assert decisions == [DecideResult.ACCEPT] * 6 + [DecideResult.REJECT]
    assert "trap:http://h/calendar/{n}/{n}" in child.annotations


def test_numbered_pages_linking_each_other_are_never_a_series_past_their_depth() -> None:
    """A site of 1000 numbered pages, each linking ten others, reached from its home page: every
    page is found within a few steps, far below the budget, so none is rejected."""
    rule = TrapBudgetDecideRule(TrapBudgetParams(max_series_length=5))
    home = CrawlURI("http://h/", hop_path="")
    home.is_seed = True
    frontier = [home.create_child(f"http://h/p/{n}.html", "L") for n in range(10)]
    seen = {c.uri for c in frontier}
    assert all(rule.decide(c) is DecideResult.ACCEPT for c in frontier)
    while frontier:
        page = frontier.pop(0)
        n = int(page.uri.rsplit("/", 1)[1].split(".")[0])
        for k in range(1, 11):
            uri = f"http://h/p/{(n * 10 + k) % 1000}.html"
            if uri in seen:
                continue
            child = page.create_child(uri, "L")
            assert rule.decide(child) is DecideResult.ACCEPT
            seen.add(uri)
            frontier.append(child)
    assert len(seen) == 1000


def _month(index: int) -> str:
    return f"http://h/calendar/{index // 12}/{index % 12 + 1:02d}"


def crawl_calendar(rule: TrapBudgetDecideRule, entry: int = 2026 * 12) -> set[str]:
    """A breadth-first crawl of a calendar whose every month links the next and previous month
    and year, entered from a home page; each URI goes through the frontier's storage (bytes)
    before its links are scoped. Returns the months accepted."""
    home = CrawlURI("http://h/", hop_path="")
    home.is_seed = True
    first = home.create_child(_month(entry), "L")
    assert rule.decide(first) is DecideResult.ACCEPT
    queue, accepted = [CrawlURI.from_bytes(first.to_bytes())], {first.uri}
    while queue:
        page = queue.pop(0)
        year, month = (int(x) for x in page.uri.rsplit("/", 2)[1:])
        index = year * 12 + month - 1
        for step in (1, -1, 12, -12):
            uri = _month(index + step)
            if uri in accepted:
                continue  # the frontier saw it: the scope is not asked again
            child = page.create_child(uri, "L")
            if rule.decide(child) is DecideResult.ACCEPT:
                accepted.add(uri)
                queue.append(CrawlURI.from_bytes(child.to_bytes()))
    return accepted


def test_a_calendar_in_two_dimensions_ends_within_its_area_budget() -> None:
    months = crawl_calendar(TrapBudgetDecideRule())
    # The first month, the 24 months within 3 steps of it, then 60 more.
    assert len(months) == 1 + 24 + 60
    # Without the area budget the length alone lets hundreds through (the axes multiply).
    assert len(crawl_calendar(TrapBudgetDecideRule(TrapBudgetParams(max_series_uris=0)))) > 500


def test_a_calendar_in_one_dimension_still_ends_at_its_length() -> None:
    rule = TrapBudgetDecideRule()
    page = CrawlURI("http://h/", hop_path="")
    page.is_seed = True
    accepted = 0
    for index in range(2026 * 12, 2026 * 12 + 100):
        child = page.create_child(_month(index), "L")
        if rule.decide(child) is DecideResult.REJECT:
            break
        accepted += 1
        page = CrawlURI.from_bytes(child.to_bytes())
    assert accepted == 31  # the first month and a series of 30: 27 counted, under 60


def test_pages_found_on_lists_start_series_of_their_own() -> None:
    """A numbered site (two numbers: a section and a page): lists link every page, pages link
    the next one. Pages met first through their neighbours may be counted; each is still let
    through from its list."""
    rule = TrapBudgetDecideRule(TrapBudgetParams(max_series_uris=2))
    home = CrawlURI("http://h/", hop_path="")
    home.is_seed = True
    listing = CrawlURI.from_bytes(home.create_child("http://h/all.html", "L").to_bytes())
    page = CrawlURI.from_bytes(listing.create_child("http://h/s/7/p/0", "L").to_bytes())
    for n in range(1, 10):  # a chain of next links, far past 3 steps and 2 counted
        child = page.create_child(f"http://h/s/7/p/{n}", "L")
        decision = rule.decide(child)
        assert decision is (DecideResult.ACCEPT if n <= 5 else DecideResult.REJECT), n
        if decision is DecideResult.REJECT:
            break
        page = CrawlURI.from_bytes(child.to_bytes())
    for n in range(10):
        child = listing.create_child(f"http://h/s/7/p/{n}", "L")
        assert rule.decide(child) is DecideResult.ACCEPT


def test_a_tree_of_pages_with_one_number_is_crawled_whole_however_deep() -> None:
    """1,000 pages /p/N.html, each linking 2N+1, 2N+2 and (7N+3) mod 1000, from a home page
    linking page 0: ten steps deep, one number in the template, never an area."""
    rule = TrapBudgetDecideRule()
    home = CrawlURI("http://h/", hop_path="")
    home.is_seed = True
    first = home.create_child("http://h/p/0.html", "L")
    assert rule.decide(first) is DecideResult.ACCEPT
    queue, seen = [CrawlURI.from_bytes(first.to_bytes())], {first.uri}
    while queue:
        page = queue.pop(0)
        n = int(page.uri.rsplit("/", 1)[1].split(".")[0])
        for k in (2 * n + 1, 2 * n + 2, (7 * n + 3) % 1000):
            uri = f"http://h/p/{k}.html"
            if k >= 1000 or uri in seen:
                continue
            child = page.create_child(uri, "L")
            assert rule.decide(child) is DecideResult.ACCEPT, uri
            seen.add(uri)
            queue.append(CrawlURI.from_bytes(child.to_bytes()))
    assert len(seen) == 1000


def test_series_members_survive_a_restore_and_memory_is_bounded() -> None:
    rule = TrapBudgetDecideRule(TrapBudgetParams(max_series_uris=10, max_series=3))
    months = crawl_calendar(rule)
    assert len(months) == 1 + 24 + 10
    # A page 3 steps into the series, as the frontier would hand it out after a resume
    home = CrawlURI("http://h/", hop_path="")
    home.is_seed = True
    entry = 2026 * 12
    page = CrawlURI.from_bytes(home.create_child(_month(entry), "L").to_bytes())
    for n in (1, 2, 3):
        child = page.create_child(_month(entry + n), "L")
        TrapBudgetDecideRule().decide(child)  # sets the run and the series (free steps)
        page = CrawlURI.from_bytes(child.to_bytes())
    unseen = next(
        _month(entry + 3 + k) for k in (12, -12, 24, -24) if _month(entry + 3 + k) not in months
    )

    def fresh_child() -> CrawlURI:
        return CrawlURI.from_bytes(page.to_bytes()).create_child(unseen, "L")

    again = TrapBudgetDecideRule(TrapBudgetParams(max_series_uris=10, max_series=3))
    assert again.decide(fresh_child()) is DecideResult.ACCEPT  # a fresh rule: nothing spent
    again.restore(rule.state())
    assert again.decide(fresh_child()) is DecideResult.REJECT  # the series spent its budget
    for other in (100, 200, 300):  # three more series: the first one is forgotten
        crawl_calendar(again, other)
    assert len(again.state()["series"]) == 3
    assert again.decide(fresh_child()) is DecideResult.ACCEPT
    with pytest.raises(ValueError, match="trap budget state"):
        again.restore({"series": [[1, ["x"]]]})
