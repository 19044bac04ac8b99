"""Running a crawl in this process, shared by ``crawler run``, ``resume``, ``demo`` and ``crawl``.

* :func:`run_order`: load and check an order (every check before a run directory is made), make
  the run directory, optionally start the web console beside the crawl, and run it;
* :func:`run_controller`: run a :class:`~crawler.control.controller.CrawlController`, turning
  the errors a crawl can meet into a one-line message and an :class:`ExitCode`, then print the
  totals (:func:`print_summary`);
* :func:`crawl_display`: the live display (or progress lines) an order and ``--no-display`` ask
  for.

The crawl's modules are imported when a function runs, never at import. One crawl per call;
the functions share no state.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from crawler.exit_code import ExitCode

if TYPE_CHECKING:
    from crawler.cli.display import Display
    from crawler.console.server import ConsoleProcess
    from crawler.control.controller import CrawlController
    from crawler.order.schema import CrawlOrder


def run_order(
    order_path: Path,
    sets: Sequence[str],
    run_dir: Path | None,
    out: TextIO,
    err: TextIO,
    no_display: bool = False,
    console_bind: str | None = None,
    job_dir: Path | None = None,
) -> int:
    """Load, check and run an order; prints the run directory first. Without ``run_dir``, a
    new run of ``job_dir`` (default: the order's directory). A refused order or run directory
    is :attr:`ExitCode.USAGE` with nothing created."""
    from crawler.control import affinity
    from crawler.control.controller import CrawlController, new_run_dir
    from crawler.order.errors import OrderError
    from crawler.order.preflight import load_checked_order

    try:
        # every check before a run directory is made for a crawl that can't start
        order = load_checked_order(order_path, sets).order
        affinity.apply(order.cpu_affinity)
    except OrderError as error:
        print(str(error), file=err)
        return ExitCode.USAGE
    if run_dir is not None and holds_a_crawl(run_dir):
        print(
            f"--run-dir {run_dir} already holds a crawl: `crawler resume {run_dir}` continues "
            "it; give a new directory for a new crawl",
            file=err,
        )
        return ExitCode.USAGE
    if job_dir is None:
        job_dir = order_path.resolve().parent
    try:
        if run_dir is None:
            run_dir = new_run_dir(job_dir)
        else:
            run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        where = run_dir if run_dir is not None else job_dir / "runs"
        print(f"cannot make the run directory {where}: {os_reason(error)}", file=err)
        return ExitCode.USAGE
    print(run_dir, file=out, flush=True)
    console: ConsoleProcess | None = None
    if console_bind is not None:
        from crawler.console.server import start_beside_crawl

        console = start_beside_crawl(console_bind, order_path, run_dir, out, err)
    display = crawl_display(order, no_display, out)
    try:
        return run_controller(
            lambda: CrawlController(order, run_dir, display=display), run_dir, out, err
        )
    finally:
        if console is not None:
            console.stop()


def run_controller(
    make: Callable[[], CrawlController], run_dir: Path, out: TextIO, err: TextIO
) -> int:
    """Make the controller with ``make`` and run the crawl to its end; its exit code, or the
    code of the error that stopped it (said in one line on ``err``)."""
    started = time.monotonic()
    from crawler.frontier import FrontierStateError
    from crawler.order.errors import OrderError

    try:
        controller = make()
        code = controller.run()
    except OrderError as error:
        print(str(error), file=err)
        return ExitCode.USAGE
    except FrontierStateError as error:
        print(f"cannot open the crawl's state: {error}", file=err)
        return ExitCode.FAILED
    except OSError as error:
        print(f"cannot use the run directory {run_dir}: {os_reason(error)}", file=err)
        return ExitCode.FAILED
    elapsed = time.monotonic() - started
    print(f"{controller.exit_status} in {elapsed:.1f}s", file=out)
    print_summary(run_dir, out)
    return code


def crawl_display(order: CrawlOrder, no_display: bool, out: TextIO) -> Display | None:
    """The live display the order's ``logging`` asks for, unless ``no_display``."""
    from crawler.cli.display import make_display

    enabled = order.logging.display and not no_display
    return make_display(enabled, out, order.logging.progress_interval_s)


def print_summary(run_dir: Path, out: TextIO) -> None:
    """Print totals from the run's crawl.log and where its outputs are."""
    from crawler.logs.growing_file import complete_lines

    log = run_dir / "logs" / "crawl.log"
    statuses: dict[str, int] = {}
    total = 0
    for line in complete_lines(log):
        parts = line.split(None, 2)
        if len(parts) >= 2:
            statuses[parts[1]] = statuses.get(parts[1], 0) + 1
            total += 1
    ok = sum(n for code, n in statuses.items() if code.lstrip("-").isdigit() and int(code) > 0)
    codes = ", ".join(f"{code}: {n}" for code, n in sorted(statuses.items(), key=lambda kv: -kv[1]))
    print(f"URIs logged: {total} ({ok} downloaded); by status: {codes or 'none'}", file=out)
    print(f"crawl.log: {log}", file=out)
    print(f"WARCs: {run_dir / 'warcs'}", file=out)
    if (run_dir / "indexes").is_dir():
        print(f"CDXJ indexes: {run_dir / 'indexes'}", file=out)
    for wacz in sorted(run_dir.glob("*.wacz")):
        print(f"WACZ: {wacz}", file=out)
    print(f"replay: crawler replay {run_dir}", file=out)


def holds_a_crawl(run_dir: Path) -> bool:
    """Whether ``run_dir`` is the run directory of an earlier crawl (a new one would mix with
    it)."""
    return (run_dir / "order.effective.yaml").exists() or (run_dir / "state").exists()


def os_reason(error: OSError) -> str:
    """What went wrong, with the file it concerns (``strerror: filename``)."""
    reason = error.strerror or type(error).__name__
    return f"{reason}: {error.filename}" if error.filename else reason
