"""Load a crawl order: YAML → ``extends:`` chain → ``--set`` overrides → validated CrawlOrder.

``extends:`` names the order this one builds on, relative to the file or absolute; when absent it
is ``conf/default-order.yaml``; ``extends: none`` (or null) starts from nothing. Mappings merge
recursively; lists and scalars replace. ``--set dotted.key=VALUE`` (VALUE is YAML) then edits the
merged document: list items are addressed by index (``chains.fetch.0``, ``chains.fetch[0]``) or,
in chains, by processor name (``chains.fetch.fetch_http.params.timeout_s=5``).
Validation covers the schema and every component (class path, kind, params); all problems are
raised together as one :class:`OrderError`. Loading imports component modules but does no other
I/O than reading the order files. Heritrix counterpart: the job's ``crawler-beans.cxml`` with
its profile and overrides.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import yaml
from pydantic import ValidationError

from crawler.decide.decide_rule import DecideRule
from crawler.order.bounded_loader import BoundedLoader, YamlTooLargeError, load_yaml
from crawler.order.components import (
    FRONTIER_BASES,
    add_import_dir,
    build_chains,
    build_frontier_part,
    build_rules,
    check_spec,
    duplicate_name_issues,
    frontier_base,
    frontier_class,
)
from crawler.order.errors import (
    NO_VALUE,
    OrderError,
    OrderIssue,
    format_path,
    issues_from_validation,
)
from crawler.order.schema import CHAIN_NAMES, CrawlOrder, FrontierConfig, OperatorConfig
from crawler.processor import Processor
from crawler.secrets.secret_refs import SECRETS_FILE, SecretBook, resolve_secrets
from crawler.secrets.secret_registry import remember
from crawler.shipped import shipped
from crawler.urls import is_http_url

_MISSING: Final = object()
_NONE_WORDS = frozenset({"none", "null", "~", ""})


def default_order_path() -> Path:
    """``conf/default-order.yaml``: the checkout's, or the installed package's copy."""
    return shipped("conf/default-order.yaml")


class _StrictLoader(BoundedLoader):
    """SafeLoader that rejects a key given twice in one mapping (YAML would keep the last) and
    an alias bomb (:class:`~crawler.order.bounded_loader.BoundedLoader`)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[object, int] = {}
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag.endswith(":merge"):
                continue
            key = self.construct_object(key_node, deep=True)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"duplicate key {key!r} (first given on line {seen[key]})",
                    key_node.start_mark,
                )
            seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep)


def _read_yaml(path: Path) -> dict[str, Any]:
    """One order file as a mapping; syntax errors give file, line and column."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise OrderError([OrderIssue(str(path), f"cannot read: {exc.strerror or exc}")]) from None
    except UnicodeDecodeError as exc:
        issue = OrderIssue(str(path), f"cannot read: not UTF-8 text (byte {exc.start})")
        raise OrderError([issue]) from None
    try:
        data = yaml.load(text, Loader=_StrictLoader)
    except YamlTooLargeError as exc:
        raise OrderError([OrderIssue(str(path), str(exc))]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = " ".join(filter(None, [exc.context, exc.problem]))
        raise OrderError([OrderIssue(where, f"YAML syntax error: {problem}")]) from None
    except yaml.YAMLError as exc:
        raise OrderError([OrderIssue(str(path), f"YAML syntax error: {exc}")]) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        issue = OrderIssue(str(path), "an order must be a mapping of keys", type(data).__name__)
        raise OrderError([issue])
    return data


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` on top of ``base``: mappings merge recursively; anything else replaces.

    A component mapping whose ``class`` changes is replaced whole: the parent's params belong
    to the parent's class.
    """
    merged = dict(base)
    for key, value in over.items():
        below = merged.get(key)
        if (
            isinstance(below, Mapping)
            and isinstance(value, Mapping)
            and "class" in value
            and value.get("class") != below.get("class")
        ):
            merged[key] = dict(value)
        elif isinstance(below, Mapping) and isinstance(value, Mapping):
            merged[key] = deep_merge(below, value)
        else:
            merged[key] = value
    return merged


def _parent_of(path: Path, data: dict[str, Any]) -> Path | None:
    ext = data.pop("extends", _MISSING)
    if ext is _MISSING:
        default = default_order_path()
        return None if path == default else default
    if ext is None or (isinstance(ext, str) and ext.strip().lower() in _NONE_WORDS):
        return None
    if not isinstance(ext, str):
        raise OrderError([OrderIssue(f"{path}: extends", "must be a file path or none", ext)])
    return (path.parent / Path(ext).expanduser()).resolve()


_PLACES = ("after", "before")


def _place_in_chains(
    below: Mapping[str, Any], layer: dict[str, Any], source: Path
) -> tuple[dict[str, Any], list[OrderIssue]]:
    """``layer`` with each chain list of placed processors (every item says ``after: NAME``
    or ``before: NAME``) turned into the chain of ``below`` with them inserted there. A list
    without places replaces the chain, as any list does; a list mixing both is an error."""
    chains = layer.get("chains")
    if not isinstance(chains, Mapping):
        return layer, []
    below_chains = below.get("chains")
    if not isinstance(below_chains, Mapping):
        below_chains = {}
    issues: list[OrderIssue] = []
    placed = dict(chains)
    for chain, items in chains.items():
        if not isinstance(items, list):
            continue
        marked = [isinstance(i, Mapping) and any(k in i for k in _PLACES) for i in items]
        if not any(marked):
            continue
        where = f"{source}: chains.{chain}"
        if not all(marked):
            issues.append(
                OrderIssue(
                    where,
                    "either every processor of the list says where it goes (after: or "
                    "before: a processor of the inherited chain) or none does (the list "
                    "replaces the chain)",
                )
            )
            continue
        result = [dict(spec) for spec in below_chains.get(chain) or [] if isinstance(spec, Mapping)]
        for n, item in enumerate(items):
            spec = dict(item)
            keys = [k for k in _PLACES if k in spec]
            if len(keys) > 1:
                issues.append(OrderIssue(f"{where}[{n}]", "give after: or before:, not both"))
                continue
            anchor = spec.pop(keys[0])
            names = [spec_below.get("name") for spec_below in result]
            if anchor not in names:
                issues.append(
                    OrderIssue(
                        f"{where}[{n}].{keys[0]}",
                        f"no processor of that name in the chain {chain}",
                        anchor,
                        hint=f"its processors: {', '.join(map(str, names)) or 'none'}",
                    )
                )
                continue
            at = names.index(anchor)
            result.insert(at + 1 if keys[0] == "after" else at, spec)
        placed[chain] = result
    return {**layer, "chains": placed}, issues


def read_order_data(path: str | Path) -> dict[str, Any]:
    """The order at ``path`` merged over its ``extends:`` chain, ``extends`` removed. A chain
    whose processors each say ``after: NAME`` or ``before: NAME`` adds them to the chain it
    inherits (see :func:`_place_in_chains`)."""
    chain = [Path(path).resolve()]
    layers: list[dict[str, Any]] = []
    while True:
        data = _read_yaml(chain[-1])
        parent = _parent_of(chain[-1], data)
        layers.append(data)
        if parent is None:
            break
        if parent in chain:
            cycle = " -> ".join(str(p) for p in [*chain, parent])
            raise OrderError([OrderIssue(f"{chain[-1]}: extends", f"extends cycle: {cycle}")])
        if not parent.is_file():
            issue = OrderIssue(f"{chain[-1]}: extends", "file not found", str(parent))
            raise OrderError([issue])
        chain.append(parent)
    merged: dict[str, Any] = {}
    issues: list[OrderIssue] = []
    for source, layer in zip(reversed(chain), reversed(layers), strict=True):
        layer, found = _place_in_chains(merged, layer, source)
        issues.extend(found)
        merged = deep_merge(merged, layer)
    if issues:
        raise OrderError(issues)
    return merged


def _list_index(node: list[Any], key: str) -> int | None:
    if re.fullmatch(r"-?\d+", key):
        index = int(key)
        return index if -len(node) <= index < len(node) else None
    for i, item in enumerate(node):
        if isinstance(item, Mapping) and item.get("name") == key:
            return i
    return None


def _apply_set(data: dict[str, Any], text: str) -> OrderIssue | None:
    where = f"--set {text}"
    key, sep, raw_value = text.partition("=")
    key = re.sub(r"\[(-?\d+)\]", r".\1", key.strip())
    keys = key.split(".")
    if not sep or not key or not all(keys):
        return OrderIssue(where, "expected KEY=VALUE with a dotted KEY", hint="e.g. toe_threads=50")
    try:
        value = load_yaml(raw_value)
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc)
        return OrderIssue(where, f"VALUE is not valid YAML: {problem}", raw_value)
    node: Any = data
    for i, part in enumerate(keys):
        last = i == len(keys) - 1
        here = ".".join(keys[:i]) or "the order"
        if isinstance(node, dict):
            if last:
                node[part] = value
                return None
            if node.get(part) is None:
                node[part] = {}
            node = node[part]
        elif isinstance(node, list):
            index = _list_index(node, part)
            if index is None:
                return OrderIssue(
                    where,
                    f"{here} is a list of {len(node)}: {part!r} is neither an index in it "
                    "nor the name of an item",
                )
            if last:
                node[index] = value
                return None
            node = node[index]
        else:
            return OrderIssue(where, f"{here} is a {type(node).__name__}, it has no key {part!r}")
    return None


def apply_sets(data: dict[str, Any], sets: Sequence[str]) -> list[OrderIssue]:
    """Apply ``--set`` overrides to ``data`` in place; the issues of those that failed."""
    issues = []
    for text in sets:
        issue = _apply_set(data, text)
        if issue is not None:
            issues.append(issue)
    return issues


def _component_issues(data: Mapping[str, Any]) -> list[OrderIssue]:
    issues: list[OrderIssue] = []
    scope = data.get("scope")
    if isinstance(scope, list):
        for i, spec in enumerate(scope):
            if isinstance(spec, Mapping):
                issues.extend(check_spec(spec, DecideRule, f"scope[{i}]"))
    frontier = data.get("frontier", {})
    if isinstance(frontier, Mapping):
        defaults = FrontierConfig()
        for part in FRONTIER_BASES:
            spec = frontier.get(part, _MISSING)
            if spec is _MISSING:
                spec = getattr(defaults, part).model_dump(by_alias=True)
            if isinstance(spec, Mapping):
                issues.extend(check_spec(spec, frontier_base(part), f"frontier.{part}"))
        dotted = frontier.get("class")
        if isinstance(dotted, str) and dotted:
            try:
                frontier_class(dotted)
            except OrderError as exc:
                issues.extend(exc.issues)
    chains = data.get("chains")
    if isinstance(chains, Mapping):
        issues.extend(duplicate_name_issues(chains))
        for chain in CHAIN_NAMES:
            specs = chains.get(chain)
            if not isinstance(specs, list):
                continue
            for i, spec in enumerate(specs):
                if isinstance(spec, Mapping):
                    where = format_path("", ["chains", chain, i], data)
                    issues.extend(check_spec(spec, Processor, where))
    return issues


def validate_order_data(
    data: Mapping[str, Any], base_dir: str | Path, source: str | None = None
) -> CrawlOrder:
    """Validate a merged order document; ``base_dir`` resolves a relative ``base_dir:`` key.
    Dotted class paths may name modules in the order's ``base_dir`` (see
    :func:`~crawler.order.components.add_import_dir`)."""
    doc = dict(data)
    given = doc.get("base_dir")
    doc["base_dir"] = str(Path(base_dir) / given) if isinstance(given, str) else str(base_dir)
    add_import_dir(doc["base_dir"])
    issues: list[OrderIssue] = []
    order: CrawlOrder | None = None
    try:
        order = CrawlOrder.model_validate(doc)
    except ValidationError as exc:
        issues.extend(issues_from_validation(exc, CrawlOrder, "", doc))
    issues.extend(_component_issues(doc))
    if order is not None and order.sheets:
        from crawler.sheets.sheet_compiler import compile_sheets

        issues.extend(compile_sheets(order, order.sheets)[1])
    if issues or order is None:
        raise OrderError(issues, source)
    return order


def load_order(path: str | Path, sets: Sequence[str] = ()) -> CrawlOrder:
    """Read, merge, override and validate the order at ``path``; raises OrderError.

    The returned order's ``base_dir`` is the directory of ``path`` (unless the document sets it,
    as ``order.effective.yaml`` does, so a run can be resumed from its own copy).
    """
    order_path = Path(path)
    try:
        data = read_order_data(order_path)
    except OrderError as exc:
        exc.source = str(order_path)
        raise
    set_issues = apply_sets(data, sets)
    book, secret_issues = _resolve_secrets(data, order_path)
    set_issues += secret_issues
    try:
        order = validate_order_data(data, order_path.resolve().parent, str(order_path))
    except OrderError as exc:
        raise OrderError([*set_issues, *exc.issues], str(order_path)) from None
    if set_issues:
        raise OrderError(set_issues, str(order_path))
    return order.with_secrets(book)


def _resolve_secrets(data: dict[str, Any], order_path: Path) -> tuple[SecretBook, list[OrderIssue]]:
    """Resolve the secret references of ``data`` (see :mod:`crawler.secrets.secret_refs`):
    ``${FILE:...}`` relative to the order's directory (a run's copy names it in ``base_dir``),
    ``${SECRET:...}`` from the run's ``state/secrets.json`` beside ``order.effective.yaml``."""
    here = order_path.resolve().parent
    base = data.get("base_dir")
    base_dir = Path(base) if isinstance(base, str) and Path(base).is_absolute() else here
    book, problems = resolve_secrets(data, base_dir, here / "state" / SECRETS_FILE)
    remember(book.values)
    return book, [OrderIssue(p.path, p.message, p.written, hint=p.hint) for p in problems]


def effective_yaml(order: CrawlOrder) -> str:
    """The merged order as YAML (``extends`` resolved away, ``base_dir`` absolute)."""
    data = order.model_dump(mode="json", by_alias=True)
    first = ("name", "class", "enabled")
    for chain in CHAIN_NAMES:
        data["chains"][chain] = [
            {**{k: spec[k] for k in first}, **{k: v for k, v in spec.items() if k not in first}}
            for spec in data["chains"][chain]
        ]
    data["base_dir"] = str(Path(order.base_dir).resolve())
    book = order.secrets
    if book is not None:
        data = book.effective(data)  # references, never the secrets themselves
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def contact_issue(operator: OperatorConfig) -> OrderIssue | None:
    """The problem with ``operator.contact_url`` (missing, or not an http(s) URL), if any."""
    url = operator.contact_url
    if url and is_http_url(url):
        return None
    return OrderIssue(
        "operator.contact_url",
        "operator.contact_url is required to crawl: set it to a page describing your crawl "
        "and how to reach you (it is sent in every request's User-Agent)"
        if not url
        else "must be an http(s) URL: a page describing your crawl and how to reach you",
        url if url else NO_VALUE,
        hint="e.g. --set operator.contact_url=https://example.org/about-our-crawler",
    )


def require_contact_url(order: CrawlOrder) -> None:
    """Raise OrderError unless ``operator.contact_url`` is an http(s) URL; called at crawl start."""
    issue = contact_issue(order.operator)
    if issue is not None:
        raise OrderError([issue])


def build_all(order: CrawlOrder) -> list[OrderIssue]:
    """Build every component of ``order`` once (no I/O) and return the problems found."""
    issues: list[OrderIssue] = []
    try:
        build_chains(order)
    except OrderError as exc:
        issues.extend(exc.issues)
    try:
        build_rules(order.scope, "scope")
    except OrderError as exc:
        issues.extend(exc.issues)
    for part in FRONTIER_BASES:
        try:
            build_frontier_part(order, part)
        except OrderError as exc:
            issues.extend(exc.issues)
    return issues
