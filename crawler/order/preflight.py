"""Preflight: every check ``crawler run`` makes of an order before it creates a run directory.

:func:`load_checked_order` loads an order (schema, components, sheets: :func:`load_order`) and
then checks what a crawl needs beyond a valid document: every component builds
(:func:`build_all`), ``operator.contact_url`` is an http(s) URL, ``frontier.class`` suits
``frontier.store`` (both shared by many processes, or neither), ``frontier.politeness`` has
``min_delay_ms <= max_delay_ms``, the seeds file can be read and at least one seed is usable
(none at all is allowed with ``pause_at_start``: seeds can be added while it waits),
``history.import_from`` holds a crawl history, each ``dedup.collections[i].cdxj`` exists, the
files ``browser:`` names exist. All problems are raised together as one :class:`OrderError`;
when the document itself is invalid, the sections that are valid on their own are still
checked, so one pass reports everything.
``crawler run``, ``crawler crawl``, ``crawler demo``, ``crawler validate`` and the console's
launch form all call it, so they refuse the same orders. It reads the order's files and the seeds
file, imports component modules and builds components (no I/O: their ``__init__`` does none);
it writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeVar

from pydantic import BaseModel, ValidationError

from crawler.exit_code import ExitCode
from crawler.frontier.store.queue_store import store_is_shared
from crawler.history import history_databases
from crawler.order import components
from crawler.order.errors import OrderError, OrderIssue
from crawler.order.loader import (
    apply_sets,
    build_all,
    contact_issue,
    effective_yaml,
    load_order,
    read_order_data,
)
from crawler.order.schema import (
    LOCAL_FRONTIER_CLASS,
    SHARED_FRONTIER_CLASS,
    BrowserConfig,
    CrawlOrder,
    DedupConfig,
    FrontierConfig,
    HistoryConfig,
    OperatorConfig,
    PolitenessConfig,
    SeedsConfig,
)
from crawler.seeds.seed_list import SeedList, read_seeds

_Section = TypeVar("_Section", bound=BaseModel)


@dataclass(frozen=True)
class Preflight:
    """An order that passed every check, and its seeds (whose ``problems`` are warnings)."""

    order: CrawlOrder
    seeds: SeedList


def seed_issues(
    config: SeedsConfig, base_dir: Path, paused: bool = False
) -> tuple[list[OrderIssue], SeedList]:
    """A crawl needs a readable seeds file and at least one usable seed (unless it starts
    ``paused``: seeds may then be added before it runs): the problems (each bad line named when
    none is usable) and the seeds read."""
    try:
        seeds = read_seeds(config, base_dir)
    except OrderError as exc:
        return exc.issues, SeedList()
    if seeds.uris:
        return [], seeds
    if not seeds.errors:
        if paused:
            return [], seeds
        issue = OrderIssue(
            "seeds",
            "the order has no seeds (seeds.file, seeds.urls)",
            hint="a crawl with pause_at_start: true may start without and take them while paused",
        )
        return [issue], seeds
    issues = [OrderIssue("seeds", "no usable seed: a crawl needs at least one")]
    issues.extend(OrderIssue("seeds", error) for error in seeds.errors)
    return issues, seeds


def politeness_issues(politeness: PolitenessConfig) -> list[OrderIssue]:
    """``min_delay_ms`` above ``max_delay_ms`` is refused (the cap would silently win)."""
    if politeness.min_delay_ms <= politeness.max_delay_ms:
        return []
    return [
        OrderIssue(
            "frontier.politeness.min_delay_ms",
            f"is more than frontier.politeness.max_delay_ms ({politeness.max_delay_ms})",
            politeness.min_delay_ms,
            hint="raise max_delay_ms or lower min_delay_ms",
        )
    ]


def frontier_store_issues(frontier: FrontierConfig) -> list[OrderIssue]:
    """``frontier.class`` must suit ``frontier.store``: a frontier that shares its queues with
    other processes needs a store they share, and a frontier of one process a store of its own.
    A class that cannot be resolved is left to the component checks. The crawl builder makes
    the same check before it builds the frontier."""
    try:
        frontier_cls = components.frontier_class(frontier.class_)
        store_cls = components.resolve_class(
            frontier.store.class_, components.frontier_base("store"), "frontier.store.class"
        )
    except OrderError:
        return []
    shared_store = store_is_shared(store_cls)
    if frontier_cls.shared == shared_store:
        return []
    if shared_store:
        problem = (
            f"keeps its queues in one process, but frontier.store ({frontier.store.class_}) is "
            "shared by many"
        )
        hint = (
            f"set frontier.class: {SHARED_FRONTIER_CLASS} (run with --workers N or `crawler "
            "worker`, which set it), or a store of this process such as "
            "crawler.frontier.LevelDBQueueStore"
        )
    else:
        problem = (
            f"shares its queues between processes, but frontier.store ({frontier.store.class_}) "
            "belongs to one process"
        )
        hint = (
            "set frontier.store.class: crawler.frontier.RedisQueueStore (params: {url: "
            f"redis://HOST:6379/0}}), or frontier.class: {LOCAL_FRONTIER_CLASS}"
        )
    return [OrderIssue("frontier.class", problem, frontier.class_, hint=hint)]


def history_issues(history: HistoryConfig, base_dir: Path) -> list[OrderIssue]:
    """``history.import_from`` must hold a crawl history (a state or run directory); the word
    ``previous`` (the job's latest finished run, none before its first) needs none."""
    from crawler.schedule.previous_run import PREVIOUS  # resolved when a run is laid out

    if not history.enabled or not history.import_from or history.import_from == PREVIOUS:
        return []
    try:
        history_databases(base_dir / Path(history.import_from).expanduser())
    except FileNotFoundError as exc:
        return [OrderIssue("history.import_from", str(exc), history.import_from)]
    return []


def dedup_issues(dedup: DedupConfig, base_dir: Path) -> list[OrderIssue]:
    """Each ``dedup.collections[i].cdxj`` must exist (a file, directory or run directory)."""
    issues = []
    for n, spec in enumerate(dedup.collections):
        if spec.cdxj is not None and not (base_dir / Path(spec.cdxj).expanduser()).exists():
            path = base_dir / Path(spec.cdxj).expanduser()
            issues.append(OrderIssue(f"dedup.collections[{n}].cdxj", f"not found: {path}"))
    return issues


def browser_issues(browser: BrowserConfig, base_dir: Path) -> list[OrderIssue]:
    """The files ``browser:`` names (custom behaviours, browsertrix-behaviors, the profile)
    must exist; FetchBrowser reads them at start."""
    named: list[tuple[str, str | None]] = [
        (f"browser.behaviours[{n}]", f) for n, f in enumerate(browser.behaviour_files())
    ]
    named += [("browser.browsertrix_behaviors", browser.browsertrix_behaviors)]
    named += [("browser.profile", browser.profile)]
    issues = []
    for key, name in named:
        if name and not (base_dir / Path(name).expanduser()).is_file():
            path = base_dir / Path(name).expanduser()
            issues.append(OrderIssue(key, f"no such file: {path}", hint="relative to the order"))
    return issues


def order_issues(order: CrawlOrder) -> tuple[list[OrderIssue], SeedList]:
    """Every problem of a valid ``order`` that would stop a crawl, and its seeds."""
    base_dir = Path(order.base_dir)
    issues = build_all(order)
    contact = contact_issue(order.operator)
    if contact is not None:
        issues.append(contact)
    issues.extend(frontier_store_issues(order.frontier))
    issues.extend(politeness_issues(order.frontier.politeness))
    found, seeds = seed_issues(order.seeds, base_dir, order.pause_at_start)
    issues.extend(found)
    issues.extend(history_issues(order.history, base_dir))
    issues.extend(dedup_issues(order.dedup, base_dir))
    issues.extend(browser_issues(order.browser, base_dir))
    return issues, seeds


def _section(model: type[_Section], data: Mapping[str, Any], *keys: str) -> _Section | None:
    """``data[keys...]`` as ``model``, None if it is not valid on its own."""
    node: Any = data
    for key in keys:
        node = node.get(key, {}) if isinstance(node, Mapping) else None
    if not isinstance(node, Mapping):
        return None
    try:
        return model.model_validate(node)
    except ValidationError:
        return None


def _valid_section_issues(path: Path, sets: Sequence[str]) -> list[OrderIssue]:
    """The checks of :func:`order_issues` on the sections of an invalid order that are valid
    on their own (the components are left to the schema's own checks)."""
    try:
        data = read_order_data(path)
    except OrderError:
        return []
    apply_sets(data, sets)
    given = data.get("base_dir")
    base_dir = path.resolve().parent
    base_dir = base_dir / given if isinstance(given, str) else base_dir
    issues: list[OrderIssue] = []
    paused = data.get("pause_at_start") is True
    checks: list[tuple[type[Any], tuple[str, ...], Callable[[Any], list[OrderIssue]]]] = [
        (OperatorConfig, ("operator",), lambda s: [i for i in [contact_issue(s)] if i]),
        (PolitenessConfig, ("frontier", "politeness"), politeness_issues),
        (SeedsConfig, ("seeds",), lambda s: seed_issues(s, base_dir, paused)[0]),
        (HistoryConfig, ("history",), lambda s: history_issues(s, base_dir)),
        (DedupConfig, ("dedup",), lambda s: dedup_issues(s, base_dir)),
        (BrowserConfig, ("browser",), lambda s: browser_issues(s, base_dir)),
    ]
    for model, keys, check in checks:
        section = _section(model, data, *keys)
        if section is not None:
            issues.extend(check(section))
    return issues


def load_checked_order(path: str | Path, sets: Sequence[str] = ()) -> Preflight:
    """Load the order at ``path`` with ``sets`` and make every check; raises one OrderError
    holding every problem found (see the module docstring)."""
    order_path = Path(path)
    try:
        order = load_order(order_path, sets)
    except OrderError as exc:
        more = [i for i in _valid_section_issues(order_path, sets) if i not in exc.issues]
        raise OrderError([*exc.issues, *more], exc.source or str(order_path)) from None
    issues, seeds = order_issues(order)
    if issues:
        raise OrderError(issues, str(order_path))
    return Preflight(order, seeds)


def validate_main(order_path: str | Path, sets: Sequence[str], out: IO[str], err: IO[str]) -> int:
    """``crawler validate ORDER``: every check ``crawler run`` makes
    (:func:`load_checked_order`), then the effective order (exit 0) or every error at once
    (exit 2); a seed line that is skipped is a warning."""
    try:
        checked = load_checked_order(order_path, sets)
    except OrderError as exc:
        err.write(f"{exc}\n")
        return ExitCode.USAGE
    out.write(effective_yaml(checked.order))
    for problem in checked.seeds.problems:
        err.write(f"warning: {problem}\n")
    return ExitCode.OK
