"""Sheets: checking overlays like the order (YAML paths and hints), which sheets a URI takes and
how they stack, params_for with and without sheets, and sheets documents changed at run time."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
import yaml

from crawler.curi import CrawlURI
from crawler.order.errors import OrderError
from crawler.order.loader import load_order
from crawler.order.preflight import validate_main
from crawler.order.schema import CrawlOrder, SheetConfig
from crawler.sheets import SheetOverlays
from crawler.sheets.sheet_compiler import host_prefixes
from crawler.sheets.sheet_updates import (
    dump_sheets,
    load_saved_sheets,
    merge_sheets,
    read_sheet_document,
    save_sheets,
)
from processors.fetch.fetch_http import FetchHTTP

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"

pytestmark = pytest.mark.timeout(30)


def order_with(tmp_path: Path, sheets: list[dict[str, object]]) -> Path:
    path = tmp_path / "order.yaml"
    doc = {"extends": str(EXAMPLE), "seeds": {"file": None, "urls": ["http://a.org/"]}}
    path.write_text(yaml.safe_dump({**doc, "sheets": sheets}))
    return path


def issues_of(tmp_path: Path, sheets: list[dict[str, object]]) -> list[str]:
    with pytest.raises(OrderError) as caught:
        load_order(order_with(tmp_path, sheets))
    return [str(issue) for issue in caught.value.issues]


def test_an_unknown_key_is_reported_at_its_yaml_path_with_the_closest_key(tmp_path: Path) -> None:
    ok = {"name": "ok", "hosts": ["example.org"], "settings": {}}
    bad = {
        "name": "typo",
        "hosts": ["example.org"],
        "settings": {"chains": {"fetch": {"fetch_http": {"params": {"timout_s": 5}}}}},
    }
    issues = issues_of(tmp_path, [ok, ok | {"name": "ok2"}, bad])
    assert issues == [
        "sheets[2].settings.chains.fetch.fetch_http.params.timout_s: unknown key 'timout_s'; "
        "did you mean 'timeout_s'?"
    ]


def test_every_bad_overlay_is_reported_at_once(tmp_path: Path) -> None:
    sheets = [
        {
            "name": "a",
            "surt_prefixes": ["http://(org,example,"],
            "settings": {
                "chains.fetch.fetch_http.params.max_length_bytes": -3,
                "frontier.politeness.min_delay": 4,
                "scope.TooManyHopsDecideRule.params.max_hops": "many",
                "limits.max_documents": 3,
                "chains.fetch.fetch_htp.params.timeout_s": 3,
                "chains.fetch.fetch_http.params.timeout_s": 3,
                "chains.fetch.fetch_http.params.http2": True,
                "frontier.politeness.host_max_connections": 1,
                "scope.TransclusionDecideRule.params.max_trans_hops": 1,
            },
        },
        {"name": "a", "hosts": ["exa mple.org"]},
        {"name": "nowhere", "settings": {"frontier.politeness.min_delay_ms": 1}},
    ]
    issues = "\n".join(issues_of(tmp_path, sheets))
    expected = [
        "sheets[0].settings.chains.fetch.fetch_http.params.max_length_bytes: input should be "
        "greater than or equal to 0 (got -3)",
        "sheets[0].settings.frontier.politeness.min_delay: unknown key 'min_delay'; "
        "did you mean 'min_delay_ms'?",
        "sheets[0].settings.scope.TooManyHopsDecideRule.params.max_hops: input should be a "
        "valid integer",
        "sheets[0].settings.limits.max_documents: not a key a sheet can set",
        "sheets[0].settings.chains.fetch.fetch_htp.params.timeout_s: no processor 'fetch_htp' "
        "in chain 'fetch'; did you mean 'fetch_http'?",
        "sheets[0].settings.chains.fetch.fetch_http.params.http2: 'http2' is not a per-site "
        "setting: it applies crawl-wide; per-site params of fetch_http: max_length_bytes, "
        "proxy_url, timeout_s",
        "sheets[0].settings.frontier.politeness.host_max_connections: 'host_max_connections' is "
        "not a per-site setting: it applies crawl-wide; per-site politeness: delay_factor,",
        "sheets[0].settings.scope.TransclusionDecideRule.params.max_trans_hops: 'max_trans_hops' "
        "is not a per-site setting: it applies crawl-wide; scope rule TransclusionDecideRule "
        "reads no params per URI",
        "sheets[1].name: duplicate sheet name",
        "sheets[1].hosts[0]: not a host name",
        "sheets[2]: the sheet applies to no URI",
    ]
    for text in expected:
        assert text in issues
    assert "timeout_s: " not in issues.replace("fetch_htp.params.timeout_s: no", "")


def test_crawler_validate_prints_the_sheet_errors(tmp_path: Path) -> None:
    path = order_with(
        tmp_path,
        [{"name": "x", "hosts": ["a.org"], "settings": {"frontier.politeness.delay_factor": -1}}],
    )
    out, err = io.StringIO(), io.StringIO()
    assert validate_main(path, [], out, err) == 2
    assert "sheets[0].settings.frontier.politeness.delay_factor: input should be greater" in (
        err.getvalue()
    )


def test_a_valid_sheet_passes_and_shows_in_the_effective_order(tmp_path: Path) -> None:
    sheet = {
        "name": "slow",
        "hosts": ["example.org"],
        "settings": {"frontier.politeness.min_delay_ms": 9000},
    }
    out, err = io.StringIO(), io.StringIO()
    assert validate_main(order_with(tmp_path, [sheet]), [], out, err) == 0, err.getvalue()
    assert yaml.safe_load(out.getvalue())["sheets"][0]["name"] == "slow"


def test_host_prefixes_cover_every_port_but_not_subdomains() -> None:
    assert host_prefixes("Example.org") == ["http://(org,example,)", "http://(org,example,:"]
    assert host_prefixes("localhost:8080") == ["http://(localhost,:8080)"]
    with pytest.raises(ValueError):
        host_prefixes("a/b")


def sheet(name: str, settings: dict[str, object], **where: list[str]) -> SheetConfig:
    return SheetConfig.model_validate({"name": name, "settings": settings, **where})


@pytest.fixture(scope="module")
def order() -> CrawlOrder:
    return load_order(EXAMPLE)


def test_the_longest_prefix_wins_and_shorter_prefixes_stack_beneath(order: CrawlOrder) -> None:
    sheets = SheetOverlays(
        order,
        [
            sheet(
                "deep",
                {"frontier.politeness.min_delay_ms": 100},
                surt_prefixes=["http://www.example.org/private/"],
            ),
            sheet(
                "site",
                {"frontier.politeness.min_delay_ms": 5000, "frontier.politeness.delay_factor": 2},
                hosts=["www.example.org"],
            ),
            sheet("org", {"frontier.politeness.max_delay_ms": 7}, surt_prefixes=["(org,"]),
        ],
    )
    deep = sheets.overlay_for(CrawlURI("https://www.example.org/private/x"))
    assert deep.names == ("org", "site", "deep")
    assert deep.politeness.min_delay_ms == 100
    assert deep.politeness.delay_factor == 2
    assert deep.politeness.max_delay_ms == 7
    public = sheets.overlay_for(CrawlURI("http://www.example.org:8080/public"))
    assert public.names == ("org", "site")
    assert public.politeness.min_delay_ms == 5000
    other = sheets.overlay_for(CrawlURI("http://sub.www.example.org/"))
    assert other.names == ("org",)
    none = sheets.overlay_for(CrawlURI("http://example.com/"))
    assert none.empty and none.politeness is order.frontier.politeness


def test_params_for_is_the_base_params_without_sheets_and_overlaid_with_them(
    order: CrawlOrder,
) -> None:
    fetch = FetchHTTP("fetch_http")
    curi = CrawlURI("http://slow.example/a")
    assert fetch.params_for(curi) is fetch.params
    sheets = SheetOverlays(order, [])
    fetch._sheets = sheets
    assert fetch.params_for(curi) is fetch.params
    sheets.replace(
        [sheet("slow", {"chains.fetch.fetch_http.params.timeout_s": 99}, hosts=["slow.example"])]
    )
    assert fetch.params_for(curi).timeout_s == 99
    assert fetch.params_for(curi) is fetch.params_for(CrawlURI("http://slow.example/b"))
    assert fetch.params_for(CrawlURI("http://fast.example/")) is fetch.params
    # A URI resolved before a change sees the new sheets at its next lookup.
    sheets.replace([])
    assert fetch.params_for(curi) is fetch.params


def test_an_invalid_replacement_changes_nothing(order: CrawlOrder) -> None:
    good = sheet("a", {"frontier.politeness.min_delay_ms": 5}, hosts=["a.org"])
    sheets = SheetOverlays(order, [good])
    version = sheets.version
    with pytest.raises(OrderError):
        sheets.replace([sheet("b", {"frontier.politeness.min_delay_ms": -5}, hosts=["b.org"])])
    assert sheets.version == version and [c.name for c in sheets.configs] == ["a"]


def test_a_sheets_document_adds_replaces_and_removes_by_name(tmp_path: Path) -> None:
    current = [sheet("a", {}, hosts=["a.org"]), sheet("b", {}, hosts=["b.org"])]
    text = yaml.safe_dump(
        {
            "sheets": [{"name": "a", "hosts": ["a2.org"]}, {"name": "c", "hosts": ["c.org"]}],
            "remove": ["b"],
        }
    )
    merged = merge_sheets(current, *read_sheet_document(text, "x.sheets"))
    assert [(s.name, s.hosts) for s in merged] == [("a", ["a2.org"]), ("c", ["c.org"])]
    only_list = read_sheet_document(yaml.safe_dump([{"name": "d", "hosts": ["d.org"]}]), "y")
    assert [s.name for s in only_list[0]] == ["d"] and only_list[1] == []
    save_sheets(tmp_path, merged)
    assert load_saved_sheets(tmp_path) == merged
    assert read_sheet_document(dump_sheets(merged), "z")[0] == merged
    with pytest.raises(OrderError) as caught:
        read_sheet_document("sheets: [{name: e, hostz: [e.org]}]", "bad.sheets")
    assert "bad.sheets: sheets[0]: unknown key 'hostz'; did you mean 'hosts'?" in str(caught.value)


def test_crawler_sheets_checks_the_change_then_drops_an_action_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from crawler.cli import main
    from crawler.order.loader import effective_yaml

    run = tmp_path / "run"
    (run / "action").mkdir(parents=True)
    (run / "logs").mkdir()
    (run / "order.effective.yaml").write_text(effective_yaml(load_order(EXAMPLE)))
    bad = tmp_path / "bad.sheets"
    bad.write_text(yaml.safe_dump([{"name": "x", "hosts": ["a.org"], "settings": {"a.b": 1}}]))
    assert main(["sheets", str(run), str(bad)]) == 2
    assert (
        "bad.sheets: sheets[0].settings.a.b: not a key a sheet can set" in capsys.readouterr().err
    )
    assert not list((run / "action").iterdir())
    good = tmp_path / "good.sheets"
    good.write_text(yaml.safe_dump([{"name": "x", "hosts": ["a.org"], "settings": {}}]))
    assert main(["sheets", str(run), str(good)]) == 0
    assert "when it is resumed" in capsys.readouterr().out
    (dropped,) = (run / "action").glob("*.sheets")
    assert read_sheet_document(dropped.read_text(), "x")[0][0].name == "x"


def test_a_resumed_crawl_starts_with_the_sheets_it_had(tmp_path: Path, order: CrawlOrder) -> None:
    from crawler.control.controller import CrawlController

    run = tmp_path / "run"
    run.mkdir()
    save_sheets(run, [sheet("kept", {"frontier.politeness.min_delay_ms": 7}, hosts=["a.org"])])
    resumed = CrawlController(order, run, install_signals=False, resume=True)
    assert [s.name for s in resumed.sheets.configs] == ["kept"]
    fresh = CrawlController(order, tmp_path / "other", install_signals=False)
    assert fresh.sheets.configs == []


def test_an_invalid_sheets_action_file_is_logged_and_changes_nothing(
    tmp_path: Path, order: CrawlOrder
) -> None:
    import structlog

    from crawler.control.controller import CrawlController
    from crawler.control.steering import ActionDirectory

    run = tmp_path / "run"
    controller = CrawlController(order, run, install_signals=False)
    actions = ActionDirectory(run / "action", controller, structlog.get_logger(), print)
    (run / "action").mkdir(parents=True)
    good = [{"name": "a", "hosts": ["a.org"], "settings": {"frontier.politeness.delay_factor": 1}}]
    bad = [{"name": "b", "hosts": ["b.org"], "settings": {"frontier.politeness.delay_factor": -1}}]
    (run / "action" / "1.sheets").write_text(yaml.safe_dump(good))
    ok = {"name": "c", "hosts": ["c.org"]}
    (run / "action" / "2.sheets").write_text(
        yaml.safe_dump({"sheets": [ok, *bad], "remove": ["a"]})
    )
    for path in (run / "action").glob("*.sheets"):
        os.utime(path, (1, 1))  # settled: written long ago
    with structlog.testing.capture_logs() as logs:
        assert actions.poll() == 2
    assert [s.name for s in controller.sheets.configs] == ["a"]
    assert [s.name for s in load_saved_sheets(run) or []] == ["a"]
    failed = [entry for entry in logs if entry["event"] == "action_failed"]
    assert len(failed) == 1 and failed[0]["file"] == "2.sheets"
    assert "2.sheets: sheets[1].settings.frontier.politeness.delay_factor" in failed[0]["error"]
    assert sorted(p.name.split(".", 1)[1] for p in (run / "action" / "done").iterdir()) == [
        "1.sheets",
        "2.sheets",
    ]


def test_show_processor_lists_the_params_a_sheet_may_set() -> None:
    from crawler.order.components import show_processor_main

    out, err = io.StringIO(), io.StringIO()
    assert show_processor_main("processors.prefetch.QuotaEnforcer", out, err) == 0
    assert out.getvalue().splitlines()[-1] == (
        "Per-site (sheets): domain_max_bytes, domain_max_urls, host_max_bytes, host_max_urls"
    )
