"""YAML alias bombs ("billion laughs") are refused, with one line naming the file, not expanded."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from crawler.order.bounded_loader import YamlTooLargeError, load_yaml
from crawler.order.errors import OrderError
from crawler.order.loader import load_order
from crawler.sheets.sheet_updates import read_sheet_document

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[2]


def bomb_lines(indent: str = "  ") -> str:
    """Nine anchors, each a list of nine aliases of the one before: 9**9 strings expanded."""
    lines = [f'{indent}a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    names = "abcdefghi"
    for before, name in itertools.pairwise(names):
        lines.append(f"{indent}{name}: &{name} [" + ",".join([f"*{before}"] * 9) + "]")
    return "\n".join(lines) + "\n"


BOMB_ORDER = (
    'name: bomb\noperator: {contact_url: "http://x/"}\nx:\n' + bomb_lines() + "seeds: {urls: *i}\n"
)


def test_crawler_validate_refuses_an_alias_bomb_in_one_line(tmp_path: Path) -> None:
    assert len(BOMB_ORDER.encode()) < 512
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB_ORDER, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "crawler", "validate", str(path)],
        capture_output=True,
        text=True,
        timeout=45,
        cwd=ROOT,
    )
    assert done.returncode == 2, done.stderr
    out = done.stdout + done.stderr
    assert "Traceback" not in out
    problem = [line for line in out.splitlines() if "alias" in line]
    assert len(problem) == 1 and str(path) in problem[0], out


def test_a_sheets_action_file_bomb_is_an_order_error_naming_the_file() -> None:
    text = "sheets:\n  - name: s\n    hosts: [example.com]\n    settings:\n" + bomb_lines("      ")
    with pytest.raises(OrderError) as error:
        read_sheet_document(text, "more.sheets")
    assert "more.sheets" in str(error.value) and "alias" in str(error.value)


def test_a_set_value_bomb_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "order.yaml"
    path.write_text('name: t\noperator: {contact_url: "http://x/"}\n', encoding="utf-8")
    value = "[" + bomb_lines("").replace("\n", ", ").replace(": &", ": &").rstrip(", ") + "]"
    value = "{" + value[1:-1] + "}"
    with pytest.raises(OrderError) as error:
        load_order(path, [f"description={value}"])
    assert "--set description=" in str(error.value) and "alias" in str(error.value)


def test_recursive_aliases_and_deep_nesting_are_refused() -> None:
    with pytest.raises(YamlTooLargeError, match="recursive"):
        load_yaml("&a [*a]")
    with pytest.raises(YamlTooLargeError, match="nested too deeply"):
        load_yaml("[" * 5000 + "]" * 5000)


def test_ordinary_anchors_aliases_and_merge_keys_still_work(tmp_path: Path) -> None:
    assert load_yaml("base: &b {x: 1}\nmore:\n  <<: *b\n  y: 2\n") == {
        "base": {"x": 1},
        "more": {"x": 1, "y": 2},
    }
    path = tmp_path / "order.yaml"
    path.write_text(
        'name: t\noperator: {contact_url: "http://x/"}\n'
        "seeds: {urls: &hosts ['http://example.com/']}\n"
        "sheets: [{name: s, surt_prefixes: *hosts,"
        " settings: {frontier.politeness.min_delay_ms: 5}}]\n",
        encoding="utf-8",
    )
    order = load_order(path)
    assert order.sheets[0].surt_prefixes == ["http://example.com/"]
    # A big document without aliases is no bomb.
    assert len(load_yaml("[" + ",".join(["x"] * 20_000) + "]")) == 20_000
    with pytest.raises(yaml.YAMLError):
        load_yaml("a: [")
