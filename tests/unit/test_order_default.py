"""The shipped orders: conf/default-order.yaml and jobs/example validate and document every key."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from crawler.order.components import params_model_for, resolve_class
from crawler.order.errors import OrderError
from crawler.order.loader import build_all, default_order_path, load_order
from crawler.order.preflight import validate_main
from crawler.order.schema import CHAIN_NAMES, CrawlOrder

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"

# Params the default order sets on purpose to something else than the class default.
INTENDED: dict[tuple[str, str], object] = {
    ("crawler.decide.SurtPrefixedDecideRule", "decision"): "ACCEPT",
    ("crawler.decide.TooManyHopsDecideRule", "max_hops"): 20,
    ("crawler.frontier.HostnameQueueAssignmentPolicy", "parallel_queues"): 1,
}


def raw_default() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(default_order_path().read_text(encoding="utf-8"))
    return data


def component_specs(data: dict[str, Any]) -> list[dict[str, Any]]:
    specs = list(data["scope"])
    specs += [data["frontier"][part] for part in ("store", "queue_assignment", "uniq_filter")]
    for chain in CHAIN_NAMES:
        specs += data["chains"][chain]
    return specs


def schema_keys(model: type[BaseModel], data: dict[str, Any], path: str = "") -> list[str]:
    """Keys of ``model`` absent from ``data`` (recursing into sections)."""
    absent = []
    for name, field in model.model_fields.items():
        key = field.alias or name
        if key == "base_dir":
            continue
        if key not in data:
            absent.append(path + key)
            continue
        sub = field.annotation
        if isinstance(sub, type) and issubclass(sub, BaseModel) and "class" not in data[key]:
            absent += schema_keys(sub, data[key], f"{path}{key}.")
    return absent


def test_default_order_lists_every_schema_key() -> None:
    data = raw_default()
    assert data.pop("extends") == "none"
    assert schema_keys(CrawlOrder, data) == []
    assert data["operator"]["contact_url"] is None
    assert "REQUIRED" in default_order_path().read_text(encoding="utf-8")


def test_default_order_matches_the_schema_defaults() -> None:
    data = raw_default()
    del data["extends"]
    data["name"] = "x"
    order = CrawlOrder.model_validate(data)
    defaults = CrawlOrder(name="x")
    for section in ("operator", "seeds", "limits", "robots", "logging"):
        assert getattr(order, section) == getattr(defaults, section), section
    assert order.frontier.politeness == defaults.frontier.politeness
    assert order.frontier.retries == defaults.frontier.retries
    assert order.toe_threads == defaults.toe_threads


def test_default_order_lists_every_param_of_every_component_with_its_default() -> None:
    for spec in component_specs(raw_default()):
        cls = resolve_class(spec["class"], None, spec["class"])
        model = params_model_for(cls, None)
        params = spec.get("params", {})
        keys = [f.alias or n for n, f in model.model_fields.items()]
        assert sorted(params) == sorted(keys), spec["class"]
        validated = model.model_validate(params)
        for name in model.model_fields:
            wanted = INTENDED.get(
                (spec["class"], name),
                model.model_fields[name].get_default(call_default_factory=True),
            )
            assert getattr(validated, name) == wanted or str(getattr(validated, name)) == str(
                wanted
            ), (spec["class"], name)


def test_default_order_validates_and_builds() -> None:
    order = load_order(default_order_path())
    assert order.name == "default"
    assert build_all(order) == []
    assert [p.name for p in order.chains.pre] == [
        "preselector",
        "quota_enforcer",
        "precondition_enforcer",
    ]
    assert [p.name for p in order.chains.post] == ["candidates", "disposition"]


def test_example_job_validates_with_its_own_settings() -> None:
    order = load_order(EXAMPLE)
    assert order.name == "example"
    assert order.operator.contact_url
    assert order.seeds.file == "seeds.txt"
    assert order.base_dir == str(EXAMPLE.parent.resolve())
    polite = order.frontier.politeness
    assert (polite.delay_factor, polite.min_delay_ms, polite.max_delay_ms) == (0, 0, 0)
    assert [p.name for p in order.chains.fetch] == ["fetch_dns", "fetch_http", "fetch_browser"]
    assert order.browser.enabled is False  # FetchBrowser turns itself off
    out, err = io.StringIO(), io.StringIO()
    assert validate_main(EXAMPLE, [], out, err) == 0, err.getvalue()
    assert err.getvalue() == ""
    assert yaml.safe_load(out.getvalue())["name"] == "example"


def test_a_compress_level_past_isals_range_names_the_fix() -> None:
    try:
        load_order(default_order_path(), ("chains.write.warc_writer.params.compress_level=6",))
    except OrderError as exc:
        (text,) = [str(issue) for issue in exc.issues]
    else:
        raise AssertionError("compress_level 6 with isal was accepted")
    assert text.startswith("chains.write[0] (warc_writer).params")
    assert "compress_level 6 is past isal's levels 1-3" in text
    assert "compressor: zlib" in text
    order = load_order(
        default_order_path(),
        (
            "chains.write.warc_writer.params.compress_level=6",
            "chains.write.warc_writer.params.compressor=zlib",
        ),
    )
    writer = next(spec for spec in order.chains.write if spec.name == "warc_writer")
    assert writer.params["compress_level"] == 6
