"""Redirect loops: a redirect back into its own chain is followed once, then dropped."""

from __future__ import annotations

from pathlib import Path

from support.processor_context import make_context

from crawler import CrawlURI, DecideResult, DecideRule, DecideRuleSequence, Hop, Link, NoParams
from processors.postprocess import CandidatesProcessor
from processors.postprocess.redirect_chain import LOOP_ANNOTATION, REDIRECT_CHAIN_KEY

SESSION = "0123456789abcdef0123456789abcdef"


class AcceptAll(DecideRule[NoParams]):
    def decide(self, curi: CrawlURI) -> DecideResult:
        return DecideResult.ACCEPT


SCHEDULED: list[CrawlURI] = []


def _schedule(curi: CrawlURI) -> bool:
    SCHEDULED.append(curi)
    return True


def candidates(**order_fields: object) -> CandidatesProcessor:
    proc = CandidatesProcessor("candidates")
    scope = DecideRuleSequence([AcceptAll()])
    proc.start(make_context(Path("."), scope=scope, schedule=_schedule, **order_fields))
    return proc


def redirect(proc: CandidatesProcessor, curi: CrawlURI, location: str) -> CrawlURI | None:
    """Answer ``curi`` with a 302 to ``location``; the redirect scheduled, if any."""
    SCHEDULED.clear()
    curi.status = 302
    curi.outlinks = [Link(location, Hop.REFER, "Location:")]
    proc.process(curi)
    return SCHEDULED.pop() if SCHEDULED else None


def follow(proc: CandidatesProcessor, seed: str, *locations: str) -> list[CrawlURI]:
    """Fetch ``seed``, which redirects to each of ``locations`` in turn (one per fetch)."""
    fetched = [CrawlURI(seed, hop_path="L")]
    for location in locations:
        child = redirect(proc, fetched[-1], location)
        if child is None:
            break
        fetched.append(child)
    return fetched


def test_a_redirect_to_itself_is_followed_once() -> None:
    a = "http://site.example/a"
    fetched = follow(candidates(), a, a, a, a)
    assert [(c.uri, c.hop_path, c.force_fetch) for c in fetched] == [
        (a, "L", False),
        (a, "LR", True),
    ]
    assert fetched[-1].annotations == [LOOP_ANNOTATION]
    assert fetched[0].annotations == []


def test_a_loop_through_another_uri_is_followed_once() -> None:
    a, b = "http://site.example/a", "http://site.example/b"
    fetched = follow(candidates(), a, b, a, b, a)
    assert [(c.uri, c.force_fetch) for c in fetched] == [(a, False), (b, False), (a, True)]
    assert fetched[-1].annotations == [LOOP_ANNOTATION]
    assert fetched[-1].data[REDIRECT_CHAIN_KEY] == [a, b]


def test_a_redirect_to_the_same_canonical_uri_counts_as_itself() -> None:
    a = "http://site.example/a"
    fetched = follow(candidates(), a, f"{a}?PHPSESSID={SESSION}", f"{a}?jsessionid={SESSION}")
    assert [c.uri for c in fetched] == [a, f"{a}?PHPSESSID={SESSION}"]
    assert fetched[-1].annotations == [LOOP_ANNOTATION]


def test_the_frontiers_canonicalization_rules_decide_what_is_the_same() -> None:
    a = "http://site.example/a?x=1&y=2"
    swapped = "http://site.example/a?y=2&x=1"
    default = follow(candidates(), a, swapped, a, swapped)
    assert [c.uri for c in default] == [a, swapped, a]  # three different keys, then a loop
    sorting = follow(
        candidates(frontier={"canonicalization": ["lowercase", "sort_query"]}), a, swapped, a
    )
    assert [c.uri for c in sorting] == [a, swapped]
    assert sorting[-1].annotations == [LOOP_ANNOTATION]


def test_a_chain_of_distinct_uris_is_followed_and_a_cookie_bounce_may_lead_on() -> None:
    hops = [f"http://site.example/{n}" for n in range(4)]
    fetched = follow(candidates(), *hops)
    assert [c.uri for c in fetched] == hops
    assert [c.hop_path for c in fetched] == ["L", "LR", "LRR", "LRRR"]
    assert not any(c.force_fetch or c.annotations for c in fetched)
    a, page = "http://site.example/a", "http://site.example/page"
    bounced = follow(candidates(), a, a, page)
    assert [c.uri for c in bounced] == [a, a, page]


def test_a_new_chain_starts_after_a_link() -> None:
    proc = candidates()
    a = "http://site.example/a"
    first = follow(proc, a, a)[-1]
    linked = first.create_child(a, Hop.LINK)
    linked.data = dict(first.data)  # whatever it holds, an L hop starts afresh
    again = redirect(proc, linked, a)
    assert again is not None and again.force_fetch
    assert again.data[REDIRECT_CHAIN_KEY] == [a]
