"""LuaTranslator: a policy rule written once in Python, run as Lua inside Redis scripts.

A rule that must be atomic with Redis state (the server cap's admission, the adaptive pace,
success-count precedence, the order of eligible queues) is a plain Python function that the
in-process frontier calls; :func:`lua_function` translates that same function's source into a
Lua ``local function`` of the same name, which the Redis scripts include. Nothing is written
twice: the module constants the rule names are inlined as their values, so changing a constant
or a line of the rule changes both.

The rule must keep to a small subset of Python, where both languages mean the same thing:

* statements: assignments (to a local name or an attribute of a parameter: ``st.gap``, a Lua
  table field), ``+=``/``-=``/``*=``, ``if``/``elif``/``else``, ``return``, a docstring;
* expressions: numbers, ``True``/``False``, local names and parameters, module-level ``int``/
  ``float`` constants, ``a.b``, ``+ - * / // %``, unary ``-``, comparisons (one operator
  each), ``x if c else y`` giving numbers, ``and``/``or``/``not`` on booleans only, ``min``,
  ``max``, ``math.ceil``, ``math.floor`` and calls of other functions of the rule's module
  (translated too).

Conditions must be booleans (a comparison, ``not``, ``and``/``or`` of booleans, or a name only
ever assigned booleans): Lua counts 0 as true, so a number used as a condition is refused, as is
anything outside the subset (:class:`LuaTranslationError`, naming the rule and the line).
Binary operations are fully parenthesised, so Python's precedence holds.

Pure; :func:`lua_function` caches per function and is thread-safe.
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from collections.abc import Callable
from typing import Any

from crawler.crawler_error import CrawlerError

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Mod: "%"}
_CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "~="}
_CALLS = {"min": "math.min", "max": "math.max"}
_MATH_CALLS = {"ceil": "math.ceil", "floor": "math.floor"}


class LuaTranslationError(CrawlerError):
    """A rule uses Python that has no faithful Lua translation here."""


class LuaTranslator:
    """Translates one rule function (see the module docstring). Not thread-safe: one per call
    of :func:`lua_function`."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self._fn = fn
        self._rule = fn.__name__
        self._globals = fn.__globals__
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        node = tree.body[0]
        if not isinstance(node, ast.FunctionDef):
            raise self._error(node, "not a plain function")
        self._def = node
        self._params = [a.arg for a in node.args.args]
        self._locals: list[str] = []
        self._booleans: set[str] = set()
        self._numbers: set[str] = set()
        self._rules: dict[str, Callable[..., Any]] = {}
        """Other rules this one calls (their Lua must come first)."""

    # ------------------------------------------------------------ entry
    def translate(self) -> str:
        """The Lua ``local function`` text."""
        fn = self._def
        if fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs or fn.args.defaults:
            raise self._error(fn, "only plain positional parameters")
        body = fn.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        self._collect(body)
        lines = [f"-- {self._rule} of {self._fn.__module__}, translated from its Python source"]
        lines.append(f"local function {self._rule}({', '.join(self._params)})")
        if self._locals:
            lines.append(f"  local {', '.join(self._locals)}")
        lines += self._block(body, 1)
        lines.append("end")
        return "\n".join(lines) + "\n"

    def called_rules(self) -> list[Callable[..., Any]]:
        """The other rules the translated rule calls (functions of its module's namespace)."""
        return [self._rules[name] for name in sorted(self._rules)]

    # ------------------------------------------------------------ names
    def _collect(self, body: list[ast.stmt]) -> None:
        """Every local name (declared once at the top: Python's scope is the function's) and
        which are booleans."""
        for node in ast.walk(ast.Module(body=body, type_ignores=[])):
            if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Name) and t.id not in self._params:
                        if t.id not in self._locals:
                            self._locals.append(t.id)
                        if node.value is not None and self._is_bool(node.value, strict=True):
                            self._booleans.add(t.id)
                        else:
                            self._numbers.add(t.id)
        mixed = self._booleans & self._numbers
        if mixed:
            raise self._error(self._def, f"{sorted(mixed)} hold both numbers and booleans")

    def _is_bool(self, node: ast.expr, strict: bool = False) -> bool:
        if isinstance(node, ast.Compare):
            return True
        if isinstance(node, ast.Constant):
            return isinstance(node.value, bool)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return self._is_bool(node.operand, strict)
        if isinstance(node, ast.BoolOp):
            return all(self._is_bool(v, strict) for v in node.values)
        if isinstance(node, ast.Name) and not strict:
            return node.id in self._booleans
        return False

    # ------------------------------------------------------------ statements
    def _block(self, body: list[ast.stmt], depth: int) -> list[str]:
        out: list[str] = []
        for node in body:
            out += self._stmt(node, depth)
        return out

    def _stmt(self, node: ast.stmt, depth: int) -> list[str]:
        pad = "  " * depth
        if isinstance(node, ast.Assign):
            if len(node.targets) != 1:
                raise self._error(node, "one target per assignment")
            return [f"{pad}{self._target(node.targets[0])} = {self._expr(node.value)}"]
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            return [f"{pad}{self._target(node.target)} = {self._expr(node.value)}"]
        if isinstance(node, ast.AugAssign):
            op = _BINOPS.get(type(node.op))
            if op is None or op in ("/", "%"):
                raise self._error(node, "only +=, -= and *=")
            target = self._target(node.target)
            return [f"{pad}{target} = ({target} {op} {self._expr(node.value)})"]
        if isinstance(node, ast.Return):
            return [f"{pad}return {self._expr(node.value) if node.value else 'nil'}"]
        if isinstance(node, ast.If):
            return self._if(node, depth)
        raise self._error(node, f"no {type(node).__name__} statement in a rule")

    def _if(self, node: ast.If, depth: int) -> list[str]:
        pad = "  " * depth
        out = [f"{pad}if {self._condition(node.test)} then"]
        out += self._block(node.body, depth + 1)
        orelse = node.orelse
        while len(orelse) == 1 and isinstance(orelse[0], ast.If):
            elif_ = orelse[0]
            out.append(f"{pad}elseif {self._condition(elif_.test)} then")
            out += self._block(elif_.body, depth + 1)
            orelse = elif_.orelse
        if orelse:
            out.append(f"{pad}else")
            out += self._block(orelse, depth + 1)
        out.append(f"{pad}end")
        return out

    def _target(self, node: ast.expr) -> str:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id not in self._params:
                raise self._error(node, "only a parameter's fields may be assigned")
            return f"{node.value.id}.{node.attr}"
        raise self._error(node, "assign to a name or a parameter's field")

    # ------------------------------------------------------------ expressions
    def _condition(self, node: ast.expr) -> str:
        if not self._is_bool(node):
            raise self._error(node, "a condition must be a boolean (Lua counts 0 as true)")
        return self._expr(node)

    def _expr(self, node: ast.expr) -> str:
        if isinstance(node, ast.Constant):
            return self._literal(node, node.value)
        if isinstance(node, ast.Name):
            return self._name(node)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id in self._params:
                return f"{node.value.id}.{node.attr}"
            raise self._error(node, "only a parameter's fields")
        if isinstance(node, ast.BinOp):
            left, right = self._expr(node.left), self._expr(node.right)
            if isinstance(node.op, ast.FloorDiv):
                return f"math.floor({left} / {right})"
            op = _BINOPS.get(type(node.op))
            if op is None:
                raise self._error(node, f"no {type(node.op).__name__} operator")
            return f"({left} {op} {right})"
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                return f"(-{self._expr(node.operand)})"
            if isinstance(node.op, ast.Not):
                return f"(not {self._condition(node.operand)})"
            raise self._error(node, f"no {type(node.op).__name__} operator")
        if isinstance(node, ast.BoolOp):
            op = " and " if isinstance(node.op, ast.And) else " or "
            return "(" + op.join(self._condition(v) for v in node.values) + ")"
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                raise self._error(node, "one comparison operator at a time")
            op = _CMPOPS.get(type(node.ops[0]))
            if op is None:
                raise self._error(node, f"no {type(node.ops[0]).__name__} comparison")
            return f"({self._expr(node.left)} {op} {self._expr(node.comparators[0])})"
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.IfExp):
            if self._is_bool(node.body):
                raise self._error(node, "a conditional expression must give numbers")
            # a number is never false in Lua: ``c and x or y`` is ``x if c else y``
            cond, body, orelse = self._condition(node.test), node.body, node.orelse
            return f"({cond} and {self._expr(body)} or {self._expr(orelse)})"
        raise self._error(node, f"no {type(node).__name__} expression in a rule")

    def _call(self, node: ast.Call) -> str:
        if node.keywords:
            raise self._error(node, "no keyword arguments")
        args = ", ".join(self._expr(a) for a in node.args)
        func = node.func
        if isinstance(func, ast.Name) and func.id in _CALLS:
            return f"{_CALLS[func.id]}({args})"
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "math"
            and func.attr in _MATH_CALLS
        ):
            return f"{_MATH_CALLS[func.attr]}({args})"
        if isinstance(func, ast.Name) and inspect.isfunction(self._globals.get(func.id)):
            self._rules[func.id] = self._globals[func.id]
            return f"{func.id}({args})"
        raise self._error(node, "only min, max, math.ceil, math.floor and translated rules")

    def _name(self, node: ast.Name) -> str:
        name = node.id
        if name in self._params or name in self._locals:
            return name
        if name in ("True", "False"):
            return name.lower()
        if name in self._globals:
            return self._literal(node, self._globals[name])
        raise self._error(node, f"unknown name {name}")

    def _literal(self, node: ast.AST, value: object) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | float) and value == value and abs(value) != float("inf"):
            text = repr(value)
            return f"({text})" if text.startswith("-") else text
        raise self._error(node, f"{value!r} is no number Lua can hold")

    def _error(self, node: ast.AST, why: str) -> LuaTranslationError:
        line = getattr(node, "lineno", 1) - 1 + self._def_line()
        return LuaTranslationError(f"{self._fn.__module__}.{self._rule} (line {line}): {why}")

    def _def_line(self) -> int:
        try:
            return inspect.getsourcelines(self._fn)[1]
        except (OSError, TypeError):
            return 1


@functools.cache
def lua_function(fn: Callable[..., Any]) -> str:
    """The Lua ``local function`` of the rule ``fn`` (the module docstring), preceded by the
    rules it calls (each once). Raises :class:`LuaTranslationError` on Python outside the
    subset."""
    translator = LuaTranslator(fn)
    text = translator.translate()
    return "".join(lua_function(rule) for rule in translator.called_rules()) + text
