"""The ``crawler`` command: run, resume, validate, show-processor, demo, and the operator's
commands on a run directory (status, pause, unpause, terminate, block, sheets, report).

Exit codes: 0 the crawl finished (or the command succeeded), 1 crawl error, 2 bad usage or an
invalid order.

Each command imports what it needs when it runs: ``crawler --help`` and the operator's commands
start in a fraction of the time the crawl's imports (pydantic, the processors, httpx) take, and
``crawler run`` imports the web console's stack only in the console's own process.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from crawler.cli import profile_command
from crawler.cli.schedule_command import add_schedule_parser, cmd_schedule

if TYPE_CHECKING:
    from crawler.cli.display import Display
    from crawler.console.server import ConsoleProcess
    from crawler.control.controller import CrawlController
    from crawler.order.schema import CrawlOrder

PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent
_NO_DISPLAY = "no live display / progress lines on stdout (order key logging.display)"
_RUN_DIR = "the crawl's run directory (or a job directory: its latest run)"
_DEMO_PORT = 8000


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="crawler",
        description="An archival web crawler on Heritrix's architecture.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="run a crawl from a YAML crawl order")
    run.add_argument("order", type=Path, help="the job's order.yaml")
    run.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a dotted key with a YAML value, e.g. --set toe_threads=50",
    )
    run.add_argument(
        "--run-dir",
        type=Path,
        help="directory for this run (default: <job dir>/runs/<UTC stamp>/)",
    )
    run.add_argument("--no-display", action="store_true", help=_NO_DISPLAY)
    run.add_argument(
        "--console", action="store_true", help="also serve the web console while crawling"
    )
    run.add_argument("--console-bind", default="127.0.0.1:8443", metavar="HOST:PORT")
    run.add_argument(
        "--workers",
        type=int,
        default=0,
        metavar="N",
        help="run N worker processes sharing the order's Redis frontier (frontier.store: "
        "crawler.frontier.RedisQueueStore); others may join with `crawler worker`",
    )

    work = sub.add_parser("worker", help="join a running Redis-backed crawl from this machine")
    work.add_argument("order", type=Path, help="the crawl's order.yaml (same name as the crawl)")
    work.add_argument("--redis", required=True, metavar="URL", help="the crawl's Redis URL")
    work.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    work.add_argument("--run-dir", type=Path, help="this worker's run directory")
    work.add_argument("--worker-id", help="name in leases and file names (default host-pid)")
    work.add_argument(
        "--crawl-id",
        type=int,
        metavar="N",
        help="join only crawl N of the order's name (`crawler run --workers` prints its id)",
    )

    res = sub.add_parser("resume", help="continue a crawl after a stop or a crash (even kill -9)")
    res.add_argument("run_dir", type=Path, help=_RUN_DIR)
    res.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    res.add_argument("--no-display", action="store_true", help=_NO_DISPLAY)

    val = sub.add_parser("validate", help="print the effective order, or every error in it")
    val.add_argument("order", type=Path)
    val.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")

    show = sub.add_parser("show-processor", help="print a processor's parameters")
    show.add_argument("cls", metavar="CLASS", help="dotted path, e.g. processors.fetch.FetchHTTP")

    demo = sub.add_parser("demo", help="serve the bundled sample site on 127.0.0.1 and crawl it")
    demo.add_argument(
        "--port",
        type=int,
        help=f"first of the sample site's 3 ports (default {_DEMO_PORT}, or free ones if taken)",
    )
    demo.add_argument("--pages", type=int, default=100, help="pages per host")
    demo.add_argument("--run-dir", type=Path, help="directory for this run")
    demo.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    demo.add_argument("--no-display", action="store_true", help=_NO_DISPLAY)

    console = sub.add_parser("console", help="web console and REST API for the jobs' crawls")
    console.add_argument("--bind", default="127.0.0.1:8443", metavar="HOST:PORT")
    console.add_argument("--jobs-dir", type=Path, default=Path("jobs"), metavar="DIR")
    console.add_argument(
        "--run",
        dest="runs",
        action="append",
        type=Path,
        default=[],
        metavar="RUN_DIR",
        help="also show this run directory",
    )
    console.add_argument(
        "--no-schedule", action="store_true", help="do not run the jobs' schedule: here"
    )

    status = sub.add_parser("status", help="state, counts, rates and errors of a crawl")
    status.add_argument("run_dir", type=Path, help=_RUN_DIR)
    status.add_argument("--json", action="store_true", help="print status.json (for scripts)")
    for kind, text in (
        ("pause", "stop fetching; URIs in process finish (state PAUSED)"),
        ("unpause", "resume a paused crawl"),
        ("terminate", "end the crawl cleanly: URIs in process finish, reports are written"),
    ):
        ctl = sub.add_parser(kind, help=text)
        ctl.add_argument("run_dir", type=Path, help=_RUN_DIR)
        ctl.add_argument("--wait-s", type=float, default=60.0, help="how long to wait for it")
    block = sub.add_parser(
        "block", help="block URIs matching a regex: queued ones end -5001, new ones are refused"
    )
    block.add_argument("run_dir", type=Path, help=_RUN_DIR)
    block.add_argument("regex", help="Python regular expression, searched anywhere in the URI")
    block.add_argument("--wait-s", type=float, default=10.0)
    sheets = sub.add_parser(
        "sheets", help="add, replace or remove sheets (per-site settings) of a running crawl"
    )
    sheets.add_argument("run_dir", type=Path, help=_RUN_DIR)
    sheets.add_argument("file", help="a sheets document (YAML; - for standard input)")
    sheets.add_argument("--wait-s", type=float, default=10.0)
    report = sub.add_parser("report", help="write reports/ now (also while running), print one")
    report.add_argument("run_dir", type=Path, help=_RUN_DIR)
    report.add_argument("--plot", action="store_true", help="also write reports/progress.png")
    report.add_argument("--wait-s", type=float, default=30.0)
    report.add_argument(
        "--include",
        type=Path,
        nargs="+",
        default=[],
        metavar="DIR",
        help="distributed crawl: also the run directories of workers that ran elsewhere",
    )
    _archive_commands(sub)
    _crawl_command(sub)
    add_schedule_parser(sub)
    profile_command.add_parser(sub)
    return parser


def _crawl_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``crawler crawl URL...`` (:mod:`crawler.cli.crawl_command`)."""
    crawl = sub.add_parser(
        "crawl", help="crawl URLs with the default order in a new job directory (one command)"
    )
    crawl.add_argument(
        "urls", nargs="+", metavar="URL", help="seeds: what is under them is crawled"
    )
    crawl.add_argument(
        "--contact",
        metavar="URL",
        help="page saying who runs the crawl (User-Agent); default: $CRAWLER_CONTACT_URL",
    )
    crawl.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    crawl.add_argument("--wacz", type=Path, metavar="FILE", help="also package the crawl as FILE")
    crawl.add_argument("--jobs-dir", type=Path, default=Path("jobs"), metavar="DIR")
    crawl.add_argument("--no-display", action="store_true", help=_NO_DISPLAY)


def _archive_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``crawler index``, ``wacz`` and ``replay`` (:mod:`crawler.archive`)."""
    index = sub.add_parser("index", help="write CDXJ indexes of a run's WARCs (indexes/*.cdxj)")
    index.add_argument("run_dir", type=Path, help=_RUN_DIR)
    index.add_argument("--force", action="store_true", help="re-index WARCs already indexed")
    wacz = sub.add_parser("wacz", help="package a run's WARCs, indexes and pages as a WACZ file")
    wacz.add_argument("run_dir", type=Path, help=_RUN_DIR)
    wacz.add_argument("-o", "--output", type=Path, required=True, metavar="FILE.wacz")
    wacz.add_argument(
        "--runs",
        choices=("latest", "all"),
        default=None,
        help="of a job directory: its latest run (default) or every finished run in one package",
    )
    replay = sub.add_parser(
        "replay", help="serve a run's WARCs (or a WACZ) through pywb and print the replay prefix"
    )
    replay.add_argument(
        "source",
        type=Path,
        help="a run directory, a job directory (every finished run) or FILE.wacz",
    )
    replay.add_argument("--bind", default="127.0.0.1:8488", metavar="HOST:PORT")
    replay.add_argument(
        "--include",
        type=Path,
        action="append",
        default=[],
        metavar="RUN_DIR",
        help="also this run's captures (runs its history was imported from, or that its "
        "dedup.collections name, are included)",
    )


def _archive_main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int | None:
    """Run an archive command; None if ``args`` names another command."""
    if args.command == "index":
        from crawler.archive.run_index import cmd_index
        from crawler.cli.operations import resolve_run_dir

        return cmd_index(resolve_run_dir(args.run_dir), args.force, out, err)
    if args.command == "wacz":
        from crawler.archive.wacz import cmd_wacz
        from crawler.cli.operations import resolve_run_dir

        source = args.run_dir if args.runs == "all" else resolve_run_dir(args.run_dir)
        return cmd_wacz(source, args.output, out, err, args.runs)
    if args.command == "replay":
        from crawler.archive.job_runs import is_job_dir
        from crawler.archive.replay import cmd_replay
        from crawler.cli.operations import resolve_run_dir

        source = args.source
        if not (source.is_file() or is_job_dir(source)):
            source = resolve_run_dir(source)
        return cmd_replay(source, args.bind, out, err, args.include)
    return None


def _summary(run_dir: Path, out: TextIO) -> None:
    """Print totals from the run's crawl.log."""
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


def cmd_resume(
    run_dir: Path, sets: Sequence[str], out: TextIO, err: TextIO, no_display: bool = False
) -> int:
    """Continue the crawl in ``run_dir`` from its saved state."""
    from crawler.cli.operations import resolve_run_dir
    from crawler.control import affinity
    from crawler.control.controller import CrawlController
    from crawler.order.errors import OrderError
    from crawler.order.loader import load_order

    run_dir = resolve_run_dir(run_dir)  # a job directory: its latest run
    effective = run_dir / "order.effective.yaml"
    if not (run_dir / "state").is_dir() or not effective.is_file():
        print(
            f"{run_dir} is not a crawl's run directory (no state/ or order.effective.yaml)",
            file=err,
        )
        return 2
    try:
        order = load_order(effective, sets)
        affinity.apply(order.cpu_affinity)
    except OrderError as error:
        print(str(error), file=err)
        return 2
    print(run_dir, file=out, flush=True)
    display = _display(order, no_display, out)
    return _run_controller(
        lambda: CrawlController(order, run_dir, resume=True, display=display), run_dir, out, err
    )


def _display(order: CrawlOrder, no_display: bool, out: TextIO) -> Display | None:
    from crawler.cli.display import make_display

    enabled = order.logging.display and not no_display
    return make_display(enabled, out, order.logging.progress_interval_s)


def _run_controller(
    make: Callable[[], CrawlController], run_dir: Path, out: TextIO, err: TextIO
) -> int:
    started = time.monotonic()
    from crawler.frontier import FrontierStateError
    from crawler.order.errors import OrderError

    try:
        controller = make()
        code = controller.run()
    except OrderError as error:
        print(str(error), file=err)
        return 2
    except FrontierStateError as error:
        print(f"cannot open the crawl's state: {error}", file=err)
        return 1
    except OSError as error:
        print(f"cannot use the run directory {run_dir}: {_os_reason(error)}", file=err)
        return 1
    elapsed = time.monotonic() - started
    print(f"{controller.exit_status} in {elapsed:.1f}s", file=out)
    _summary(run_dir, out)
    return code


def cmd_run(
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
    new run of ``job_dir`` (default: the order's directory)."""
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
        return 2
    if run_dir is not None and _holds_a_crawl(run_dir):
        print(
            f"--run-dir {run_dir} already holds a crawl: `crawler resume {run_dir}` continues "
            "it; give a new directory for a new crawl",
            file=err,
        )
        return 2
    if job_dir is None:
        job_dir = order_path.resolve().parent
    try:
        if run_dir is None:
            run_dir = new_run_dir(job_dir)
        else:
            run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        where = run_dir if run_dir is not None else job_dir / "runs"
        print(f"cannot make the run directory {where}: {_os_reason(error)}", file=err)
        return 2
    print(run_dir, file=out, flush=True)
    console: ConsoleProcess | None = None
    if console_bind is not None:
        from crawler.console.server import start_beside_crawl

        console = start_beside_crawl(console_bind, order_path, run_dir, out, err)
    display = _display(order, no_display, out)
    try:
        return _run_controller(
            lambda: CrawlController(order, run_dir, display=display), run_dir, out, err
        )
    finally:
        if console is not None:
            console.stop()


def _holds_a_crawl(run_dir: Path) -> bool:
    """Whether ``run_dir`` is the run directory of an earlier crawl (a new one would mix with
    it)."""
    return (run_dir / "order.effective.yaml").exists() or (run_dir / "state").exists()


def _os_reason(error: OSError) -> str:
    """What went wrong, with the file it concerns (``strerror: filename``)."""
    reason = error.strerror or type(error).__name__
    return f"{reason}: {error.filename}" if error.filename else reason


def cmd_demo(
    port: int | None,
    pages: int,
    run_dir: Path | None,
    sets: Sequence[str],
    out: TextIO,
    err: TextIO,
    no_display: bool = False,
) -> int:
    """Serve the sample site and crawl it with the example job, politeness off. The site is on
    ports ``port`` to ``port + 2`` (exit 2 if one is taken); without ``port``, on 8000-8002,
    else on free ports."""
    from crawler.demo.sample_site import SampleSite
    from crawler.demo.site_generator import MIN_PAGES_PER_HOST

    if pages < MIN_PAGES_PER_HOST:
        print(f"crawler demo: --pages {pages}: give at least {MIN_PAGES_PER_HOST}", file=err)
        return 2
    if port is not None and not 0 <= port <= 65535 - 2:
        print(f"crawler demo: --port {port}: give a port from 1 to 65533 (0: any)", file=err)
        return 2
    first = _DEMO_PORT if port is None else port
    ports = (0, 0, 0) if first == 0 else (first, first + 1, first + 2)
    try:
        site = SampleSite(ports=ports, pages_per_host=pages)
        urls = site.start()
    except OSError as error:
        taken = f"ports {first}-{first + 2} of 127.0.0.1 are not all free ({_os_reason(error)})"
        if port is not None:
            print(f"crawler demo: --port {port}: {taken}", file=err)
            return 2
        print(f"{taken}: the sample site takes free ports", file=out)
        site = SampleSite(ports=(0, 0, 0), pages_per_host=pages)
        urls = site.start()
    print(f"sample site: {', '.join(urls)}", file=out, flush=True)
    order = PROJECT_ROOT / "jobs" / "example" / "order.yaml"
    overrides = [
        "name=demo",
        f"seeds.urls={urls!r}",
        "seeds.file=null",
        "frontier.politeness.delay_factor=0",
        "frontier.politeness.min_delay_ms=0",
        "frontier.politeness.max_delay_ms=0",
        *sets,
    ]
    try:
        return cmd_run(
            order, overrides, run_dir, out, err, no_display, job_dir=Path.cwd() / "jobs" / "demo"
        )
    finally:
        site.stop()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``crawler`` command."""
    args = _parser().parse_args(argv)
    out, err = sys.stdout, sys.stderr
    if args.command == "run" and _url_given_as_order(args.order, err):
        return 2
    if args.command == "run" and args.workers:
        from crawler.distributed import run_workers

        return run_workers(args.order, args.sets, args.workers, out, err, run_dir=args.run_dir)
    if args.command == "crawl":
        from crawler.cli.crawl_command import cmd_crawl

        return cmd_crawl(
            args.urls,
            args.contact,
            args.sets,
            args.wacz,
            args.jobs_dir,
            out,
            err,
            args.no_display,
            run_order=cmd_run,
        )
    if args.command == "run":
        console = args.console_bind if args.console else None
        return cmd_run(args.order, args.sets, args.run_dir, out, err, args.no_display, console)
    if args.command == "console":
        from crawler.console.server import console_main

        return console_main(args.bind, args.jobs_dir, args.runs, out, err, not args.no_schedule)
    if args.command == "worker":
        from crawler.distributed import worker_main

        return worker_main(
            args.order,
            args.redis,
            args.sets,
            out,
            err,
            worker_id=args.worker_id,
            run_dir=args.run_dir,
            crawl_id=args.crawl_id,
        )
    if args.command == "resume":
        return cmd_resume(args.run_dir, args.sets, out, err, args.no_display)
    if args.command == "validate":
        from crawler.order.preflight import validate_main

        return validate_main(args.order, args.sets, out, err)
    if args.command == "show-processor":
        from crawler.order.components import show_processor_main

        return show_processor_main(args.cls, out, err)
    if args.command == "schedule":
        return cmd_schedule(args.jobs_dir, out, err)
    if args.command == profile_command.VERB:
        return profile_command.run(args, out, err)
    if args.command == "demo":
        return cmd_demo(args.port, args.pages, args.run_dir, args.sets, out, err, args.no_display)
    archived = _archive_main(args, out, err)
    if archived is not None:
        return archived
    return _operation(args, out, err)


def _url_given_as_order(order: Path, err: TextIO) -> bool:
    """``crawler run URL``: say that ``crawler crawl`` takes URLs (True), instead of failing to
    read a file named ``http:/host``."""
    from crawler.cli.crawl_command import url_instead_of_order

    url = url_instead_of_order(order)
    if url is None:
        return False
    print(
        f"crawler run takes a crawl order (a YAML file), not the URL {url}; to crawl a URL with "
        f"the default order: crawler crawl {url} --contact https://example.org/about-my-crawler",
        file=err,
    )
    return True


def _is_distributed(run_dir: Path) -> bool:
    """Whether ``run_dir`` has the ``distributed.json`` of :mod:`crawler.distributed`, told
    without importing that module (it imports the controller and redis)."""
    return (run_dir / "distributed.json").is_file()


def _operation(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from crawler.cli import operations

    if args.command in ("status", "pause", "unpause", "terminate"):
        run_dir = operations.resolve_run_dir(args.run_dir)
        if _is_distributed(run_dir):  # workers steered through Redis
            from crawler import distributed

            if args.command == "status":
                return distributed.cmd_status(run_dir, args.json, out, err)
            return distributed.cmd_control(args.command, run_dir, args.wait_s, out, err)
    if args.command == "status":
        return operations.cmd_status(args.run_dir, args.json, out, err)
    if args.command in ("pause", "unpause", "terminate"):
        return operations.cmd_control(args.command, args.run_dir, args.wait_s, out, err)
    if args.command == "block":
        return operations.cmd_block(args.run_dir, args.regex, args.wait_s, out, err)
    if args.command == "sheets":
        from crawler.sheets.sheet_command import cmd_sheets

        return cmd_sheets(args.run_dir, args.file, args.wait_s, out, err)
    if args.command == "report":
        run_dir = operations.resolve_run_dir(args.run_dir)
        if _is_distributed(run_dir):  # reports over every worker
            from crawler import distributed

            return distributed.cmd_report(run_dir, args.include, out, err)
        return operations.cmd_report(args.run_dir, args.plot, args.wait_s, out, err)
    return 2


if __name__ == "__main__":
    sys.exit(main())
