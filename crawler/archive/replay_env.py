"""pywb's own virtualenv for an installed crawler: where it lives and how it is made on first use.

A checkout has ``.replay-venv/`` (``make install``). An installed crawler (a wheel, pipx, the
container image) makes one the first time ``crawler replay`` needs it: ``python -m venv`` at
:func:`replay_env_dir` (``$CRAWLER_REPLAY_VENV``, else ``$XDG_DATA_HOME/crawler/replay-venv``,
else ``~/.local/share/crawler/replay-venv``), then ``pip install -r`` the shipped
``conf/replay-requirements.txt`` (pywb pins redis 2.x and gevent, which cannot share the crawler's
environment). It needs PyPI once, about a minute. Not thread-safe: one process makes it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TextIO

from crawler.shipped import shipped


def replay_env_dir() -> Path:
    """Where an installed crawler keeps pywb's virtualenv."""
    configured = os.environ.get("CRAWLER_REPLAY_VENV")
    if configured:
        return Path(configured).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "crawler" / "replay-venv"


def make_replay_env(out: TextIO, target: Path | None = None) -> Path:
    """Make pywb's virtualenv at ``target`` (default :func:`replay_env_dir`); returns the path
    of its ``wayback`` command. Raises ``RuntimeError`` naming the step that failed."""
    venv = target or replay_env_dir()
    requirements = shipped("conf/replay-requirements.txt")
    print(f"pywb is not installed: making its environment in {venv} (once; needs PyPI)", file=out)
    out.flush()
    venv.parent.mkdir(parents=True, exist_ok=True)
    steps = [
        [sys.executable, "-m", "venv", str(venv)],
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-r",
            str(requirements),
        ],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            raise RuntimeError(f"{' '.join(step[:3])} failed: {' / '.join(tail)}")
    return venv / "bin" / "wayback"
