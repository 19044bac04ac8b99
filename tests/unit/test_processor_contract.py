"""The Processor contract: enabled, should_process_rule, should_process, results, jumps."""

from __future__ import annotations

import pytest
from pydantic import Field, ValidationError

from crawler import (
    CHAIN_NAMES,
    CrawlURI,
    DecideResult,
    DecideRule,
    DecideRuleSequence,
    Params,
    Processor,
    ProcessorChain,
    ProcessorChains,
    ProcessResult,
)


class RecordParams(Params):
    tag: str = Field("x", description="what to record")
    result: str = Field("proceed", description="proceed | skip | jump:<name> | raise")


class Record(Processor[RecordParams]):
    """Appends its name to curi.data['trail'] and returns what its params say."""

    def inner_process(self, curi: CrawlURI) -> ProcessResult | None:
        curi.data.setdefault("trail", []).append(self.name)
        what = self.params.result
        if what == "skip":
            return ProcessResult.SKIP_TO_POST
        if what.startswith("jump:"):
            return ProcessResult.jump(what[5:])
        if what == "raise":
            raise RuntimeError("boom")
        return None

    def inner_reject_process(self, curi: CrawlURI) -> None:
        curi.data.setdefault("rejected", []).append(self.name)


class OnlyHtml(Record):
    def should_process(self, curi: CrawlURI) -> bool:
        return curi.uri.endswith(".html")


class RejectAll(DecideRule[Params]):
    def decide(self, curi: CrawlURI) -> DecideResult:
        return DecideResult.REJECT


def make(name: str, result: str = "proceed", **kw: object) -> Record:
    return Record(name, RecordParams(result=result), **kw)  # type: ignore[arg-type]


def chains(**lists: list[Record]) -> ProcessorChains:
    return ProcessorChains([ProcessorChain(n, procs) for n, procs in lists.items()])


def trail(cs: ProcessorChains, uri: str = "http://a.example/x.html") -> list[str]:
    curi = CrawlURI(uri)
    cs.run(curi)
    return list(curi.data.get("trail", []))


def test_params_model_is_bound_by_the_generic_argument() -> None:
    assert Record.params_model is RecordParams
    assert make("a").params.result == "proceed"
    with pytest.raises(ValidationError):
        RecordParams(unknown=1)  # type: ignore[call-arg]


def test_all_chains_run_in_order() -> None:
    cs = chains(
        pre=[make("a")],
        fetch=[make("f")],
        extract=[make("e")],
        write=[make("w")],
        post=[make("p1")],
    )
    assert trail(cs) == ["a", "f", "e", "w", "p1"]
    # The chains of an order are given in the schema's order: pre, fetch, extract, write, post.
    in_schema_order = ProcessorChains([ProcessorChain(n, [make(n)]) for n in CHAIN_NAMES])
    assert trail(in_schema_order) == ["pre", "fetch", "extract", "write", "post"]
    with pytest.raises(ValueError, match="same name"):
        ProcessorChains([ProcessorChain("pre"), ProcessorChain("pre")])


def test_disabled_processor_is_passed_over() -> None:
    cs = chains(pre=[make("a", enabled=False), make("b")])
    assert trail(cs) == ["b"]


def test_rejecting_rule_calls_inner_reject_process_and_proceeds() -> None:
    rule = DecideRuleSequence([RejectAll()])
    proc = make("a", should_process_rule=rule)
    cs = chains(pre=[proc, make("b")])
    curi = CrawlURI("http://a.example/")
    cs.run(curi)
    assert curi.data["trail"] == ["b"]
    assert curi.data["rejected"] == ["a"]


def test_should_process_false_skips_without_reject_hook() -> None:
    cs = chains(extract=[OnlyHtml("html", RecordParams()), make("b")])
    curi = CrawlURI("http://a.example/style.css")
    cs.run(curi)
    assert curi.data["trail"] == ["b"]
    assert "rejected" not in curi.data
    assert trail(cs) == ["html", "b"]


def test_skip_to_post_skips_remaining_chains() -> None:
    cs = chains(
        pre=[make("a", "skip"), make("b")],
        fetch=[make("f")],
        write=[make("w")],
        post=[make("p1"), make("p2")],
    )
    assert trail(cs) == ["a", "p1", "p2"]


def test_skip_to_post_from_post_chain_just_proceeds() -> None:
    cs = chains(post=[make("p1", "skip"), make("p2")])
    assert trail(cs) == ["p1", "p2"]


def test_jump_to_a_named_processor_in_a_later_chain() -> None:
    cs = chains(pre=[make("a", "jump:w"), make("b")], fetch=[make("f")], write=[make("w")])
    assert trail(cs) == ["a", "w"]


def test_jump_backwards_or_to_unknown_name_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown"):
        trail(chains(pre=[make("a", "jump:nowhere")]))
    with pytest.raises(ValueError, match="backwards"):
        trail(chains(pre=[make("a"), make("b", "jump:a")]))


def test_processor_names_must_be_unique() -> None:
    with pytest.raises(ValueError, match="unique"):
        chains(pre=[make("a")], post=[make("a")])


def test_exception_propagates_to_the_caller() -> None:
    cs = chains(pre=[make("a", "raise"), make("b")])
    with pytest.raises(RuntimeError, match="boom"):
        trail(cs)


def test_uris_handled_counts_only_inner_process_calls() -> None:
    proc = OnlyHtml("html", RecordParams())
    cs = chains(extract=[proc])
    trail(cs, "http://a.example/a.css")
    trail(cs, "http://a.example/a.html")
    trail(cs, "http://a.example/b.html")
    assert proc.uris_handled == 2
