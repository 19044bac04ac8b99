"""Serving the console: ``crawler console [--bind 127.0.0.1:8443] [--jobs-dir jobs/]`` and the
console that ``crawler run ORDER --console`` starts beside its crawl.

:func:`console_main` binds the socket itself (so ``--bind 127.0.0.1:0`` works and the real port
is printed), prints the URL and the token, then serves with uvicorn until interrupted. The token
comes from ``$CRAWLER_CONSOLE_TOKEN`` if set (how ``crawler run --console`` hands its token to
the console process without putting it on a command line), else is made up. A bind address that
is not loopback is allowed but warned about: the token then travels in clear text.

:func:`start_console_process` runs ``python -m crawler console`` as a separate process, so the
console's work never competes with the crawl's threads for the interpreter lock.
"""

from __future__ import annotations

import ipaddress
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, TextIO

from crawler.console.auth import TOKEN_ENV, new_token
from crawler.exit_code import ExitCode

if TYPE_CHECKING:
    from crawler.console.state import ConsoleState
    from crawler.schedule.background_scheduler import BackgroundScheduler

DEFAULT_BIND = "127.0.0.1:8443"
READY_PREFIX = "crawler console: "


def parse_bind(text: str) -> tuple[str, int]:
    """``host:port`` (``[::1]:8443`` for IPv6) as a pair; ValueError if malformed."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--bind expects HOST:PORT, got {text!r}")
    host = host.strip("[]") or "127.0.0.1"
    return host, int(port)


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def console_main(
    bind: str,
    jobs_dir: Path,
    run_dirs: list[Path],
    out: TextIO,
    err: TextIO,
    schedule: bool = True,
) -> int:
    """``crawler console``: serve until interrupted (and run the jobs' ``schedule:`` unless
    ``schedule`` is false). 0 on a clean stop, 2 on bad usage, 1 if the address cannot be
    bound."""
    import uvicorn

    from crawler.console.app import create_app
    from crawler.console.state import ConsoleState
    from crawler.console.workspace import Workspace

    try:
        host, port = parse_bind(bind)
    except ValueError as exc:
        print(str(exc), file=err)
        return ExitCode.USAGE
    try:
        sock = _bind(host, port)
    except OSError as exc:
        print(f"cannot listen on {bind}: {exc.strerror or exc}", file=err)
        return ExitCode.FAILED
    token = os.environ.get(TOKEN_ENV) or new_token()
    workspace = Workspace(jobs_dir, run_dirs)
    if not workspace.jobs_dir.is_dir():
        print(f"warning: no jobs directory {workspace.jobs_dir}", file=err)
    if not is_loopback(host):
        print(
            f"warning: listening on {host}, not loopback: the token travels in clear text; "
            "put the console behind an HTTPS proxy",
            file=err,
        )
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{sock.getsockname()[1]}/"
    state = ConsoleState(workspace)
    app = create_app(state, token)
    scheduler = _start_scheduler(workspace.jobs_dir, state, err) if schedule else None
    print(f"{READY_PREFIX}{url}", file=out)
    print(f"token: {token}", file=out)
    print(f"log in: {url}login?token={token}", file=out, flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    # uvicorn shuts down gracefully on SIGINT/SIGTERM, then re-raises the signal to the handler
    # that was there before: make that one a no-op, so a stopped console exits 0.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _ignore_signal)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        if scheduler is not None:
            scheduler.stop()
    return ExitCode.OK


def _start_scheduler(
    jobs_dir: Path, state: ConsoleState, err: TextIO
) -> BackgroundScheduler | None:
    """Run the jobs' schedules in this process, launching through the console's launcher;
    None (said on ``err``) if another scheduler already runs them or there is no jobs dir."""
    from crawler.schedule.background_scheduler import BackgroundScheduler

    if not jobs_dir.is_dir():
        return None
    scheduler = BackgroundScheduler(jobs_dir, state.launcher, log_to_console=False)
    problem = scheduler.start()
    if problem is not None:
        print(f"schedules not run here: {problem}", file=err)
        return None
    return scheduler


def _ignore_signal(signum: int, frame: FrameType | None) -> None:
    """Stands in for the default handlers once uvicorn has shut down on a signal."""


@dataclass
class ConsoleProcess:
    """A console serving beside a crawl (see :func:`start_console_process`)."""

    proc: subprocess.Popen[str]
    url: str
    token: str

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop the console (SIGTERM, then SIGKILL after ``timeout_s``)."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_console_process(
    bind: str, jobs_dir: Path, run_dir: Path, timeout_s: float = 20.0
) -> ConsoleProcess:
    """Start ``crawler console`` for ``run_dir``; returns once it listens. Its stderr is ours
    (so its warnings and errors show up); raises RuntimeError if it does not start."""
    token = os.environ.get(TOKEN_ENV) or new_token()
    command = [sys.executable, "-m", "crawler", "console", "--bind", bind]
    command += ["--jobs-dir", str(jobs_dir), "--run", str(run_dir), "--no-schedule"]
    proc = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, TOKEN_ENV: token},
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith(READY_PREFIX):
            url = line[len(READY_PREFIX) :].strip()
            return ConsoleProcess(proc, url, token)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    proc.communicate()
    raise RuntimeError(f"the console did not start on {bind} (its error is above)")


def start_beside_crawl(
    bind: str | None, order_path: Path, run_dir: Path, out: TextIO, err: TextIO
) -> ConsoleProcess | None:
    """For ``crawler run --console``: start the console (None when ``bind`` is None) and print
    how to reach it. A console that cannot start is reported; the crawl goes on without it."""
    if bind is None:
        return None
    jobs_dir = order_path.resolve().parent.parent
    try:
        console = start_console_process(bind, jobs_dir, run_dir)
    except (RuntimeError, OSError) as exc:
        print(f"no console: {exc}", file=err)
        return None
    print(f"console: {console.url} token: {console.token}", file=out)
    print(f"log in: {console.url}login?token={console.token}", file=out, flush=True)
    return console
