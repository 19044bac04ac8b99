"""CandidatesProcessor's optional scope.log: one line per decision, naming the deciding rule."""

from __future__ import annotations

from pathlib import Path

from support.processor_context import make_context

from crawler import CrawlURI, DecideRuleSequence, Link, ManualClock
from crawler.decide import (
    PrerequisiteAcceptDecideRule,
    RejectDecideRule,
    RuleContext,
    SurtPrefixedDecideRule,
)
from processors.postprocess import CandidatesParams, CandidatesProcessor


def start(run_dir: Path, log: bool) -> tuple[CandidatesProcessor, list[CrawlURI]]:
    scope = DecideRuleSequence(
        [RejectDecideRule(), SurtPrefixedDecideRule(), PrerequisiteAcceptDecideRule()]
    )
    scope.bind(RuleContext(seeds=["http://site.example/"]))
    scheduled: list[CrawlURI] = []
    ctx = make_context(
        run_dir,
        clock=ManualClock(1_700_000_000.25),
        scope=scope,
        schedule=lambda curi: scheduled.append(curi) is None,
    )
    proc = CandidatesProcessor("candidates", CandidatesParams(log_scope_decisions=log))
    proc.start(ctx)
    return proc, scheduled


def test_every_decision_is_logged_with_its_rule(tmp_path: Path) -> None:
    proc, scheduled = start(tmp_path, log=True)
    page = CrawlURI(
        "http://site.example/a.html",
        status=200,
        outlinks=[Link("http://site.example/b.html", "L"), Link("http://off.example/", "L")],
    )
    page.prerequisite = CrawlURI("http://other.example/robots.txt", hop_path="P")
    proc.process(page)
    proc.stop()
    proc.stop()
    lines = (tmp_path / "logs" / "scope.log").read_text().splitlines()
    assert lines == [
        "2023-11-14T22:13:20.250Z 2 PrerequisiteAcceptDecideRule ACCEPT "
        "http://other.example/robots.txt",
        "2023-11-14T22:13:20.250Z 1 SurtPrefixedDecideRule ACCEPT http://site.example/b.html",
        "2023-11-14T22:13:20.250Z 0 RejectDecideRule REJECT http://off.example/",
    ]
    assert [c.uri for c in scheduled] == [
        "http://other.example/robots.txt",
        "http://site.example/b.html",
    ]


def test_no_scope_log_unless_asked(tmp_path: Path) -> None:
    proc, scheduled = start(tmp_path, log=False)
    proc.process(CrawlURI("http://site.example/", status=200,
                          outlinks=[Link("http://site.example/x", "L")]))  # fmt: skip
    proc.stop()
    assert len(scheduled) == 1
    assert not (tmp_path / "logs" / "scope.log").exists()
