"""Loading crawl orders: extends chains, deep merge, --set, and every kind of error at once."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import Field

from crawler.curi import CrawlURI
from crawler.decide.decide_rule import DecideResult, DecideRule
from crawler.order.errors import OrderError
from crawler.order.loader import (
    deep_merge,
    effective_yaml,
    load_order,
    require_contact_url,
)
from crawler.order.preflight import validate_main
from crawler.params import Params
from crawler.processor import Processor

MOD = __name__


class WaitParams(Params):
    timeout_s: float = Field(20.0, description="seconds")
    retries: int = Field(1, ge=0, description="attempts")


class Waiter(Processor[WaitParams]):
    """A processor with params, for orders in these tests."""


class Plain(Processor[Params]):
    """A processor without params."""


class HopsParams(Params):
    max_hops: int = Field(20, ge=0)


class Hops(DecideRule[HopsParams]):
    def decide(self, curi: CrawlURI) -> DecideResult:
        return DecideResult.NONE


BASE = f"""
extends: none
name: base
operator: {{contact_url: "https://example.org/crawler"}}
toe_threads: 5
frontier:
  store: {{class: crawler.frontier.store.memory_store.MemoryQueueStore}}
  queue_assignment: {{class: crawler.frontier.assignment.HostnameQueueAssignmentPolicy}}
  uniq_filter: {{class: crawler.uniq.MemoryUriUniqFilter}}
  politeness: {{delay_factor: 5.0, min_delay_ms: 3000, max_delay_ms: 30000}}
scope:
  - {{class: {MOD}.Hops, params: {{max_hops: 20}}}}
chains:
  pre:
    - {{name: plain, class: {MOD}.Plain}}
  fetch:
    - {{name: first, class: {MOD}.Plain}}
    - {{name: fetch_http, class: {MOD}.Waiter, params: {{timeout_s: 20}}}}
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture
def base(tmp_path: Path) -> Path:
    return write(tmp_path / "profiles" / "base.yaml", BASE)


def job(tmp_path: Path, text: str) -> Path:
    text = "extends: ../profiles/base.yaml\n" + textwrap.dedent(text)
    return write(tmp_path / "job" / "order.yaml", text)


def errors_of(path: Path, sets: tuple[str, ...] = ()) -> list[str]:
    with pytest.raises(OrderError) as exc:
        load_order(path, sets)
    return [str(issue) for issue in exc.value.issues]


def test_extends_chain_merges_mappings_and_replaces_lists(tmp_path: Path, base: Path) -> None:
    write(
        tmp_path / "profiles" / "middle.yaml",
        """
        extends: base.yaml
        toe_threads: 7
        frontier: {politeness: {min_delay_ms: 10}}
        scope: []
        """,
    )
    path = write(
        tmp_path / "job" / "order.yaml",
        f"""
        extends: {tmp_path / "profiles" / "middle.yaml"}
        name: mine
        frontier: {{politeness: {{max_delay_ms: 20}}}}
        """,
    )
    order = load_order(path)
    assert order.name == "mine"
    assert order.toe_threads == 7
    polite = order.frontier.politeness
    assert (polite.delay_factor, polite.min_delay_ms, polite.max_delay_ms) == (5.0, 10, 20)
    assert order.scope == []
    assert [p.name for p in order.chains.fetch] == ["first", "fetch_http"]
    assert order.base_dir == str((tmp_path / "job").resolve())


def test_deep_merge_does_not_touch_its_inputs() -> None:
    low = {"a": {"b": 1, "c": [1, 2]}, "d": 1}
    high = {"a": {"c": [3]}, "e": None}
    assert deep_merge(low, high) == {"a": {"b": 1, "c": [3]}, "d": 1, "e": None}
    assert low == {"a": {"b": 1, "c": [1, 2]}, "d": 1}


def test_missing_extends_uses_the_project_default_order(tmp_path: Path) -> None:
    path = write(tmp_path / "o.yaml", "name: x\ntoe_threads: 3\n")
    order = load_order(path)
    assert order.name == "x"
    assert order.toe_threads == 3
    assert [p.name for p in order.chains.fetch] == ["fetch_dns", "fetch_http", "fetch_browser"]
    assert order.scope[0].class_ == "crawler.decide.RejectDecideRule"


def test_extends_cycle_and_missing_parent_are_reported(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", "extends: b.yaml\nname: a\n")
    write(tmp_path / "b.yaml", "extends: a.yaml\nname: b\n")
    assert "extends cycle" in errors_of(tmp_path / "a.yaml")[0]
    write(tmp_path / "c.yaml", "extends: nowhere.yaml\nname: c\n")
    with pytest.raises(OrderError) as exc:
        load_order(tmp_path / "c.yaml")
    (issue,) = exc.value.issues
    # the line shows the value cut to 80 characters (a long temporary path loses its end)
    assert str(issue).startswith(f"{tmp_path / 'c.yaml'}: extends: file not found")
    assert str(issue.value).endswith("nowhere.yaml")


def test_sets_take_yaml_values_and_dotted_paths(tmp_path: Path, base: Path) -> None:
    path = job(tmp_path, "name: j\n")
    order = load_order(
        path,
        (
            "toe_threads=50",
            "frontier.politeness.min_delay_ms=0",
            'seeds.urls=["http://127.0.0.1:8000/"]',
            "chains.fetch.1.params.timeout_s=5",
            "chains.fetch[0].enabled=false",
            "chains.fetch.fetch_http.params.retries=3",
            "operator.organization=Some Archive",
        ),
    )
    assert order.toe_threads == 50
    assert order.frontier.politeness.min_delay_ms == 0
    assert order.seeds.urls == ["http://127.0.0.1:8000/"]
    assert order.chains.fetch[1].params == {"timeout_s": 5, "retries": 3}
    assert order.chains.fetch[0].enabled is False
    assert order.operator.organization == "Some Archive"


def test_bad_sets_are_reported_with_the_other_errors(tmp_path: Path, base: Path) -> None:
    path = job(tmp_path, "name: j\ntoe_threads: many\n")
    texts = errors_of(
        path,
        (
            "toe_threads",
            "seeds.urls=[unclosed",
            "chains.fetch.7.enabled=false",
            "toe_threads.x=1",
            "toe_thread=3",
        ),
    )
    assert any(t.startswith("--set toe_threads: expected KEY=VALUE") for t in texts), texts
    assert any(t.startswith("--set seeds.urls=[unclosed: VALUE is not valid YAML") for t in texts)
    assert any("chains.fetch is a list of 2: '7' is neither an index" in t for t in texts), texts
    assert any("toe_threads is a str, it has no key 'x'" in t for t in texts), texts
    assert any(
        t.startswith("(top level): unknown key 'toe_thread'") and "did you mean 'toe_threads'?" in t
        for t in texts
    ), texts
    assert any(t.startswith("toe_threads: input should be a valid integer") for t in texts)


def test_every_error_is_reported_at_once(tmp_path: Path, base: Path) -> None:
    path = job(
        tmp_path,
        f"""
        name: j
        toe_thread: 3
        robots: {{policy: sometimes}}
        frontier: {{politeness: {{min_delay_ms: soon}}}}
        scope:
          - {{class: {MOD}.Hops, params: {{max_hops: -1}}}}
          - {{class: {MOD}.Waiter}}
        chains:
          pre:
            - {{name: plain, class: {MOD}.Plain, parms: {{}}}}
          fetch:
            - {{name: fetch_http, class: {MOD}.Waiter, params: {{timeout_s: abc, timout: 1}}}}
            - {{name: plain, class: {MOD}.Plian}}
            - {{name: other, class: crawler.nowhere.Thing}}
            - {{name: raw, class: {MOD}.Hops}}
        """,
    )
    texts = errors_of(path)
    expected = [
        ("(top level): unknown key 'toe_thread'", "did you mean 'toe_threads'?"),
        ("robots.policy: input should be 'obey' or 'ignore'", "'sometimes'"),
        ("frontier.politeness.min_delay_ms: input should be a valid integer", "expected integer"),
        ("chains.pre[0] (plain): unknown key 'parms'", "did you mean 'params'?"),
        ("scope[0].params.max_hops: input should be greater than or equal to 0", "-1"),
        ("scope[1].class:", "is not a DecideRule"),
        ("chains.fetch[1] (plain).name: duplicate processor name", "chains.pre[0] (plain)"),
        ("chains.fetch[0] (fetch_http).params.timeout_s: input should be a valid number", "'abc'"),
        ("chains.fetch[0] (fetch_http).params: unknown key 'timout'", "did you mean 'timeout_s'?"),
        ("chains.fetch[1] (plain).class: module", f"did you mean {MOD}.Plain?"),
        ("chains.fetch[2] (other).class: module 'crawler.nowhere' not found", ""),
        ("chains.fetch[3] (raw).class:", "is not a Processor"),
    ]
    for start, part in expected:
        assert any(t.startswith(start) and part in t for t in texts), (start, texts)
    assert len(texts) == len(expected), texts


def test_yaml_syntax_error_gives_file_line_and_column(tmp_path: Path, base: Path) -> None:
    path = job(tmp_path, "name: j\nchains:\n  fetch: [unclosed\n")
    (text,) = errors_of(path)
    assert text.startswith(f"{path.resolve()}:5:1: YAML syntax error")
    broken_parent = write(tmp_path / "p.yaml", "extends: none\nname: [x\n")
    (text,) = errors_of(write(tmp_path / "q.yaml", f"extends: {broken_parent}\n"))
    assert text.startswith(f"{broken_parent}:3:1: YAML syntax error")


def test_duplicate_yaml_keys_and_non_mapping_documents_are_errors(tmp_path: Path) -> None:
    (text,) = errors_of(write(tmp_path / "d.yaml", "name: a\ntoe_threads: 1\nname: b\n"))
    assert (
        ":3:1: YAML syntax error" in text and "duplicate key 'name' (first given on line 1)" in text
    )
    (text,) = errors_of(write(tmp_path / "l.yaml", "- a\n- b\n"))
    assert "an order must be a mapping" in text


def test_effective_yaml_is_the_merged_order_without_extends(tmp_path: Path, base: Path) -> None:
    order = load_order(job(tmp_path, "name: j\n"), ("toe_threads=9",))
    text = effective_yaml(order)
    data: dict[str, Any] = yaml.safe_load(text)
    assert "extends" not in data
    assert data["toe_threads"] == 9
    assert data["chains"]["fetch"][1] == {
        "name": "fetch_http",
        "class": f"{MOD}.Waiter",
        "enabled": True,
        "params": {"timeout_s": 20},
        "should_process_rule": [],
    }
    assert data["base_dir"] == str((tmp_path / "job").resolve())
    # A run's order.effective.yaml, read back from elsewhere, keeps the job's directory.
    copy = write(tmp_path / "run" / "order.effective.yaml", "extends: none\n" + text)
    again = load_order(copy)
    assert again == order


def test_contact_url_is_optional_to_load_but_required_to_crawl(tmp_path: Path, base: Path) -> None:
    order = load_order(job(tmp_path, "name: j\n"), ("operator.contact_url=null",))
    with pytest.raises(OrderError) as exc:
        require_contact_url(order)
    assert "operator.contact_url is required to crawl" in str(exc.value)
    require_contact_url(load_order(job(tmp_path, "name: j\n")))


def test_validate_main_prints_effective_order_or_every_error(tmp_path: Path, base: Path) -> None:
    write(tmp_path / "job" / "seeds.txt", "# seeds\nexample.com\n")
    path = job(tmp_path, "name: j\nseeds: {file: seeds.txt}\n")
    out, err = io.StringIO(), io.StringIO()
    assert validate_main(path, ["toe_threads=3"], out, err) == 0
    assert yaml.safe_load(out.getvalue())["toe_threads"] == 3
    assert err.getvalue() == ""

    out, err = io.StringIO(), io.StringIO()
    assert validate_main(path, ["toe_threads=0", "operator.contact_url=null"], out, err) == 2
    assert out.getvalue() == ""
    assert "toe_threads: input should be greater than or equal to 1" in err.getvalue()
    assert "operator.contact_url is required to crawl" in err.getvalue()  # in the same pass

    out, err = io.StringIO(), io.StringIO()
    assert validate_main(path, ["operator.contact_url=null", "seeds.file=none.txt"], out, err) == 2
    assert "seeds.file: cannot read" in err.getvalue()
    assert "operator.contact_url: operator.contact_url is required" in err.getvalue()

    out, err = io.StringIO(), io.StringIO()  # `crawler run` refuses it: so does validate
    assert validate_main(path, ["operator.contact_url=null"], out, err) == 2
    assert out.getvalue() == ""


def test_changing_a_component_class_drops_the_parents_params(tmp_path: Path) -> None:
    path = write(
        tmp_path / "o.yaml",
        "name: x\nfrontier:\n  queue_assignment:\n"
        "    class: crawler.frontier.HashQueueAssignmentPolicy\n"
        "    params: {function: bkdr, buckets: 50}\n",
    )
    order = load_order(path)
    assert order.frontier.queue_assignment.params == {"function": "bkdr", "buckets": 50}


def test_run_without_contact_url_makes_no_run_directory(tmp_path: Path) -> None:
    import io

    from crawler.cli.crawl_runner import run_order

    path = write(tmp_path / "job" / "order.yaml", "name: x\nseeds: {urls: ['http://a.example/']}\n")
    out, err = io.StringIO(), io.StringIO()
    assert run_order(path, [], None, out, err) == 2
    assert "operator.contact_url is required" in err.getvalue()
    assert not (tmp_path / "job" / "runs").exists()
