"""Sheets changed while the crawl runs: the ``*.sheets`` document, merging, keeping.

A ``*.sheets`` action file (or the console's request, or the crawl-wide copy in Redis) is YAML:
either a list of sheets, or a mapping ``{sheets: [...], remove: [names]}``. A sheet whose name is
already in force replaces it; a new name is added after the others; ``remove`` drops sheets by
name. The merged list is checked whole (as ``crawler validate`` checks the order's) before it is
put in force, and kept in ``RUN_DIR/sheets.yaml`` so ``crawler resume`` starts with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from crawler.order.bounded_loader import YamlTooLargeError, load_yaml
from crawler.order.errors import OrderError, OrderIssue
from crawler.order.schema import CrawlOrder, SheetConfig
from crawler.sheets.sheet_compiler import parse_sheet_list

SHEETS_FILE = "sheets.yaml"


def read_sheet_document(text: str, source: str) -> tuple[list[SheetConfig], list[str]]:
    """``(sheets to add or replace, names to remove)`` of a sheets document; OrderError if bad."""
    try:
        data: Any = load_yaml(text)
    except YamlTooLargeError as exc:
        raise OrderError([OrderIssue(source, str(exc))]) from None
    except yaml.YAMLError as exc:
        raise OrderError([OrderIssue(source, f"YAML syntax error: {exc}")]) from None
    removals: list[str] = []
    if isinstance(data, dict):
        unknown = sorted(set(data) - {"sheets", "remove"})
        if unknown:
            issue = OrderIssue(source, f"unknown key {unknown[0]!r}", hint="use sheets, remove")
            raise OrderError([issue])
        raw_remove = data.get("remove") or []
        if not isinstance(raw_remove, list) or not all(isinstance(n, str) for n in raw_remove):
            raise OrderError([OrderIssue(f"{source}: remove", "expected a list of sheet names")])
        removals = raw_remove
        data = data.get("sheets") or []
    sheets, issues = parse_sheet_list(data if data is not None else [], f"{source}: sheets")
    if issues:
        raise OrderError(issues)
    return sheets, removals


def merge_sheets(
    current: Sequence[SheetConfig], upserts: Sequence[SheetConfig], removals: Sequence[str]
) -> list[SheetConfig]:
    """``current`` with ``upserts`` replacing sheets of the same name (or appended) and the
    sheets named in ``removals`` dropped."""
    merged = {sheet.name: sheet for sheet in current}
    for sheet in upserts:
        merged[sheet.name] = sheet
    for name in removals:
        merged.pop(name, None)
    return list(merged.values())


def checked_merge(
    order: CrawlOrder, current: Sequence[SheetConfig], text: str, source: str
) -> list[SheetConfig]:
    """``current`` changed by the sheets document ``text``, every new sheet checked against
    ``order``; OrderError with the paths inside the document (``x.sheets: sheets[0]…``)."""
    from crawler.sheets.sheet_compiler import compile_sheets

    upserts, removals = read_sheet_document(text, source)
    issues = compile_sheets(order, upserts, f"{source}: sheets")[1]
    if issues:
        raise OrderError(issues, source)
    return merge_sheets(current, upserts, removals)


def dump_sheets(sheets: Sequence[SheetConfig]) -> str:
    """The sheets as a YAML document :func:`read_sheet_document` reads back."""
    data = [sheet.model_dump(mode="json") for sheet in sheets]
    return yaml.safe_dump({"sheets": data}, sort_keys=False, allow_unicode=True)


def load_saved_sheets(run_dir: Path) -> list[SheetConfig] | None:
    """The sheets kept in ``RUN_DIR/sheets.yaml``, or None when the run changed none."""
    path = run_dir / SHEETS_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    return read_sheet_document(text, str(path))[0]


def save_sheets(run_dir: Path, sheets: Sequence[SheetConfig]) -> None:
    """Keep ``sheets`` in ``RUN_DIR/sheets.yaml`` (written whole, then renamed)."""
    path = run_dir / SHEETS_FILE
    tmp = path.with_name(f".{SHEETS_FILE}.tmp")
    tmp.write_text(dump_sheets(sheets), encoding="utf-8")
    tmp.replace(path)


def sheets_in_force(run_dir: Path) -> tuple[list[SheetConfig], Path]:
    """The sheets a run has in force (``sheets.yaml``, else its ``order.effective.yaml``'s) and
    the path of its effective order. Raises OrderError (and FileNotFoundError without one)."""
    from crawler.order.loader import load_order

    order_path = run_dir / "order.effective.yaml"
    if not order_path.is_file():
        raise FileNotFoundError(f"{run_dir} has no order.effective.yaml")
    saved = load_saved_sheets(run_dir)
    if saved is not None:
        return saved, order_path
    return list(load_order(order_path).sheets), order_path


def check_change(run_dir: Path, text: str, source: str) -> list[OrderIssue]:
    """The problems the sheets document ``text`` would meet in the run at ``run_dir`` (none:
    the crawl will accept it), checked against the run's effective order and sheets in force."""
    from crawler.order.loader import load_order

    try:
        current, order_path = sheets_in_force(run_dir)
        checked_merge(load_order(order_path), current, text, source)
    except OrderError as exc:
        return exc.issues
    return []
