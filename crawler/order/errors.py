"""OrderIssue and OrderError: every problem of a crawl order, reported at once with its YAML path.

An issue names where it is (``chains.fetch[1] (fetch_http).params.timeout_s``), what is wrong,
the offending value and a hint (closest valid key, expected type). :func:`issues_from_validation`
turns a pydantic ``ValidationError`` into issues, walking the model's annotations to find the
valid keys and expected types of the place that failed.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel, ValidationError

from crawler.crawler_error import CrawlerError
from crawler.secrets.secret_registry import redact

NO_VALUE: Final = object()
"""Marks an issue that has no offending value to show (a missing key, a missing file)."""

_MAX_VALUE_CHARS = 80


@dataclass(frozen=True)
class OrderIssue:
    """One problem: where (display path), what, the bad value and how to fix it."""

    path: str
    message: str
    value: object = NO_VALUE
    hint: str | None = None

    def __str__(self) -> str:
        text = f"{self.path}: {self.message}" if self.path else self.message
        if self.value is not NO_VALUE:
            shown = repr(self.value)
            if len(shown) > _MAX_VALUE_CHARS:
                shown = shown[: _MAX_VALUE_CHARS - 3] + "..."
            text += f" (got {shown})"
        if self.hint:
            text += f"; {self.hint}"
        return redact(text)  # a password that failed validation is not shown


class OrderError(CrawlerError):
    """An invalid crawl order; ``issues`` holds every problem (schema first, then components)."""

    def __init__(self, issues: Sequence[OrderIssue], source: str | None = None) -> None:
        self.issues: list[OrderIssue] = list(issues)
        self.source = source
        super().__init__(str(self))

    def __str__(self) -> str:
        count = len(self.issues)
        where = f" {self.source}" if self.source else ""
        head = f"invalid crawl order{where}: {count} error{'s' if count != 1 else ''}"
        return "\n".join([head, *(f"  - {issue}" for issue in self.issues)])


def format_path(prefix: str, loc: Iterable[str | int], data: object = NO_VALUE) -> str:
    """Display path: keys joined by ``.``, indices as ``[i]``, named list items as ``[i] (name)``.

    ``data`` is the document the location points into (for processor names); ``prefix`` is the
    display path of that document.
    """
    text = prefix
    node = data
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
            node = node[part] if isinstance(node, list) and 0 <= part < len(node) else NO_VALUE
            name = node.get("name") if isinstance(node, Mapping) else None
            if isinstance(name, str) and name:
                text += f" ({name})"
        else:
            text = f"{text}.{part}" if text else str(part)
            node = node.get(part, NO_VALUE) if isinstance(node, Mapping) else NO_VALUE
    return text


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate most like ``word`` (case-insensitive first), or None if none is close."""
    pool = list(candidates)
    for candidate in pool:
        if candidate.lower() == word.lower():
            return candidate
    match = difflib.get_close_matches(word, pool, n=1, cutoff=0.6)
    return match[0] if match else None


def unknown_key_hint(key: str, valid: Sequence[str]) -> str:
    """'did you mean ...?' or the list of valid keys."""
    guess = closest(key, valid)
    if guess is not None:
        return f"did you mean {guess!r}?"
    return "valid keys: " + ", ".join(valid) if valid else "no keys are accepted here"


def model_keys(model: type[BaseModel]) -> list[str]:
    """The keys a model accepts in YAML (aliases where defined)."""
    return [field.alias or name for name, field in model.model_fields.items()]


def _unwrap(tp: Any) -> Any:
    """Strip ``Optional`` and ``Annotated`` so the interesting type remains."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(tp)[0])
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return _unwrap(args[0])
    return tp


def type_at(model: type[BaseModel], loc: Sequence[str | int]) -> Any:
    """The annotation found at ``loc`` inside ``model``, or None when the walk gets lost."""
    tp: Any = model
    for part in loc:
        tp = _unwrap(tp)
        origin = typing.get_origin(tp)
        if isinstance(part, int):
            args = typing.get_args(tp)
            if origin not in (list, tuple, Sequence) or not args:
                return None
            tp = args[0]
        elif isinstance(tp, type) and issubclass(tp, BaseModel):
            fields = {f.alias or n: f for n, f in tp.model_fields.items()}
            fields.update(tp.model_fields)
            field = fields.get(part)
            if field is None:
                return None
            tp = field.annotation
        elif origin is dict:
            tp = typing.get_args(tp)[1]
        else:
            return None
    return tp


def type_name(tp: Any) -> str:
    """A short, YAML-user-friendly name for an annotation."""
    tp = _unwrap(tp)
    origin = typing.get_origin(tp)
    if origin is typing.Literal:
        return " | ".join(repr(a) for a in typing.get_args(tp))
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(a) for a in typing.get_args(tp))
    if origin in (list, tuple):
        args = typing.get_args(tp)
        return f"list of {type_name(args[0])}" if args else "list"
    if origin is dict:
        return "mapping"
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return "mapping"
    if isinstance(tp, type):
        return {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}.get(
            tp.__name__, tp.__name__
        )
    return str(tp).replace("typing.", "")


def issues_from_validation(
    exc: ValidationError,
    model: type[BaseModel],
    prefix: str = "",
    data: object = NO_VALUE,
) -> list[OrderIssue]:
    """Issues for every error of ``exc``, raised validating ``data`` against ``model``."""
    issues: list[OrderIssue] = []
    for err in exc.errors():
        loc: tuple[str | int, ...] = tuple(err["loc"])
        kind = err["type"]
        if kind == "extra_forbidden" and loc:
            parent = type_at(model, loc[:-1])
            parent = _unwrap(parent)
            valid = (
                model_keys(parent)
                if isinstance(parent, type) and issubclass(parent, BaseModel)
                else []
            )
            issues.append(
                OrderIssue(
                    format_path(prefix, loc[:-1], data) or "(top level)",
                    f"unknown key {loc[-1]!r}",
                    hint=unknown_key_hint(str(loc[-1]), valid),
                )
            )
            continue
        path = format_path(prefix, loc, data) or "(top level)"
        if kind == "missing":
            issues.append(OrderIssue(path, "required key is missing"))
            continue
        msg = err["msg"]
        message = msg[:1].lower() + msg[1:]
        hint = None
        if kind.endswith(("_type", "_parsing")):
            expected = type_at(model, loc)
            if expected is not None:
                hint = f"expected {type_name(expected)}"
        issues.append(OrderIssue(path, message, err.get("input", NO_VALUE), hint))
    return issues
