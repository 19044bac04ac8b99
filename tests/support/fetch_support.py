"""Helpers for the fetch tests: a processor context, scripted raw-socket servers, certificates."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from crawler import CrawlURI, ProcessorContext
from crawler.history import CrawlHistory
from crawler.order.schema import OperatorConfig
from support.processor_context import make_context


def make_ctx(
    tmp_path: Path,
    *,
    history: CrawlHistory | None = None,
    stopping: threading.Event | None = None,
    **order: Any,
) -> ProcessorContext:
    """A context like the controller's, with a ManualClock and a fresh ServerCache."""
    return make_context(
        tmp_path,
        history=history,
        stopping=stopping,
        operator=OperatorConfig(contact_url="http://x/", from_email="ops@x.example"),
        **order,
    )


def fetch(proc: Any, uri: str) -> CrawlURI:
    """Run FetchHTTP (or another processor) ``proc`` on a new CrawlURI of ``uri``."""
    curi = CrawlURI(uri)
    proc.process(curi)
    return curi


def read_head(conn: socket.socket, limit: int = 65536) -> bytes:
    """Read one request head (through the blank line) from ``conn``."""
    data = b""
    while b"\r\n\r\n" not in data and len(data) < limit:
        part = conn.recv(4096)
        if not part:
            break
        data += part
    return data


class RawServer:
    """A TCP server on 127.0.0.1 answering each connection with ``handle(conn, request_head)``.

    For servers that break HTTP on purpose. ``release`` is set on close so handlers that wait
    on it end; ``heads`` collects every request head received; ``accepted`` counts connections.
    """

    def __init__(self, handle: Callable[[socket.socket, bytes], None]) -> None:
        self.handle = handle
        self.release = threading.Event()
        self.heads: list[bytes] = []
        self.accepted = 0
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.1)
        self.port: int = self._sock.getsockname()[1]
        self._threads: list[threading.Thread] = []
        self._accept = threading.Thread(target=self._serve, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> RawServer:
        self._accept.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._accept.join(5)
        self._sock.close()
        for thread in self._threads:
            thread.join(5)

    def _serve(self) -> None:
        while not self.release.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            thread = threading.Thread(target=self._one, args=(conn,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            try:
                head = read_head(conn)
                self.heads.append(head)
                self.handle(conn, head)
            except OSError:
                pass


def self_signed_cert(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for localhost/127.0.0.1 made with the openssl CLI."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )  # fmt: skip
    return cert, key


class RssSampler:
    """Peak resident-set growth of this process while the ``with`` block runs (Linux)."""

    def __init__(self) -> None:
        self.baseline_kb = self.peak_kb = _rss_kb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak_kb = max(self.peak_kb, _rss_kb())
            time.sleep(0.005)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        self.peak_kb = max(self.peak_kb, _rss_kb())

    @property
    def growth_mb(self) -> float:
        return (self.peak_kb - self.baseline_kb) / 1024


def _rss_kb() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0
