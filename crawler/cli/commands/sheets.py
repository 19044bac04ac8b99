"""``crawler sheets RUN_DIR FILE``: add, replace or remove sheets of a crawl while it runs.

FILE (``-`` for standard input) is a sheets document (:mod:`crawler.sheets.sheet_updates`). The
change is checked first against the run's effective order and the sheets in force (exit 2 with
every problem at its path). A single-process run then gets it as a ``*.sheets`` action file; a
distributed run (``distributed.json``) gets the merged sheets published in Redis, where every
worker's control follower finds them within half a second.

Exit codes: :class:`~crawler.exit_code.ExitCode`: 0 sent (or kept for the crawl's resumption),
1 not taken in within ``--wait-s`` or Redis unreachable, 2 a bad document or directory.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from crawler.cli.arguments import add_run_dir
from crawler.exit_code import ExitCode


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``crawler sheets``'s arguments."""
    add_run_dir(parser)
    parser.add_argument("file", help="a sheets document (YAML; - for standard input)")
    parser.add_argument("--wait-s", type=float, default=10.0)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Check and send the sheets document."""
    return send_sheets(args.run_dir, args.file, args.wait_s, out, err)


def send_sheets(run_dir: Path, file: str, wait_s: float, out: TextIO, err: TextIO) -> int:
    """See the module docstring."""
    from crawler.cli.run_dirs import is_distributed, resolve_run_dir
    from crawler.control.steering import drop_action
    from crawler.order.errors import OrderError
    from crawler.reports.status import is_running, read_status
    from crawler.sheets.sheet_updates import check_change

    run_dir = resolve_run_dir(run_dir)
    try:
        text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    except OSError as exc:
        print(f"cannot read {file}: {exc.strerror or exc}", file=err)
        return ExitCode.USAGE
    except UnicodeDecodeError as exc:
        print(f"cannot read {file}: not UTF-8 text (byte {exc.start})", file=err)
        return ExitCode.USAGE
    source = "stdin" if file == "-" else Path(file).name
    if is_distributed(run_dir):
        return _publish(run_dir, text, source, out, err)
    if not (run_dir / "action").is_dir():
        print(f"{run_dir} is not a crawl's run directory (no action/)", file=err)
        return ExitCode.USAGE
    try:
        issues = check_change(run_dir, text, source)
    except FileNotFoundError as exc:
        print(str(exc), file=err)
        return ExitCode.USAGE
    if issues:
        print(str(OrderError(issues, source)), file=err)
        return ExitCode.USAGE
    name = drop_action(run_dir, "sheets", text)
    if not is_running(read_status(run_dir)):
        print(f"the crawl is not running: the sheets apply when it is resumed ({name})", file=out)
        return ExitCode.OK
    return _wait_taken(run_dir, name, wait_s, out, err)


def _wait_taken(run_dir: Path, name: str, wait_s: float, out: TextIO, err: TextIO) -> int:
    import time

    from crawler.control.steering import action_taken

    deadline = time.monotonic() + wait_s
    while not action_taken(run_dir, name):
        if time.monotonic() >= deadline:
            print(f"the crawl did not take in action/{name} within {wait_s:g}s", file=err)
            return ExitCode.FAILED
        time.sleep(0.1)
    print(f"sheets sent ({name}); a refused document is logged as action_failed", file=out)
    return ExitCode.OK


def _publish(run_dir: Path, text: str, source: str, out: TextIO, err: TextIO) -> int:
    """Merge the change into the crawl-wide sheets of a distributed run and publish them."""
    from crawler.distributed.run_info import distributed_info
    from crawler.frontier.redis.redis_registry import CrawlRegistry
    from crawler.order.errors import OrderError
    from crawler.order.loader import load_order
    from crawler.sheets.sheet_updates import (
        checked_merge,
        dump_sheets,
        read_sheet_document,
        sheets_in_force,
    )

    info = distributed_info(run_dir) or {}
    orders = sorted((run_dir / "workers").glob("*/order.effective.yaml"))
    if not orders:
        print(f"{run_dir} has no worker with an order.effective.yaml yet", file=err)
        return ExitCode.USAGE
    try:
        registry = CrawlRegistry(info["redis_url"])
        version, document = registry.sheets(info["namespace"])
        if version:
            current = read_sheet_document(document, "redis")[0]
        else:
            current = sheets_in_force(orders[0].parent)[0]
        merged = checked_merge(load_order(orders[0]), current, text, source)
        version = registry.publish_sheets(info["namespace"], dump_sheets(merged))
    except OrderError as exc:
        print(str(exc), file=err)
        return ExitCode.USAGE
    except Exception as exc:  # noqa: BLE001 - Redis unreachable, a broken distributed.json
        print(f"cannot publish the sheets: {type(exc).__name__}: {exc}", file=err)
        return ExitCode.FAILED
    print(f"sheets published to every worker (version {version})", file=out)
    return ExitCode.OK
