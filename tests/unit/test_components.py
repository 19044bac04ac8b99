"""Components named by dotted path: resolution, kind checks, params, building, show-processor."""

from __future__ import annotations

import io

import pytest
from pydantic import Field

from crawler.chain import ProcessorChains
from crawler.curi import CrawlURI
from crawler.decide.decide_rule import DecideResult, DecideRule, DecideRuleSequence
from crawler.frontier.store.queue_store import QueueStore
from crawler.order.components import (
    build_chains,
    build_component,
    build_processor,
    build_rules,
    resolve_class,
    show_processor_main,
)
from crawler.order.errors import OrderError
from crawler.order.schema import ComponentSpec, CrawlOrder, ProcessorSpec
from crawler.params import Params
from crawler.processor import Processor

MOD = __name__


class TagParams(Params):
    tag: str = Field("t", description="label written on each URI")
    timeout_s: float = Field(5.0, description="how long to wait")


class Tagger(Processor[TagParams]):
    """Writes its tag on each URI.

    More text that is not part of the summary.
    """

    def inner_process(self, curi: CrawlURI) -> None:
        curi.data["tag"] = self.params.tag


class MaxLenParams(Params):
    max_len: int = Field(10, ge=1, description="longest accepted URI")


class RejectLong(DecideRule[MaxLenParams]):
    def decide(self, curi: CrawlURI) -> DecideResult:
        return DecideResult.REJECT if len(curi.uri) > self.params.max_len else DecideResult.NONE


class Exploding(Processor[Params]):
    def __init__(self, *args: object, **kwargs: object) -> None:
        raise ValueError("needs a flux capacitor")


class NotAComponent:
    pass


def proc_spec(name: str, cls: str, **extra: object) -> ProcessorSpec:
    return ProcessorSpec.model_validate({"name": name, "class": cls, **extra})


def spec(cls: str, **params: object) -> ComponentSpec:
    return ComponentSpec.model_validate({"class": cls, "params": params})


def only_issue(exc: pytest.ExceptionInfo[OrderError]) -> str:
    assert len(exc.value.issues) == 1, exc.value.issues
    return str(exc.value.issues[0])


def test_resolve_class_returns_the_class() -> None:
    assert resolve_class(f"{MOD}.Tagger", Processor, "x.class") is Tagger


def test_missing_module_names_the_closest_module() -> None:
    with pytest.raises(OrderError) as exc:
        resolve_class("crawler.ordr.Thing", None, "chains.fetch[0] (f).class")
    text = only_issue(exc)
    assert text.startswith("chains.fetch[0] (f).class: module 'crawler.ordr' not found")
    assert "did you mean module 'crawler.order'?" in text


def test_missing_class_suggests_the_closest_class() -> None:
    with pytest.raises(OrderError) as exc:
        resolve_class(f"{MOD}.Taggr", Processor, "where")
    assert "has no class 'Taggr'" in only_issue(exc)
    assert f"did you mean {MOD}.Tagger?" in only_issue(exc)


def test_not_a_processor_is_rejected() -> None:
    with pytest.raises(OrderError) as exc:
        resolve_class(f"{MOD}.NotAComponent", Processor, "where")
    text = only_issue(exc)
    assert "is not a Processor" in text
    assert "crawler.processor.Processor" in text


def test_undotted_path_is_rejected() -> None:
    with pytest.raises(OrderError) as exc:
        resolve_class("FetchHTTP", Processor, "where")
    assert "not a dotted class path" in only_issue(exc)


def test_protocol_bases_are_checked_by_methods() -> None:
    store = resolve_class("crawler.frontier.store.memory_store.MemoryQueueStore", QueueStore, "w")
    assert store.__name__ == "MemoryQueueStore"
    with pytest.raises(OrderError) as exc:
        resolve_class(f"{MOD}.Tagger", QueueStore, "frontier.store.class")
    assert "is not a QueueStore" in only_issue(exc)


def test_build_processor_validates_params_and_names_chain_and_processor() -> None:
    proc = build_processor(proc_spec("tag", f"{MOD}.Tagger", params={"tag": "a"}), "extract", 2)
    assert isinstance(proc, Tagger)
    assert proc.name == "tag" and proc.params.tag == "a"
    with pytest.raises(OrderError) as exc:
        build_processor(
            proc_spec("tag", f"{MOD}.Tagger", params={"timeout_s": "soon", "tga": "b"}), "fetch", 1
        )
    texts = [str(i) for i in exc.value.issues]
    assert any(
        t.startswith("chains.fetch[1] (tag).params.timeout_s:")
        and "'soon'" in t
        and "expected number" in t
        for t in texts
    ), texts
    assert any(
        t.startswith("chains.fetch[1] (tag).params: unknown key 'tga'")
        and "did you mean 'tag'?" in t
        for t in texts
    ), texts


def test_build_processor_builds_its_should_process_rule() -> None:
    rule = {"class": f"{MOD}.RejectLong", "params": {"max_len": 12}}
    proc = build_processor(
        proc_spec("tag", f"{MOD}.Tagger", should_process_rule=[rule], enabled=False), "extract"
    )
    assert proc.enabled is False
    assert proc.should_process_rule is not None
    assert proc.should_process_rule.decide(CrawlURI("http://a.b/very/long")) is DecideResult.REJECT
    bad = {"class": f"{MOD}.RejectLong", "params": {"max_len": 0}}
    with pytest.raises(OrderError) as exc:
        build_processor(proc_spec("tag", f"{MOD}.Tagger", should_process_rule=[bad]), "extract", 0)
    assert only_issue(exc).startswith(
        "chains.extract[0] (tag).should_process_rule[0].params.max_len:"
    )


def test_constructor_failure_is_an_order_error() -> None:
    with pytest.raises(OrderError) as exc:
        build_processor(proc_spec("boom", f"{MOD}.Exploding"), "pre", 0)
    assert "could not be built: ValueError: needs a flux capacitor" in only_issue(exc)


def test_build_rules_reports_every_bad_rule() -> None:
    seq = build_rules([spec(f"{MOD}.RejectLong", max_len=3)], "scope")
    assert isinstance(seq, DecideRuleSequence) and len(seq) == 1
    with pytest.raises(OrderError) as exc:
        build_rules(
            [spec(f"{MOD}.Tagger"), spec(f"{MOD}.RejectLong"), spec(f"{MOD}.RejectLong", x=1)],
            "scope",
        )
    paths = [i.path for i in exc.value.issues]
    assert paths == ["scope[0].class", "scope[2].params"]


def test_build_component_takes_params() -> None:
    rule = build_component(spec(f"{MOD}.RejectLong", max_len=4), DecideRule, "r")
    assert isinstance(rule, RejectLong) and rule.params.max_len == 4


def test_build_chains_reports_errors_of_all_chains_and_duplicates() -> None:
    order = CrawlOrder.model_validate(
        {
            "name": "t",
            "chains": {
                "pre": [{"name": "a", "class": f"{MOD}.Tagger"}],
                "fetch": [{"name": "a", "class": f"{MOD}.Tagger"}],
                "post": [{"name": "c", "class": f"{MOD}.Nope"}],
            },
        }
    )
    with pytest.raises(OrderError) as exc:
        build_chains(order)
    paths = [i.path for i in exc.value.issues]
    assert paths == ["chains.fetch[0] (a).name", "chains.post[0] (c).class"]
    good = CrawlOrder.model_validate(
        {"name": "t", "chains": {"extract": [{"name": "x", "class": f"{MOD}.Tagger"}]}}
    )
    chains = build_chains(good)
    assert isinstance(chains, ProcessorChains)
    assert [p.name for p in chains.processors()] == ["x"]


def test_show_processor_prints_summary_and_parameter_table() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert show_processor_main(f"{MOD}.Tagger", out, err) == 0
    text = out.getvalue()
    assert "Writes its tag on each URI." in text
    assert "More text" not in text
    lines = text.splitlines()
    row = next(line for line in lines if line.strip().startswith("timeout_s"))
    assert row.split()[:3] == ["timeout_s", "number", "5.0"]
    assert "how long to wait" in row
    assert err.getvalue() == ""


def test_show_processor_rejects_bad_paths_with_exit_2() -> None:
    for dotted in (f"{MOD}.NotAComponent", "nowhere.Thing", f"{MOD}.RejectLong"):
        out, err = io.StringIO(), io.StringIO()
        assert show_processor_main(dotted, out, err) == 2
        assert out.getvalue() == ""
        assert err.getvalue().startswith("crawler show-processor: ")
        assert dotted.rpartition(".")[0] in err.getvalue()
