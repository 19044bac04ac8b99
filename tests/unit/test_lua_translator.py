"""The Lua translation of policy rules refuses Python whose meaning Lua would change, with one
line naming the rule and its line (what it translates is run on a real redis-server by
tests/redis/test_redis_pace_rule.py and tests/contracts/test_policy_parity.py)."""

from __future__ import annotations

import pytest

from crawler.frontier.policy.queue_precedence import SUCCESS_FIRST_STEP, success_counts_precedence
from crawler.luagen import LuaTranslationError, lua_function

pytestmark = pytest.mark.timeout(10)

LIMIT = 3


def number_as_condition(n: int) -> int:
    if n:  # Lua counts 0 as true
        return 1
    return 0


def loops(n: int) -> int:
    total = 0
    for i in range(n):
        total += i
    return total


def mixed(n: int) -> int:
    x = n > LIMIT
    x = 2
    return x * n


def named_text(n: int) -> str:
    return "a" if n > 0 else "b"


def helper(n: int) -> int:
    return n * LIMIT


def calls_helper(n: int) -> int:
    return helper(n) + 1 if n >= LIMIT else -n


def test_the_rules_constants_are_inlined_and_the_functions_it_calls_come_first() -> None:
    lua = lua_function(calls_helper)
    assert "local function helper(n)" in lua
    assert lua.index("local function helper") < lua.index("local function calls_helper")
    assert "(n * 3)" in lua and "(n >= 3)" in lua and "(-n)" in lua
    assert f"(successes < {SUCCESS_FIRST_STEP})" in lua_function(success_counts_precedence)


@pytest.mark.parametrize(
    ("rule", "why"),
    [
        (number_as_condition, "a condition must be a boolean"),
        (loops, "no For statement"),
        (mixed, "hold both numbers and booleans"),
        (named_text, "'a' is no number"),
    ],
)
def test_python_lua_would_read_otherwise_is_refused_naming_the_line(rule: object, why: str) -> None:
    with pytest.raises(LuaTranslationError) as err:
        lua_function(rule)  # type: ignore[arg-type]
    message = str(err.value)
    assert why in message and f"test_lua_translator.{rule.__name__}" in message  # type: ignore[attr-defined]
    assert "\n" not in message and "(line " in message
