"""ChromiumProcess: one headless Chromium launched by the crawler, and the reaping of Chromium
left behind by a crawl that was killed.

Chromium runs in its own process group (its renderers and helpers join it), with
``PR_SET_PDEATHSIG`` so the kernel kills it when the thread that launched it dies — a crawl
killed with ``kill -9`` takes its browsers along. Each launch is also written to
``state/browser-pids`` (process group and profile directory); :func:`reap_orphans`, called
when a crawl starts or resumes, kills whatever of those groups still runs a Chromium and
removes the profiles. Playwright connects over the DevTools protocol on a loopback port that
Chromium picks and writes into its profile (``DevToolsActivePort``), so no browser download
and no Playwright-managed process are involved.

Thread-safety: a ChromiumProcess is driven by one thread (the pool's event loop); the pid file
is appended under a module lock.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

PID_FILE = "browser-pids"
_PR_SET_PDEATHSIG = 1
_pid_lock = threading.Lock()

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--disable-dev-shm-usage",
    "--mute-audio",
    "--hide-scrollbars",
    # several pages load at once and each must run at full speed, not as a background tab
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-renderer-backgrounding",
    # A tab is reused page after page: keep its renderer process across same-site navigations
    # (no browsing-instance swap, no back/forward cache holding the previous page alive).
    "--disable-features=Translate,MediaRouter,OptimizationHints,DialMediaRouteProvider,"
    "ProactivelySwapBrowsingInstance,BackForwardCache",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
    # Every request of a page is intercepted and answered by the crawler's own fetch (which
    # obeys the address rule, crawler.netguard); Chromium itself must reach nothing, not even
    # with a speculative preconnect or DNS prefetch: no name or address resolves for it.
    "--host-resolver-rules=MAP * ~NOTFOUND",
)


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the launching thread dies (Linux only)."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


class ChromiumProcess:
    """A running Chromium: ``ws_endpoint`` for Playwright, ``kill()`` for its whole group."""

    def __init__(
        self,
        executable: str,
        state_dir: Path,
        start_timeout_s: float = 30.0,
        own_network: bool = False,
    ) -> None:
        """``own_network``: Chromium resolves names and connects itself (a login made outside
        any crawl); a crawl's Chromium never does."""
        if not Path(executable).exists():
            raise FileNotFoundError(f"no Chromium at {executable} (browser.executable)")
        self.profile = Path(tempfile.mkdtemp(prefix="crawler-chromium-"))
        self._state_dir = state_dir
        flags = [f for f in CHROMIUM_FLAGS if not (own_network and f.startswith("--host-resolver"))]
        self.proc = subprocess.Popen(
            [executable, *flags, f"--user-data-dir={self.profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        self.pid = self.proc.pid
        _append_pid(state_dir, self.pid, self.profile)
        try:
            self.ws_endpoint = self._wait_endpoint(start_timeout_s)
        except Exception:
            self.kill()
            raise

    def _wait_endpoint(self, timeout_s: float) -> str:
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"Chromium exited at start (code {self.proc.returncode})")
            with contextlib.suppress(OSError, ValueError):
                lines = port_file.read_text(encoding="ascii").split()
                if len(lines) >= 2:
                    return f"ws://127.0.0.1:{int(lines[0])}{lines[1]}"
            time.sleep(0.02)
        raise TimeoutError(f"Chromium gave no DevTools port within {timeout_s:.0f} s")

    def memory_bytes(self) -> int:
        """Memory of this browser's processes: the sum of their proportional set sizes (PSS,
        shared pages split among their sharers), so shared libraries count once."""
        total = 0
        for pid, rss in _group_members(self.pid):
            total += _pss_bytes(pid, rss)
        return total

    def kill(self) -> None:
        """Kill the whole process group, reap the main process, remove the profile. Idempotent."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            self.proc.wait(5)
        _remove_profile(self.profile)
        _remove_pid(self._state_dir, self.pid)


def _append_pid(state_dir: Path, pid: int, profile: Path) -> None:
    with _pid_lock:
        state_dir.mkdir(parents=True, exist_ok=True)
        with (state_dir / PID_FILE).open("a", encoding="utf-8") as fh:
            fh.write(f"{pid} {profile}\n")


def _remove_pid(state_dir: Path, pid: int) -> None:
    path = state_dir / PID_FILE
    with _pid_lock, contextlib.suppress(OSError):
        lines = path.read_text(encoding="utf-8").splitlines()
        kept = [line for line in lines if line.split(" ", 1)[0] != str(pid)]
        path.write_text("".join(line + "\n" for line in kept), encoding="utf-8")


def _group_members(pgid: int) -> list[tuple[int, int]]:
    """(pid, RSS bytes) of the Chromium processes in process group ``pgid``."""
    page = os.sysconf("SC_PAGE_SIZE")
    found: list[tuple[int, int]] = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                stat = fh.read()
            fields = stat[stat.rindex(b")") + 2 :].split()
            if int(fields[2]) != pgid:
                continue
            with open(f"/proc/{entry.name}/cmdline", "rb") as fh:
                if b"chrom" not in fh.read().lower():
                    continue
            found.append((int(entry.name), int(fields[21]) * page))
        except (OSError, ValueError, IndexError):
            continue
    return found


def _pss_bytes(pid: int, fallback: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
            for line in fh:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return fallback


def reap_orphans(state_dir: Path) -> int:
    """Kill the Chromium groups a killed crawl left (listed in ``state/browser-pids``), remove
    their profiles and the list; how many processes were killed."""
    path = state_dir / PID_FILE
    with _pid_lock:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError:
            return 0
        killed = 0
        for line in lines:
            pid_text, _, profile = line.partition(" ")
            if not pid_text.isdigit():
                continue
            for pid, _rss in _group_members(int(pid_text)):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
                    killed += 1
            if profile and Path(profile).name.startswith("crawler-chromium-"):
                _remove_profile(Path(profile))
        path.unlink(missing_ok=True)
    return killed


def _remove_profile(profile: Path, tries: int = 20) -> None:
    """Remove a killed browser's profile. SIGKILL lands a moment later, and until then a
    dying renderer may still create files in it, so a removal that leaves the directory is
    tried again (0.1 s apart, ``tries`` times in all)."""
    for _ in range(tries):
        shutil.rmtree(profile, ignore_errors=True)
        if not profile.exists():
            return
        time.sleep(0.1)
