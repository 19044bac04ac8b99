"""The browser obeys the address rule: a page's sub-resources, frames and script requests to
non-public addresses end -5006 unfetched, and Chromium itself opens no connection (a preconnect
hint to another loopback port finds nobody knocking)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_support import crawl, needs_chromium
from support.private_nets_support import CountingSite, Page

pytestmark = [pytest.mark.integration, needs_chromium, pytest.mark.timeout(120)]


class Knock:
    """A listening socket on 127.0.0.1 that counts the connections made to it."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.port: int = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()


@pytest.fixture
def trap() -> Iterator[CountingSite]:
    site = CountingSite(lambda path: (200, {"Content-Type": "image/png"}, b"\x89PNG"))
    yield site
    site.close()


@pytest.fixture
def knock() -> Iterator[Knock]:
    listener = Knock()
    yield listener
    listener.close()


def page(trap_port: int, knock_port: int) -> bytes:
    t = trap_port
    return f"""<!doctype html><html><head>
<link rel="preconnect" href="http://127.0.0.1:{knock_port}">
<link rel="dns-prefetch" href="http://127.0.0.1:{knock_port}">
</head><body>
<img src="/own.png">
<img src="http://127.0.0.1:{t}/img.png">
<img src="http://[::1]:{t}/v6.png">
<img src="http://169.254.169.254/latest/meta-data/x.png">
<iframe src="http://127.0.0.1:{t}/frame.html"></iframe>
<script>
fetch("http://127.0.0.1:{t}/api").catch(() => null);
fetch("http://10.0.0.1/admin").catch(() => null);
</script>
</body></html>""".encode()


def test_browser_requests_to_non_public_addresses_end_minus_5006_unconnected(
    tmp_path: Path, trap: CountingSite, knock: Knock
) -> None:
    def pages(path: str) -> Page:
        if path == "/":
            return 200, {}, page(trap.port, knock.port)
        if path == "/own.png":
            return 200, {"Content-Type": "image/png"}, b"\x89PNG"
        return 404, {}, b"not found"

    site = CountingSite(pages)
    try:
        lines = crawl(
            tmp_path / "run",
            [f"http://127.0.0.1:{site.port}/"],
            "browser.enabled=true",
            "browser.all_html=true",
            "browser.behaviours=false",
        )
    finally:
        site.close()
    by_uri = {line.uri: line for line in lines}
    base = f"http://127.0.0.1:{site.port}"
    assert by_uri[base + "/own.png"].status == 200  # the seed's server: fetched for the page
    t = trap.port
    refused = {
        f"http://127.0.0.1:{t}/img.png": "nonPublicAddress:loopback:127.0.0.1",
        f"http://[::1]:{t}/v6.png": "nonPublicAddress:loopback:::1",
        "http://169.254.169.254/latest/meta-data/x.png": "nonPublicAddress:linkLocal:",
        f"http://127.0.0.1:{t}/frame.html": "nonPublicAddress:loopback:127.0.0.1",
        f"http://127.0.0.1:{t}/api": "nonPublicAddress:loopback:127.0.0.1",
        "http://10.0.0.1/admin": "nonPublicAddress:private:10.0.0.1",
    }
    for uri, note in refused.items():
        assert uri in by_uri, f"{uri} not logged: {sorted(by_uri)}"
        line = by_uri[uri]
        assert line.status == -5006, (uri, line.status, line.annotations)
        assert "browser" in line.annotations
        assert any(a.startswith(note) for a in line.annotations), (uri, line.annotations)
    assert (trap.connections, trap.paths) == (0, [])
    assert knock.accepted == 0
