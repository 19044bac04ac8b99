"""Helpers of the console's end-to-end tests: a ``crawler console`` subprocess, a headless
Chromium (Debian's, driven by Playwright), small PNG screenshots for docs/console.md."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from crawler.console.auth import TOKEN_ENV
from crawler.console.server import READY_PREFIX

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = (
    ROOT / "docs" / "screenshots"
    if os.environ.get("UPDATE_SCREENSHOTS")
    else Path(tempfile.gettempdir()) / "crawler-console-screenshots"
)
"""The screenshots of docs/console.md are rewritten only with UPDATE_SCREENSHOTS=1: a test run
leaves the checkout as it found it."""
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def wait_until(check: Callable[[], object], timeout_s: float = 60.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        time.sleep(0.05)


class ConsoleProc:
    """``python -m crawler console`` on a free loopback port, with a known token."""

    def __init__(self, jobs_dir: Path, token: str | None, *extra: str) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env.pop(TOKEN_ENV, None)
        if token is not None:
            env[TOKEN_ENV] = token
        cmd = [sys.executable, "-m", "crawler", "console", "--bind", "127.0.0.1:0"]
        cmd += ["--jobs-dir", str(jobs_dir), *extra]
        self.proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()
        assert first.startswith(READY_PREFIX), first + self.proc.stderr.read()  # type: ignore[union-attr]
        self.url = first[len(READY_PREFIX) :].strip().rstrip("/")
        self.token = self.proc.stdout.readline().split(":", 1)[1].strip()
        self.login_line = self.proc.stdout.readline()

    def api(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.token}"}
        return httpx.request(method, self.url + path, headers=headers, timeout=30, **kwargs)

    def cpu_s(self) -> float:
        """CPU seconds (user + system) the console process has used."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> tuple[int, str]:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            _, err = self.proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return self.proc.returncode, err


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Debian Chromium driven by Playwright (its bundled driver; no download)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def save_screenshot(page: Any, name: str, **kwargs: Any) -> Path:
    """A screenshot as a 256-colour PNG (small enough to commit) under :data:`SCREENSHOTS`."""
    from PIL import Image

    raw = page.screenshot(**kwargs)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / name
    image = Image.open(io.BytesIO(raw)).convert("RGB")
    # written aside and renamed: test processes running at once may save the same name
    part = path.with_name(f".{name}.{os.getpid()}.part")
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(
        part, format="PNG", optimize=True
    )
    os.replace(part, path)
    return path
