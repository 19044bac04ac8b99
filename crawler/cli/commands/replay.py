"""``crawler replay RUN_DIR|JOB_DIR|FILE.wacz``: serve the captures through pywb on loopback and
print the replay prefix until Ctrl-C (:class:`crawler.archive.replay.ReplayServer`). While it
serves a run or job directory, ``replay.json`` there (``prefix``, ``pid``) tells the web console
where; it is removed on exit. Exit codes: :class:`~crawler.exit_code.ExitCode`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from crawler.exit_code import ExitCode

if TYPE_CHECKING:
    from crawler.archive.replay import ReplayServer


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``crawler replay``'s arguments."""
    parser.add_argument(
        "source",
        type=Path,
        help="a run directory, a job directory (every finished run) or FILE.wacz",
    )
    parser.add_argument("--bind", default="127.0.0.1:8488", metavar="HOST:PORT")
    parser.add_argument(
        "--include",
        type=Path,
        action="append",
        default=[],
        metavar="RUN_DIR",
        help="also this run's captures (runs its history was imported from, or that its "
        "dedup.collections name, are included)",
    )


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Serve the captures until interrupted."""
    from crawler.archive.job_runs import is_job_dir
    from crawler.cli.run_dirs import resolve_run_dir

    source = args.source
    if not (source.is_file() or is_job_dir(source)):
        source = resolve_run_dir(source)
    return serve_replay(source, args.bind, out, err, args.include)


def serve_replay(
    source: Path, bind: str, out: TextIO, err: TextIO, also: list[Path] | None = None
) -> int:
    """Serve ``source`` (a run directory, a job directory or a ``.wacz``; with the run
    directories ``also`` beside a run or job) until Ctrl-C: OK stopped by the operator, FAILED
    pywb failed, USAGE bad usage or nothing to replay."""
    from crawler.archive.collection import (
        NothingToReplayError,
        collection_from_job,
        collection_from_run,
        collection_from_wacz,
    )
    from crawler.archive.job_runs import is_job_dir
    from crawler.archive.replay import (
        REPLAY_FILE,
        ReplayError,
        ReplayServer,
        parse_bind,
        port_taken,
    )

    try:
        host, port = parse_bind(bind)
    except ValueError as error:
        print(error, file=err)
        return ExitCode.USAGE
    taken = port_taken(host, port) if port else None
    if taken is not None:
        print(f"--bind {bind}: cannot listen on {host}:{port}: {taken}", file=err)
        return ExitCode.USAGE
    if not _have_pywb(out, err):
        return ExitCode.FAILED
    is_wacz = source.is_file() and source.name.endswith(".wacz")
    if not is_wacz and not source.is_dir():
        print(f"{source}: neither a run directory nor a .wacz file", file=err)
        return ExitCode.USAGE
    work = Path(tempfile.mkdtemp(prefix="crawler-replay-"))
    marker: Path | None = None
    try:
        try:
            if is_wacz:
                collection = collection_from_wacz(source, work)
            elif is_job_dir(source):
                collection = collection_from_job(source, work, also)
            else:
                collection = collection_from_run(source, work, also)
        except NothingToReplayError as error:
            print(str(error), file=err)
            return ExitCode.USAGE
        for line in collection.problems:
            print(f"warning: {line}", file=err)
        server = ReplayServer(collection, host, port)
        try:
            prefix = server.start()
        except ReplayError as error:
            print(str(error), file=err)
            return ExitCode.FAILED
        if not is_wacz:
            marker = source / REPLAY_FILE
            marker.write_text(json.dumps({"prefix": prefix, "pid": os.getpid()}) + "\n")
        print(f"replaying {collection.records} capture(s) of {source} through pywb", file=out)
        print(f"replay prefix: {prefix}", file=out)
        print(f"open {prefix}<archived URL>; Ctrl-C stops", file=out, flush=True)
        return _serve(server)
    finally:
        if marker is not None:
            marker.unlink(missing_ok=True)
        shutil.rmtree(work, ignore_errors=True)


def _have_pywb(out: TextIO, err: TextIO) -> bool:
    """pywb is there, or (an installed crawler, not a checkout) was made now."""
    from crawler.archive.replay import ReplayError, find_wayback
    from crawler.shipped import in_checkout

    try:
        find_wayback()
        return True
    except ReplayError as error:
        if in_checkout():
            print(str(error), file=err)
            return False
    from crawler.archive.replay_env import make_replay_env

    try:
        make_replay_env(out)
    except RuntimeError as exc:
        print(f"cannot make pywb's environment: {exc}", file=err)
        return False
    return True


def _serve(server: ReplayServer) -> int:
    """Wait until pywb ends or the operator stops it (SIGINT, SIGTERM); stop it."""
    previous = None
    with contextlib.suppress(ValueError):  # only the main thread may set handlers
        previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        code = server.wait()
        return ExitCode.OK if code in (0, -signal.SIGTERM) else ExitCode.FAILED
    except KeyboardInterrupt:
        return ExitCode.OK
    finally:
        server.stop()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
