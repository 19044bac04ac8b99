"""The checks ``crawler run`` makes before a run directory exists (crawler.order.preflight), the
chains that add processors to the inherited chain (``after:``/``before:``) and dotted paths that
name a module beside the order."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from crawler.order.errors import OrderError
from crawler.order.loader import load_order
from crawler.order.preflight import load_checked_order
from crawler.uniq.redis_uniq import RedisUriUniqFilter

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"

pytestmark = pytest.mark.timeout(60)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def issues(path: Path, sets: tuple[str, ...] = ()) -> list[str]:
    with pytest.raises(OrderError) as exc:
        load_checked_order(path, sets)
    return [str(issue) for issue in exc.value.issues]


def extract_names(path: Path) -> list[str]:
    return [spec.name for spec in load_order(path).chains.extract]


def test_the_example_job_passes(tmp_path: Path) -> None:
    checked = load_checked_order(EXAMPLE)
    assert checked.seeds.uris and checked.order.name == "example"


def test_schema_errors_and_preflight_errors_come_in_one_pass(tmp_path: Path) -> None:
    order = write(
        tmp_path / "order.yaml",
        f"""\
        extends: {EXAMPLE}
        toe_thread: 3
        operator: {{contact_url: "not a url"}}
        seeds: {{file: missing.txt}}
        frontier: {{politeness: {{min_delay_ms: 500, max_delay_ms: 100}}}}
        history: {{import_from: nowhere}}
        dedup: {{collections: [{{cdxj: nowhere.cdxj}}]}}
        """,
    )
    found = issues(order)
    assert len(found) == 6, found
    for part in (
        "toe_thread",
        "operator.contact_url: must be an http(s) URL",
        "frontier.politeness.min_delay_ms: is more than",
        "seeds.file: cannot read",
        "history.import_from: no crawl history database",
        "dedup.collections[0].cdxj: not found",
    ):
        assert any(part in issue for issue in found), part


def test_no_usable_seed_names_each_bad_line(tmp_path: Path) -> None:
    write(tmp_path / "seeds.txt", "# two bad ones\nht!tp://x\n\nhttp://[::1\n")
    order = write(tmp_path / "order.yaml", f"extends: {EXAMPLE}\n")
    found = issues(order)
    assert found[0] == "seeds: no usable seed: a crawl needs at least one"
    assert "(seeds.txt line 2)" in found[1] and "(seeds.txt line 4)" in found[2]
    # one usable seed is enough: the bad line is a warning
    write(tmp_path / "seeds.txt", "ht!tp://x\nhttp://example.org/\n")
    checked = load_checked_order(order)
    assert checked.seeds.uris == ["http://example.org/"]
    assert "seeds.txt line 1" in checked.seeds.problems[0]


def test_all_zero_politeness_is_valid() -> None:
    sets = ("frontier.politeness={delay_factor: 0, min_delay_ms: 0, max_delay_ms: 0}",)
    assert load_checked_order(EXAMPLE, sets).order.frontier.politeness.max_delay_ms == 0


def test_placed_processors_join_the_inherited_chain(tmp_path: Path) -> None:
    order = write(
        tmp_path / "order.yaml",
        f"""\
        extends: {EXAMPLE}
        chains:
          extract:
            - {{after: extractor_html, name: css2, class: processors.extract.ExtractorCSS}}
            - {{before: extractor_http, name: xml2, class: processors.extract.ExtractorXML}}
        """,
    )
    inherited = extract_names(EXAMPLE)
    at = inherited.index("extractor_html") + 1
    assert extract_names(order) == ["xml2", *inherited[:at], "css2", *inherited[at:]]
    spec = {s.name: s for s in load_order(order).chains.extract}
    assert spec["extractor_js"].enabled is False  # the inherited specs keep their settings


def test_a_chain_without_places_still_replaces_the_inherited_one(tmp_path: Path) -> None:
    order = write(
        tmp_path / "order.yaml",
        f"""\
        extends: {EXAMPLE}
        chains:
          extract: [{{name: only, class: processors.extract.ExtractorHTML}}]
        """,
    )
    assert extract_names(order) == ["only"]


def test_bad_places_are_named(tmp_path: Path) -> None:
    order = write(
        tmp_path / "order.yaml",
        f"""\
        extends: {EXAMPLE}
        chains:
          extract:
            - {{after: nope, name: a, class: processors.extract.ExtractorCSS}}
            - {{after: extractor_html, before: extractor_css, name: b, class: x.Y}}
          write:
            - {{after: warc_writer, name: c, class: processors.extract.ExtractorCSS}}
            - {{name: d, class: processors.extract.ExtractorCSS}}
        """,
    )
    with pytest.raises(OrderError) as exc:
        load_order(order)
    found = [str(issue) for issue in exc.value.issues]
    assert len(found) == 3, found
    assert "chains.extract[0].after: no processor of that name in the chain extract" in found[0]
    assert "'nope'" in found[0] and "extractor_html" in found[0]
    assert "chains.extract[1]: give after: or before:, not both" in found[1]
    assert "chains.write: either every processor" in found[2]


def test_a_dotted_path_may_name_a_module_beside_the_order(tmp_path: Path) -> None:
    module = "beside_order_module_for_test"
    write(
        tmp_path / "job" / f"{module}.py",
        """\
        from crawler import Params, Processor

        class Noop(Processor[Params]):
            \"\"\"Does nothing.\"\"\"
        """,
    )
    order = write(
        tmp_path / "job" / "order.yaml",
        f"""\
        extends: {EXAMPLE}
        chains:
          post:
            - {{after: disposition, name: noop, class: {module}.Noop}}
        """,
    )
    try:
        assert load_order(order).chains.post[-1].class_ == f"{module}.Noop"
    finally:
        sys.modules.pop(module, None)
        sys.path.remove(str((tmp_path / "job").resolve()))


def test_history_from_the_previous_run_needs_no_earlier_run() -> None:
    checked = load_checked_order(EXAMPLE, ("history.import_from=previous",))
    assert checked.order.history.import_from == "previous"


def test_no_seeds_is_refused_unless_the_crawl_starts_paused() -> None:
    sets = ("seeds.file=null",)
    with pytest.raises(OrderError) as exc:
        load_checked_order(EXAMPLE, sets)
    assert "seeds: the order has no seeds" in str(exc.value)
    checked = load_checked_order(EXAMPLE, (*sets, "pause_at_start=true"))
    assert checked.seeds.uris == []


REDIS_STORE = 'frontier.store={"class": "crawler.frontier.RedisQueueStore"}'


def test_a_local_frontier_over_a_shared_store_is_refused_with_the_fix() -> None:
    (found,) = issues(EXAMPLE, (REDIS_STORE,))
    assert found.startswith("frontier.class: keeps its queues in one process"), found
    assert "crawler.frontier.RedisQueueStore" in found
    assert "set frontier.class: crawler.frontier.RedisFrontier" in found


def test_a_shared_frontier_over_a_local_store_is_refused_with_the_fix() -> None:
    (found,) = issues(EXAMPLE, ("frontier.class=crawler.frontier.RedisFrontier",))
    assert found.startswith("frontier.class: shares its queues between processes"), found
    assert "frontier.store.class: crawler.frontier.RedisQueueStore" in found


def test_a_shared_frontier_over_a_shared_store_passes() -> None:
    checked = load_checked_order(
        EXAMPLE, (REDIS_STORE, "frontier.class=crawler.frontier.RedisFrontier")
    )
    assert checked.order.frontier.class_ == "crawler.frontier.RedisFrontier"


def test_a_frontier_class_that_is_no_frontier_is_named_at_load() -> None:
    with pytest.raises(OrderError) as exc:
        load_order(EXAMPLE, ["frontier.class=crawler.frontier.LevelDBQueueStore"])
    (found,) = [str(i) for i in exc.value.issues]
    assert found.startswith("frontier.class: crawler.frontier.LevelDBQueueStore is not a Frontier")


def test_workers_give_an_order_with_a_shared_store_the_shared_frontier() -> None:
    from crawler.distributed.overrides import shared_frontier_sets, worker_overrides

    order = load_order(EXAMPLE, [REDIS_STORE])
    sets = worker_overrides(order, "redis://127.0.0.1:1/0", "ns:", "w1")
    assert "frontier.class=crawler.frontier.RedisFrontier" in sets
    joined = load_order(EXAMPLE, [REDIS_STORE, *sets])
    assert shared_frontier_sets(joined) == []  # named already: nothing more to set


class _MyRedisUniq(RedisUriUniqFilter):
    """A user's own filter built on the shared one (another class name)."""


LEVELDB_UNIQ = 'frontier.uniq_filter={"class": "crawler.uniq.LevelDBUriUniqFilter"}'


def test_workers_keep_a_shared_uniq_filter_of_any_name_and_replace_a_local_one() -> None:
    from crawler.distributed.overrides import worker_overrides

    mine = f"{__name__}._MyRedisUniq"
    own = f'frontier.uniq_filter={{"class": "{mine}"}}'
    order = load_order(EXAMPLE, [REDIS_STORE, own])
    joined = load_order(
        EXAMPLE,
        [
            REDIS_STORE,
            own,
            *worker_overrides(order, "redis://127.0.0.1:1/0", "ns:", "w1"),
        ],
    )
    assert joined.frontier.uniq_filter.class_ == mine
    assert joined.frontier.uniq_filter.params["url"] == "redis://127.0.0.1:1/0"
    assert joined.frontier.uniq_filter.params["namespace"] == "ns:"

    local = load_order(EXAMPLE, [REDIS_STORE, LEVELDB_UNIQ])
    sets = worker_overrides(local, "redis://127.0.0.1:1/0", "ns:", "w1")
    replaced = load_order(
        EXAMPLE,
        [REDIS_STORE, LEVELDB_UNIQ, *sets],
    )
    assert replaced.frontier.uniq_filter.class_.endswith("RedisUriUniqFilter")
