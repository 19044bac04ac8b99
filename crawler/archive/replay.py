"""ReplayServer: pywb serving a :class:`~crawler.archive.collection.PywbCollection` on loopback,
behind ``crawler replay RUN_DIR|JOB_DIR|FILE.wacz`` (:mod:`crawler.cli.commands.replay`; a job
directory: every finished run of the job as one collection,
:func:`~crawler.archive.collection.collection_from_job`).

pywb lives in its own virtualenv, ``.replay-venv/`` (``make install`` creates it from
``conf/replay-requirements.txt``): it pins redis 2.x and brings gevent, which the crawler's own
environment (redis >= 5) cannot share. It is found as ``$CRAWLER_PYWB`` (the path of its
``wayback`` command), else ``<project>/.replay-venv/bin/wayback``, else an installed crawler's
own (:mod:`crawler.archive.replay_env`), else ``wayback`` on ``PATH``.

:meth:`ReplayServer.start` runs ``wayback`` in the collection's working directory and returns
once pywb answers; then ``prefix + archived URL`` replays that capture (pywb's framed replay:
a banner page whose frame loads ``prefix + <timestamp>mp_/ + URL``). Its output goes to
``<work dir>/pywb.log``. While ``crawler replay`` serves a run, ``RUN_DIR/replay.json``
(``prefix``, ``pid``) tells the web console where (``JOB_DIR/replay.json`` for a job); it is
removed on exit. One thread drives a
server; :meth:`stop` may be called from another.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

from crawler.archive.collection import (
    PywbCollection,
)
from crawler.archive.replay_env import replay_env_dir
from crawler.crawler_error import CrawlerError

PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent
REPLAY_FILE = "replay.json"
_POLL_S = 0.2


class ReplayError(CrawlerError):
    """pywb is missing, or did not start."""


def find_wayback() -> Path:
    """The pywb ``wayback`` command (see the module docstring); ReplayError if there is none."""
    configured = os.environ.get("CRAWLER_PYWB")
    candidates = [Path(configured)] if configured else []
    candidates.append(PROJECT_ROOT / ".replay-venv" / "bin" / "wayback")
    candidates.append(replay_env_dir() / "bin" / "wayback")
    on_path = shutil.which("wayback")
    if on_path:
        candidates.append(Path(on_path))
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    raise ReplayError(
        "pywb is not installed: `crawler replay` makes it on first use "
        f"({replay_env_dir()}); in a checkout `make install` makes .replay-venv/; or set "
        "CRAWLER_PYWB to the path of pywb's `wayback` command"
    )


def free_port(host: str) -> int:
    """A TCP port free on ``host`` now."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def port_taken(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on now (in use, no such address), or None."""
    try:
        with socket.socket() as sock:
            sock.bind((host, port))
    except OSError as error:
        return error.strerror or str(error)
    return None


class ReplayServer:
    """pywb on ``host:port`` (port 0: a free one) serving ``collection``."""

    def __init__(self, collection: PywbCollection, host: str = "127.0.0.1", port: int = 0) -> None:
        self.collection = collection
        self.host = host
        self.port = port or free_port(host)
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def prefix(self) -> str:
        """The replay prefix: append an archived URL to replay it."""
        return f"http://{self.host}:{self.port}/{self.collection.name}/"

    @property
    def pid(self) -> int | None:
        """pywb's process id while it runs."""
        return self._process.pid if self._process is not None else None

    def start(self, timeout_s: float = 60.0) -> str:
        """Start pywb and wait until it answers; returns :attr:`prefix`. ReplayError if pywb
        is missing, exits, or does not answer within ``timeout_s``."""
        wayback = find_wayback()
        log = (self.collection.work_dir / "pywb.log").open("wb")
        with log:
            self._process = subprocess.Popen(
                [str(wayback), "-b", self.host, "-p", str(self.port), "-t", "8"],
                cwd=self.collection.work_dir,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C on the terminal reaches crawler replay only
            )
        deadline = time.monotonic() + timeout_s
        # Only our pywb's answer counts: another server on the port answers too.
        while not (self._answers() and self._process.poll() is None):
            if self._process.poll() is not None or time.monotonic() > deadline:
                tail = self._log_tail()
                self.stop()
                raise ReplayError(f"pywb did not start on {self.host}:{self.port}:\n{tail}")
            time.sleep(_POLL_S)
        return self.prefix

    def wait(self) -> int:
        """Block until pywb exits; its exit code."""
        return self._process.wait() if self._process is not None else 0

    def stop(self) -> None:
        """Stop pywb (terminate, then kill after 10 s). Idempotent."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)

    def __enter__(self) -> ReplayServer:
        self.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(self.prefix, timeout=5) as response:
                return int(response.status) < 500
        except urllib.error.HTTPError as error:
            return error.code < 500
        except (OSError, ValueError):
            return False

    def _log_tail(self) -> str:
        try:
            text = (self.collection.work_dir / "pywb.log").read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-15:])


def parse_bind(bind: str) -> tuple[str, int]:
    """``HOST:PORT`` (or ``PORT``) to a pair; ValueError with the fix if malformed."""
    host, _, port = bind.rpartition(":")
    if not port.isdigit() or int(port) > 65535:
        raise ValueError(f"--bind {bind!r}: use HOST:PORT, e.g. 127.0.0.1:8488 (port 0: any)")
    return host or "127.0.0.1", int(port)
