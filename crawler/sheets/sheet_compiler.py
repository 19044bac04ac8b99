"""Compile the order's sheets: check every key a sheet overrides and turn it into an overlay.

A sheet's ``settings`` is a mapping of dotted keys (nested mappings are flattened) to values.
Three families of keys may be overridden, each checked against the order it overlays:

* ``frontier.politeness.<key>`` — the politeness a queue follows after a URI's fetch, read per
  URI by DispositionProcessor: ``delay_factor``, ``min_delay_ms``, ``max_delay_ms``,
  ``respect_crawl_delay_up_to_s`` (the other politeness keys are crawl-wide);
* ``chains.<chain>.<processor name or index>.params.<key>`` — a parameter the processor reads
  per URI with :meth:`~crawler.processor.Processor.params_for`, listed in its ``sheet_params``;
* ``scope.<index or rule class name>.params.<key>`` — likewise for a scope rule
  (:meth:`~crawler.decide.decide_rule.DecideRule.params_for`, ``sheet_params``).

A key a component does not read per URI is refused (it would silently do nothing).

An unknown key is reported at its YAML path (``sheets[2].settings.chains.fetch.fetch_http.params.
timout_s``) with the closest valid key; a bad value gets the pydantic error at its path.
Compiling does no I/O; it imports the component classes the order names (as loading does).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from crawler.decide.decide_rule import DecideRule
from crawler.order.errors import OrderIssue, issues_from_validation, model_keys, unknown_key_hint
from crawler.order.schema import (
    CHAIN_NAMES,
    ComponentSpec,
    CrawlOrder,
    PolitenessConfig,
    SheetConfig,
)
from crawler.params import Params
from crawler.surt import coerce_http, prefix_from_directive, surt
from crawler.urls import UriError, normalize

_FAMILIES = ("frontier", "chains", "scope")
_LEAF_DEPTH = {"frontier": 3, "chains": 5, "scope": 4}
POLITENESS_KEYS = ("delay_factor", "min_delay_ms", "max_delay_ms", "respect_crawl_delay_up_to_s")
"""The ``frontier.politeness`` keys a sheet may set (read per URI by DispositionProcessor)."""
_KEY_HELP = (
    "a sheet may set frontier.politeness.<key>, chains.<chain>.<processor>.params.<key> "
    "or scope.<index or class>.params.<key>"
)


@dataclass(frozen=True)
class CompiledSheet:
    """One valid sheet: the SURT prefixes it applies to and its overrides, by target.

    ``processors`` maps a processor name to its params overrides; ``scope`` a scope rule's
    index to its params overrides; ``politeness`` holds ``frontier.politeness`` overrides.
    """

    name: str
    prefixes: tuple[str, ...]
    politeness: dict[str, Any] = field(default_factory=dict)
    processors: dict[str, dict[str, Any]] = field(default_factory=dict)
    scope: dict[int, dict[str, Any]] = field(default_factory=dict)
    labels: dict[object, str] = field(default_factory=dict, compare=False)
    """How the settings named each target (for error paths)."""


def flatten_settings(
    settings: Mapping[str, Any], parts: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], Any]]:
    """``(key parts, value)`` of every leaf; a mapping below a key's full depth is a value."""
    for key, value in settings.items():
        here = parts + tuple(str(key).split("."))
        depth = _LEAF_DEPTH.get(here[0])
        if isinstance(value, Mapping) and value and (depth is None or len(here) < depth):
            yield from flatten_settings(value, here)
        else:
            yield here, value


def host_prefixes(host: str) -> list[str]:
    """The SURT prefixes of a host name: any port (``localhost``), or one (``localhost:8080``)."""
    text = host.strip().lower()
    if not text or any(c in text for c in "/?#@ "):
        raise ValueError("a host name, optionally with :port, e.g. example.org or localhost:8080")
    try:
        stem = coerce_http(surt(normalize(f"http://{text}/")))[:-2]
    except (UriError, ValueError) as exc:
        raise ValueError(f"not a host name: {exc}") from None
    has_port = ":" in text.rsplit("]", 1)[-1]
    return [stem + ")"] if has_port else [stem + ")", stem + ":"]


class _Target:
    """Where the keys of one family land, and the model that checks their values."""

    def __init__(self, order: CrawlOrder) -> None:
        from crawler.order.components import params_model_for, resolve_class
        from crawler.processor import Processor

        self.processors: dict[tuple[str, str], tuple[str, ComponentSpec]] = {}
        self.models: dict[str, type[Params] | None] = {}
        self.per_uri: dict[object, frozenset[str]] = {}
        for chain in CHAIN_NAMES:
            for i, spec in enumerate(getattr(order.chains, chain)):
                self.processors[(chain, spec.name)] = (spec.name, spec)
                self.processors[(chain, str(i))] = (spec.name, spec)
                try:
                    cls = resolve_class(spec.class_, Processor, "")
                    self.models[spec.name] = params_model_for(cls, Processor)
                    self.per_uri[spec.name] = cls.sheet_params
                except Exception:  # noqa: BLE001 - the order check reports it
                    self.models[spec.name] = None
        self.rules: dict[str, int] = {}
        self.rule_models: dict[int, type[Params] | None] = {}
        names: dict[str, list[int]] = {}
        for i, rule_spec in enumerate(order.scope):
            self.rules[str(i)] = i
            names.setdefault(rule_spec.class_.rpartition(".")[2], []).append(i)
            try:
                cls = resolve_class(rule_spec.class_, DecideRule, "")
                self.rule_models[i] = params_model_for(cls, DecideRule)
                self.per_uri[i] = cls.sheet_params
            except Exception:  # noqa: BLE001 - the order check reports it
                self.rule_models[i] = None
        self.ambiguous = {name for name, at in names.items() if len(at) > 1}
        self.rules.update({name: at[0] for name, at in names.items() if len(at) == 1})
        self.order = order


def _known_field(
    model: type[Params] | type[PolitenessConfig] | None, key: str, where: str
) -> OrderIssue | None:
    if model is None:
        return None
    valid = model_keys(model)
    if key in valid:
        return None
    return OrderIssue(where, f"unknown key {key!r}", hint=unknown_key_hint(key, valid))


def _per_uri(target: _Target, key: object, field: str, what: str, path: str) -> OrderIssue | None:
    """An issue unless the component ``key`` reads ``field`` per URI (so a sheet can set it)."""
    allowed = target.per_uri.get(key)
    if allowed is None or field in allowed:
        return None
    hint = (
        f"per-site params of {what}: {', '.join(sorted(allowed))}"
        if allowed
        else f"{what} reads no params per URI"
    )
    return OrderIssue(
        path, f"{field!r} is not a per-site setting: it applies crawl-wide", hint=hint
    )


def _check_values(
    model: type[Any] | None, base: Mapping[str, Any], updates: dict[str, Any], where: str
) -> list[OrderIssue]:
    if model is None or not updates:
        return []
    try:
        model.model_validate({**base, **updates})
    except ValidationError as exc:
        issues = issues_from_validation(exc, model, where, updates)
        return [i for i in issues if any(i.path.startswith(f"{where}.{k}") for k in updates)]
    return []


def compile_sheet(
    sheet: SheetConfig, where: str, target: _Target
) -> tuple[CompiledSheet | None, list[OrderIssue]]:
    """One sheet checked against the order (``where``: its display path, e.g. ``sheets[2]``)."""
    issues: list[OrderIssue] = []
    prefixes: list[str] = []
    for i, text in enumerate(sheet.surt_prefixes):
        try:
            prefixes.append(prefix_from_directive(text))
        except (UriError, ValueError) as exc:
            issues.append(OrderIssue(f"{where}.surt_prefixes[{i}]", str(exc), text))
    for i, host in enumerate(sheet.hosts):
        try:
            prefixes.extend(host_prefixes(host))
        except ValueError as exc:
            issues.append(OrderIssue(f"{where}.hosts[{i}]", "not a host name", host, str(exc)))
    if not sheet.surt_prefixes and not sheet.hosts:
        issues.append(
            OrderIssue(where, "the sheet applies to no URI", hint="give surt_prefixes or hosts")
        )
    compiled = CompiledSheet(sheet.name, tuple(dict.fromkeys(prefixes)))
    for parts, value in flatten_settings(sheet.settings):
        path = f"{where}.settings.{'.'.join(parts)}"
        issue = _place(compiled, parts, value, path, target)
        if issue is not None:
            issues.append(issue)
    settings = f"{where}.settings"
    issues.extend(
        _check_values(
            PolitenessConfig,
            target.order.frontier.politeness.model_dump(),
            compiled.politeness,
            f"{settings}.frontier.politeness",
        )
    )
    for name, updates in compiled.processors.items():
        chain, spec = next((c, s) for (c, _), (n, s) in target.processors.items() if n == name)
        issues.extend(
            _check_values(
                target.models.get(name),
                spec.params,
                updates,
                f"{settings}.chains.{chain}.{compiled.labels.get(name, name)}.params",
            )
        )
    for index, updates in compiled.scope.items():
        issues.extend(
            _check_values(
                target.rule_models.get(index),
                target.order.scope[index].params,
                updates,
                f"{settings}.scope.{compiled.labels.get(index, index)}.params",
            )
        )
    return (None if issues else compiled), issues


def _place(
    sheet: CompiledSheet, parts: tuple[str, ...], value: Any, path: str, target: _Target
) -> OrderIssue | None:
    """Put one override in ``sheet``; an issue if the key is not one a sheet may set."""
    head = parts[0]
    if head == "frontier" and len(parts) == 3 and parts[1] == "politeness":
        issue = _known_field(PolitenessConfig, parts[2], path)
        if issue is None and parts[2] not in POLITENESS_KEYS:
            issue = OrderIssue(
                path,
                f"{parts[2]!r} is not a per-site setting: it applies crawl-wide",
                hint="per-site politeness: " + ", ".join(POLITENESS_KEYS),
            )
        if issue is None:
            sheet.politeness[parts[2]] = value
        return issue
    if head == "chains" and len(parts) == 5 and parts[3] == "params":
        chain, proc = parts[1], parts[2]
        if chain not in CHAIN_NAMES:
            return OrderIssue(
                path, f"no chain {chain!r}", hint=unknown_key_hint(chain, CHAIN_NAMES)
            )
        found = target.processors.get((chain, proc))
        if found is None:
            names = [n for (c, k), (n, _) in target.processors.items() if c == chain and k == n]
            return OrderIssue(
                path,
                f"no processor {proc!r} in chain {chain!r}",
                hint=unknown_key_hint(proc, names),
            )
        name = found[0]
        issue = _known_field(target.models.get(name), parts[4], path) or _per_uri(
            target, name, parts[4], name, path
        )
        if issue is None:
            sheet.processors.setdefault(name, {})[parts[4]] = value
            sheet.labels[name] = proc
        return issue
    if head == "scope" and len(parts) == 4 and parts[2] == "params":
        rule = parts[1]
        if rule in target.ambiguous:
            return OrderIssue(path, f"the scope has several {rule}", hint="name the rule by index")
        index = target.rules.get(rule)
        if index is None:
            valid = [k for k in target.rules if not k.isdigit()]
            return OrderIssue(path, f"no scope rule {rule!r}", hint=unknown_key_hint(rule, valid))
        issue = _known_field(target.rule_models.get(index), parts[3], path) or _per_uri(
            target, index, parts[3], f"scope rule {rule}", path
        )
        if issue is None:
            sheet.scope.setdefault(index, {})[parts[3]] = value
            sheet.labels[index] = rule
        return issue
    guess = unknown_key_hint(head, _FAMILIES) if head not in _FAMILIES else None
    hint = f"{guess}; {_KEY_HELP}" if guess and guess.startswith("did") else _KEY_HELP
    return OrderIssue(path, "not a key a sheet can set", hint=hint)


def compile_sheets(
    order: CrawlOrder, sheets: Sequence[SheetConfig], prefix: str = "sheets"
) -> tuple[list[CompiledSheet], list[OrderIssue]]:
    """Every sheet of ``sheets`` checked against ``order``; the valid ones and all issues."""
    target = _Target(order)
    compiled: list[CompiledSheet] = []
    issues: list[OrderIssue] = []
    seen: set[str] = set()
    for i, sheet in enumerate(sheets):
        where = f"{prefix}[{i}]"
        if sheet.name in seen:
            issues.append(OrderIssue(f"{where}.name", "duplicate sheet name", sheet.name))
        seen.add(sheet.name)
        one, found = compile_sheet(sheet, where, target)
        issues.extend(found)
        if one is not None:
            compiled.append(one)
    return compiled, issues


def parse_sheet_list(
    data: object, prefix: str = "sheets"
) -> tuple[list[SheetConfig], list[OrderIssue]]:
    """Raw sheets (a list of mappings) validated against :class:`SheetConfig`."""
    if not isinstance(data, list):
        return [], [OrderIssue(prefix, "expected a list of sheets", type(data).__name__)]
    sheets: list[SheetConfig] = []
    issues: list[OrderIssue] = []
    for i, raw in enumerate(data):
        try:
            sheets.append(SheetConfig.model_validate(raw))
        except ValidationError as exc:
            issues.extend(issues_from_validation(exc, SheetConfig, f"{prefix}[{i}]", raw))
    return sheets, issues
