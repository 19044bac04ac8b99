"""Components named by dotted path in the order: resolve, check and build them.

Every pluggable class (processor, decide rule, frontier part) is written in the order as
``{class: package.module.Class, params: {...}}``. This module imports the class, checks it is the
right kind, validates ``params`` against the class's ``params_model`` and builds the instance.
Building does no I/O (constructors must not), so ``crawler validate`` can build everything.
Problems become :class:`~crawler.order.errors.OrderError` issues naming the YAML path.
Heritrix counterpart: the Spring bean definitions of ``crawler-beans.cxml``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import sys
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import IO, Any

import yaml
from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from crawler.chain import ProcessorChain, ProcessorChains
from crawler.decide.decide_rule import DecideRule, DecideRuleSequence
from crawler.exit_code import ExitCode
from crawler.order.errors import (
    OrderError,
    OrderIssue,
    closest,
    issues_from_validation,
    type_name,
)
from crawler.order.schema import CHAIN_NAMES, ComponentSpec, CrawlOrder, ProcessorSpec
from crawler.params import Params, params_model_of
from crawler.processor import Processor

FRONTIER_BASES: dict[str, tuple[str, str]] = {
    "store": ("crawler.frontier.store.queue_store", "QueueStore"),
    "queue_assignment": ("crawler.frontier.assignment", "QueueAssignmentPolicy"),
    "uniq_filter": ("crawler.uniq", "UriUniqFilter"),
}
"""Frontier part → (module, class) of the base it must conform to."""

FRONTIER_PROTOCOL = ("crawler.frontier.frontier", "Frontier")
"""(module, class) of the protocol the class ``frontier.class`` names must conform to."""

_ROOT_PACKAGES = ("crawler", "processors")
_TABLE_WIDTH = 100
_DEFAULT_COLUMN = 24


def _kind_name(base: type[Any]) -> str:
    return f"{base.__module__}.{base.__qualname__}"


def frontier_base(part: str) -> type[Any] | None:
    """The base class/protocol of a frontier part, or None if its module is not importable."""
    module_name, class_name = FRONTIER_BASES[part]
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    base = getattr(module, class_name, None)
    return base if isinstance(base, type) else None


def _conforms(cls: type[Any], base: type[Any]) -> bool:
    """``issubclass``, or for a Protocol: the class has every method and class variable the
    protocol declares."""
    if getattr(base, "_is_protocol", False):
        members = [
            name
            for name, value in vars(base).items()
            if not name.startswith("_") and callable(value)
        ]
        notes = vars(base).get("__annotations__", {})
        class_vars = [name for name, note in notes.items() if "ClassVar" in str(note)]
        return all(callable(getattr(cls, name, None)) for name in members) and all(
            hasattr(cls, name) for name in class_vars
        )
    return issubclass(cls, base)


def _submodules(package: ModuleType | None) -> list[str]:
    if package is None:
        return list(_ROOT_PACKAGES)
    path = getattr(package, "__path__", None)
    return [info.name for info in pkgutil.iter_modules(path)] if path else []


def _import_issue(module_name: str, exc: ImportError, where: str, dotted: str) -> OrderIssue:
    missing = getattr(exc, "name", None)
    if (
        isinstance(exc, ModuleNotFoundError)
        and missing
        and (module_name == missing or module_name.startswith(missing + "."))
    ):
        parent_name, _, leaf = missing.rpartition(".")
        parent = None
        if parent_name:
            try:
                parent = importlib.import_module(parent_name)
            except ImportError:
                parent = None
        guess = closest(leaf, _submodules(parent))
        hint = None
        if guess is not None:
            hint = f"did you mean module {'.'.join(filter(None, [parent_name, guess]))!r}?"
        return OrderIssue(where, f"module {missing!r} not found", dotted, hint)
    return OrderIssue(where, f"importing module {module_name!r} failed: {exc}", dotted)


def add_import_dir(directory: str | Path) -> None:
    """Let dotted paths name modules in ``directory`` (an order's directory), as the Python
    path does: it is appended to ``sys.path`` (installed packages keep precedence) once. The
    process keeps it: a crawl, ``crawler validate`` and a resumed run all load the order's
    classes from the same place. Not thread-safe (called while an order loads)."""
    path = str(Path(directory).resolve())
    if path not in sys.path:
        sys.path.append(path)


def resolve_class(dotted: str, base: type[Any] | None, where: str) -> type[Any]:
    """Import the class at ``dotted`` and check it conforms to ``base`` (skipped when None).

    ``where`` is the display path of the ``class`` key, used in the error.
    Raises :class:`OrderError` (one issue) if the module or class is missing or of the wrong kind.
    """
    module_name, _, class_name = dotted.rpartition(".")
    if not module_name or not class_name:
        raise OrderError(
            [
                OrderIssue(
                    where,
                    "not a dotted class path",
                    dotted,
                    "write package.module.Class, e.g. 'processors.fetch.FetchHTTP'",
                )
            ]
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise OrderError([_import_issue(module_name, exc, where, dotted)]) from None
    except Exception as exc:  # noqa: BLE001 - any import-time failure is an order error
        issue = OrderIssue(
            where, f"importing module {module_name!r} failed: {type(exc).__name__}: {exc}", dotted
        )
        raise OrderError([issue]) from None
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type):
        classes = [n for n, v in vars(module).items() if isinstance(v, type) and n[:1] != "_"]
        fitting = [n for n in classes if base is None or _conforms(vars(module)[n], base)]
        guess = closest(class_name, fitting) or closest(class_name, classes)
        what = "no class" if cls is None else "something that is not a class called"
        hint = f"did you mean {module_name}.{guess}?" if guess else None
        if hint is None and fitting:
            hint = "classes there: " + ", ".join(sorted(fitting)[:10])
        issue = OrderIssue(where, f"module {module_name!r} has {what} {class_name!r}", hint=hint)
        raise OrderError([issue])
    if base is not None and not _conforms(cls, base):
        issue = OrderIssue(
            where,
            f"{dotted} is not a {base.__name__}",
            hint=f"the class must derive from {_kind_name(base)}",
        )
        raise OrderError([issue])
    return cls


def params_model_for(cls: type[Any], base: type[Any] | None) -> type[Params]:
    """The parameter model of a component class (``params_model``, else its generic argument)."""
    model = getattr(cls, "params_model", None)
    if isinstance(model, type) and issubclass(model, Params):
        return model
    return params_model_of(cls, base if base is not None else object)


def validate_params(
    cls: type[Any], base: type[Any] | None, params: object, where: str
) -> tuple[Params | None, list[OrderIssue]]:
    """``params`` validated against the class's model, or the issues (paths under ``where``)."""
    model = params_model_for(cls, base)
    try:
        return model.model_validate(params if params is not None else {}), []
    except ValidationError as exc:
        return None, issues_from_validation(exc, model, f"{where}.params", params)


def check_spec(spec: Mapping[str, Any], base: type[Any] | None, where: str) -> list[OrderIssue]:
    """Issues of one raw component mapping: its class, its params, its should_process_rule.

    Shapes that are not even a mapping with a string ``class`` are left to the schema check.
    """
    issues: list[OrderIssue] = []
    dotted = spec.get("class")
    if isinstance(dotted, str) and dotted:
        try:
            cls = resolve_class(dotted, base, f"{where}.class")
        except OrderError as exc:
            issues.extend(exc.issues)
        else:
            params = spec.get("params")
            if params is None or isinstance(params, Mapping):
                issues.extend(validate_params(cls, base, params, where)[1])
    rules = spec.get("should_process_rule")
    if isinstance(rules, list):
        for i, rule in enumerate(rules):
            if isinstance(rule, Mapping):
                issues.extend(check_spec(rule, DecideRule, f"{where}.should_process_rule[{i}]"))
    return issues


def build_component(spec: ComponentSpec, base: type[Any] | None, where: str) -> Any:
    """Instantiate a non-processor component as ``cls(params)``."""
    cls = resolve_class(spec.class_, base, f"{where}.class")
    params, issues = validate_params(cls, base, spec.params, where)
    if issues:
        raise OrderError(issues)
    try:
        return cls(params)
    except Exception as exc:  # noqa: BLE001 - a constructor's complaint is an order error
        issue = OrderIssue(where, f"could not be built: {type(exc).__name__}: {exc}")
        raise OrderError([issue]) from None


def build_rules(specs: Sequence[ComponentSpec], where: str) -> DecideRuleSequence:
    """A DecideRuleSequence of ``specs`` (``where`` is the list's display path, e.g. ``scope``)."""
    rules: list[DecideRule[Any]] = []
    issues: list[OrderIssue] = []
    for i, spec in enumerate(specs):
        try:
            rules.append(build_component(spec, DecideRule, f"{where}[{i}]"))
        except OrderError as exc:
            issues.extend(exc.issues)
    if issues:
        raise OrderError(issues)
    return DecideRuleSequence(rules)


def build_processor(spec: ProcessorSpec, chain: str, index: int | None = None) -> Processor[Any]:
    """Instantiate the processor ``spec`` of chain ``chain`` (``index``: its place, for errors)."""
    at = f"[{index}]" if index is not None else ""
    where = f"chains.{chain}{at} ({spec.name})"
    issues: list[OrderIssue] = []
    cls: type[Any] | None = None
    params: Params | None = None
    try:
        cls = resolve_class(spec.class_, Processor, f"{where}.class")
    except OrderError as exc:
        issues.extend(exc.issues)
    else:
        params, param_issues = validate_params(cls, Processor, spec.params, where)
        issues.extend(param_issues)
    rule: DecideRuleSequence | None = None
    if spec.should_process_rule:
        try:
            rule = build_rules(spec.should_process_rule, f"{where}.should_process_rule")
        except OrderError as exc:
            issues.extend(exc.issues)
    if issues or cls is None:
        raise OrderError(issues)
    try:
        proc: Processor[Any] = cls(
            spec.name, params, enabled=spec.enabled, should_process_rule=rule
        )
    except Exception as exc:  # noqa: BLE001 - a constructor's complaint is an order error
        issue = OrderIssue(where, f"could not be built: {type(exc).__name__}: {exc}")
        raise OrderError([issue]) from None
    return proc


def duplicate_name_issues(chains: Mapping[str, Any]) -> list[OrderIssue]:
    """An issue for every processor whose name was already used (in any chain)."""
    seen: dict[str, str] = {}
    issues: list[OrderIssue] = []
    for chain in CHAIN_NAMES:
        specs = chains.get(chain)
        if not isinstance(specs, list):
            continue
        for i, spec in enumerate(specs):
            name = spec.get("name") if isinstance(spec, Mapping) else None
            if not isinstance(name, str):
                continue
            where = f"chains.{chain}[{i}] ({name})"
            if name in seen:
                issues.append(
                    OrderIssue(
                        f"{where}.name",
                        f"duplicate processor name, already used by {seen[name]}",
                        hint="processor names must be unique across all chains",
                    )
                )
            else:
                seen[name] = where
    return issues


def build_chains(order: CrawlOrder) -> ProcessorChains:
    """The five chains of ``order``, every processor built; all problems in one OrderError."""
    raw = order.chains.model_dump(by_alias=True)
    issues = duplicate_name_issues(raw)
    chains: list[ProcessorChain] = []
    for chain in CHAIN_NAMES:
        built: list[Processor[Any]] = []
        for i, spec in enumerate(getattr(order.chains, chain)):
            try:
                built.append(build_processor(spec, chain, i))
            except OrderError as exc:
                issues.extend(exc.issues)
        chains.append(ProcessorChain(chain, built))
    if issues:
        raise OrderError(issues)
    return ProcessorChains(chains)


def frontier_class(dotted: str) -> type[Any]:
    """The class ``frontier.class`` names (``dotted``), checked to be a Frontier; raises
    :class:`OrderError` naming ``frontier.class`` otherwise."""
    module_name, class_name = FRONTIER_PROTOCOL
    protocol = getattr(importlib.import_module(module_name), class_name)
    return resolve_class(dotted, protocol, "frontier.class")


def build_frontier_part(order: CrawlOrder, part: str) -> Any:
    """Instantiate ``frontier.<part>`` (store, queue_assignment, uniq_filter) of ``order``."""
    spec: ComponentSpec = getattr(order.frontier, part)
    return build_component(spec, frontier_base(part), f"frontier.{part}")


def _yaml_value(value: object) -> str:
    text = yaml.safe_dump(to_jsonable_python(value), default_flow_style=True, width=1000)
    return text.strip().removesuffix("...").strip()


def describe_params(model: type[Params]) -> list[tuple[str, str, str, str]]:
    """Rows ``(name, type, default, description)`` of a parameter model."""
    rows = []
    for name, field in model.model_fields.items():
        default = "(required)"
        if not field.is_required():
            default = _yaml_value(field.get_default(call_default_factory=True))
        rows.append(
            (field.alias or name, type_name(field.annotation), default, field.description or "")
        )
    return rows


def _plain(doc: str) -> str:
    """Docstring text without reST markup (roles and double backquotes)."""
    doc = re.sub(r":\w+:`~[\w.]*?(\w+)`", r"\1", doc)
    doc = re.sub(r":\w+:`([^`]+)`", r"\1", doc)
    return doc.replace("``", "")


def _table(rows: list[tuple[str, str, str, str]], width: int = _TABLE_WIDTH) -> list[str]:
    """Aligned rows; an over-wide default pushes its description to the next line."""
    name_w = max(len(r[0]) for r in rows)
    type_w = max(len(r[1]) for r in rows)
    default_w = max(len(r[2]) for r in rows if len(r[2]) <= _DEFAULT_COLUMN)
    desc_col = 2 + name_w + 2 + type_w + 2 + default_w + 2
    lines = []
    for name, kind, default, desc in rows:
        head = f"  {name.ljust(name_w)}  {kind.ljust(type_w)}  {default.ljust(default_w)}"
        wrapped = textwrap.wrap(desc, max(width - desc_col, 30)) or [""]
        if len(default) > default_w:
            lines.append(head.rstrip())
            wrapped = [w for w in wrapped if w]
        else:
            lines.append(f"{head}  {wrapped.pop(0)}".rstrip())
        lines.extend(" " * desc_col + w for w in wrapped)
    return lines


def show_processor_main(dotted: str, out: IO[str], err: IO[str]) -> int:
    """``crawler show-processor CLASS``: docstring summary and parameter table; exit 0 or 2.
    A module in the current directory is found too (where a job's order, beside its own
    processors, would find it)."""
    add_import_dir(Path.cwd())
    try:
        cls = resolve_class(dotted, Processor, "")
    except OrderError as exc:
        err.write(f"crawler show-processor: {exc.issues[0]}\n")
        return ExitCode.USAGE
    doc = _plain(inspect.getdoc(cls) or "")
    summary = " ".join(doc.split("\n\n", 1)[0].split()) or "(no description)"
    out.write(f"{cls.__module__}.{cls.__qualname__}\n")
    out.write("".join(f"  {line}\n" for line in textwrap.wrap(summary, _TABLE_WIDTH - 2)))
    model = params_model_for(cls, Processor)
    rows = describe_params(model)
    if not rows:
        out.write("\nParameters: none\n")
        return ExitCode.OK
    out.write(f"\nParameters ({model.__name__}):\n")
    table = _table([("name", "type", "default", "description"), *rows])
    out.write("".join(line + "\n" for line in table))
    per_site = sorted(getattr(cls, "sheet_params", ()))
    out.write(f"\nPer-site (sheets): {', '.join(per_site) if per_site else 'none'}\n")
    return ExitCode.OK


__all__ = [
    "FRONTIER_BASES",
    "FRONTIER_PROTOCOL",
    "add_import_dir",
    "build_chains",
    "build_component",
    "build_frontier_part",
    "build_processor",
    "build_rules",
    "check_spec",
    "describe_params",
    "frontier_base",
    "frontier_class",
    "params_model_for",
    "resolve_class",
    "show_processor_main",
    "validate_params",
]
