"""CandidatesProcessor: normalizes, scopes and schedules outlinks and prerequisites."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from support.processor_context import make_context

from crawler import (
    CrawlURI,
    DecideResult,
    DecideRule,
    DecideRuleSequence,
    Hop,
    Link,
    NoParams,
    SchedulingDirective,
)
from processors.postprocess import CandidatesParams, CandidatesProcessor


class AcceptAll(DecideRule[NoParams]):
    def decide(self, curi: CrawlURI) -> DecideResult:
        return DecideResult.ACCEPT


class RejectHost(DecideRule[NoParams]):
    """Rejects anything on off.example (a stand-in for a real scope rule)."""

    def decide(self, curi: CrawlURI) -> DecideResult:
        return DecideResult.REJECT if "//off.example" in curi.uri else DecideResult.NONE


class Harness:
    def __init__(self, params: CandidatesParams | None = None) -> None:
        self.scheduled: list[CrawlURI] = []
        self.errors: list[tuple[str | None, str, str]] = []
        self.ctx = make_context(
            Path("."),
            scope=DecideRuleSequence([AcceptAll(), RejectHost()]),
            schedule=self._schedule,
            uri_error=lambda base, msg, raw: self.errors.append((base, msg, raw)),
        )
        self.proc = CandidatesProcessor("candidates", params)
        self.proc.start(self.ctx)

    def _schedule(self, curi: CrawlURI) -> bool:
        self.scheduled.append(curi)
        return True

    def run(self, curi: CrawlURI) -> list[CrawlURI]:
        self.proc.process(curi)
        return self.scheduled


def page(*links: Link, status: int = 200) -> CrawlURI:
    return CrawlURI(
        "http://site.example/dir/",
        hop_path="L",
        source_tag="seedtag",
        status=status,
        outlinks=list(links),
    )


def test_outlinks_are_normalized_scoped_and_scheduled_once() -> None:
    h = Harness()
    scheduled = h.run(
        page(
            Link("HTTP://Site.Example:80/a/../b.html#frag", Hop.LINK, "a/@href"),
            Link("http://site.example/b.html", Hop.LINK, "a/@href"),
            Link("http://site.example/b.html", Hop.LINK, "a/@href"),
            Link("http://off.example/x", Hop.LINK, "a/@href"),
            Link("http://site.example/img.png", Hop.EMBED, "img/@src"),
        )
    )
    assert [(c.uri, c.hop_path) for c in scheduled] == [
        ("http://site.example/b.html", "LL"),
        ("http://site.example/img.png", "LE"),
    ]
    child = scheduled[0]
    assert child.via == "http://site.example/dir/"
    assert child.via_context == "a/@href"
    assert child.source_tag == "seedtag"
    assert scheduled[1].directive == SchedulingDirective.MEDIUM
    assert child.directive == SchedulingDirective.NORMAL
    assert "candidates scheduled (new to the frontier): 2" in "\n".join(h.proc.report())


def test_bad_outlinks_go_to_uri_errors_and_the_rest_still_schedule() -> None:
    h = Harness()
    scheduled = h.run(
        page(
            Link("http://[::1/broken", Hop.LINK, "a/@href"),
            Link("ftp://files.example/f", Hop.LINK, "a/@href"),
            Link("http://site.example/fine", Hop.LINK, "a/@href"),
        )
    )
    assert [c.uri for c in scheduled] == ["http://site.example/fine"]
    assert [(base, raw) for base, _, raw in h.errors] == [
        ("http://site.example/dir/", "http://[::1/broken"),
        ("http://site.example/dir/", "ftp://files.example/f"),
    ]
    assert all(message for _, message, _ in h.errors)


def test_error_pages_outlinks_are_dropped_unless_asked_for() -> None:
    link = Link("http://site.example/from-404", Hop.LINK, "a/@href")
    assert Harness().run(page(link, status=404)) == []
    assert Harness().run(page(link, status=-2)) == []
    switched = Harness(CandidatesParams(process_error_outlinks=True))
    assert [c.uri for c in switched.run(page(link, status=404))] == [link.uri]


def test_redirect_to_the_same_canonical_uri_is_forced() -> None:
    h = Harness()
    curi = page(
        Link("http://site.example/dir/?jsessionid=0123456789abcdef0123456789abcdef", "R", ""),
        Link("http://site.example/elsewhere", Hop.REFER, "Location:"),
        status=302,
    )
    curi.uri = "http://site.example/dir/"
    scheduled = h.run(curi)
    assert [c.directive for c in scheduled] == [SchedulingDirective.MEDIUM] * 2
    assert [c.force_fetch for c in scheduled] == [True, False]


def test_prerequisite_is_scheduled_whatever_the_status() -> None:
    h = Harness()
    curi = CrawlURI("http://site.example/x", status=-50)
    prereq = curi.create_child("http://SITE.example/robots.txt", Hop.PREREQ)
    prereq.force_fetch = True
    curi.prerequisite = prereq
    assert h.run(curi) == [prereq]
    assert prereq.uri == "http://site.example/robots.txt"
    assert curi.status == -50


def test_unschedulable_prerequisite_fails_the_uri_with_minus_63() -> None:
    for prereq_uri in ("http://off.example/robots.txt", "http://[::1/robots.txt"):
        h = Harness()
        curi = CrawlURI("http://site.example/x", status=-50)
        curi.prerequisite = curi.create_child(prereq_uri, Hop.PREREQ)
        assert h.run(curi) == []
        assert curi.status == -63


def test_links_the_frontier_saw_already_skip_the_scope_but_redirects_do_not() -> None:
    asked: list[str] = []

    class Counting(DecideRule[NoParams]):
        def decide(self, curi: CrawlURI) -> DecideResult:
            asked.append(curi.uri)
            return DecideResult.ACCEPT

    h = Harness()
    seen = {"http://site.example/old.html", "http://site.example/moved"}
    h.proc.ctx = dataclasses.replace(
        h.ctx,
        scope=DecideRuleSequence([Counting()]),
        seen_recently=lambda uris: [u in seen for u in uris],
    )
    scheduled = h.run(
        page(
            Link("http://site.example/old.html", Hop.LINK, "a/@href"),
            Link("http://site.example/new.html", Hop.LINK, "a/@href"),
            Link("http://site.example/moved", Hop.REFER, None),
        )
    )
    assert asked == ["http://site.example/new.html", "http://site.example/moved"]
    assert [c.uri for c in scheduled] == asked


def test_logging_scope_decisions_asks_the_scope_for_every_link(tmp_path: Path) -> None:
    scheduled: list[CrawlURI] = []
    ctx = dataclasses.replace(
        make_context(
            tmp_path,
            scope=DecideRuleSequence([AcceptAll()]),
            schedule=lambda curi: scheduled.append(curi) is None,
        ),
        seen_recently=lambda uris: [True] * len(uris),
    )
    proc = CandidatesProcessor("candidates", CandidatesParams(log_scope_decisions=True))
    proc.start(ctx)
    proc.process(page(Link("http://site.example/old.html", Hop.LINK, "a/@href")))
    proc.stop()
    assert [c.uri for c in scheduled] == ["http://site.example/old.html"]
    assert "ACCEPT http://site.example/old.html" in (tmp_path / "logs/scope.log").read_text()
