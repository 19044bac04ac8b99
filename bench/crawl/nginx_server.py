"""nginx serving the benchmark corpora on 127.0.0.1, one port per origin, with a parseable log.

``NginxServer(prefix, sites)`` writes ``prefix/nginx.conf`` (its own prefix directory, pid file,
temp paths and logs: nothing of the system's nginx is used) and runs ``nginx`` in the
foreground as a child process. Every request is one access-log line::

    <epoch seconds.millis> "<request line>" <status> <body bytes> <host>:<server port>

``read_log(start, end)`` parses the lines written between two byte offsets of the log, so each
crawl is measured from its own slice of one log.

With ``tls=(certificate chain, key)`` the ports in ``tls_ports`` speak HTTPS (TLS 1.2 and 1.3,
nginx's default session tickets), and a second log, ``connections.log``, gets one line per
request of every port: ``<connection serial> <request number on it> <scheme>
<ssl_session_reused>`` (``r`` for a resumed TLS session, else ``.``), read back by
``read_connections`` — how many connections, and TLS handshakes, a crawl cost.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

LOG_FORMAT = '$msec "$request" $status $body_bytes_sent $host:$server_port'


@dataclass(frozen=True)
class LogEntry:
    """One access-log line: ``url`` is ``http://host:port/target`` as requested."""

    time_s: float
    method: str
    url: str
    status: int
    body_bytes: int


CONNECTION_FORMAT = "$connection $connection_requests $scheme $ssl_session_reused"


def _server_block(port: int, root: Path, tls: tuple[Path, Path] | None = None) -> str:
    listen = f"127.0.0.1:{port} ssl" if tls else f"127.0.0.1:{port}"
    certs = f"ssl_certificate {tls[0]};\n        ssl_certificate_key {tls[1]};" if tls else ""
    return f"""
    server {{
        listen {listen};
        {certs}
        server_name _;
        root {root};
        index index.html;
        disable_symlinks off;
        location / {{ try_files $uri $uri/ =404; }}
    }}"""


def render_config(
    prefix: Path,
    sites: dict[int, Path],
    workers: int,
    tls: tuple[Path, Path] | None = None,
    tls_ports: frozenset[int] = frozenset(),
    keepalive_requests: int = 1_000_000,
) -> str:
    """The whole nginx.conf for ``sites`` (port -> document root); ``tls_ports`` over HTTPS."""
    user = "user root root;\n" if os.geteuid() == 0 else ""
    servers = "".join(
        _server_block(port, root, tls if port in tls_ports else None)
        for port, root in sorted(sites.items())
    )
    conn_log = ""
    if tls is not None:
        conn_log = (
            f"\n    log_format conn '{CONNECTION_FORMAT}';"
            f"\n    access_log {prefix}/connections.log conn;"
            "\n    ssl_protocols TLSv1.2 TLSv1.3;"
        )
    return f"""{user}worker_processes {workers};
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
worker_rlimit_nofile 65536;
events {{ worker_connections 4096; }}
http {{
    types {{
        text/html html htm; text/css css; application/javascript js; image/png png;
        image/svg+xml svg; application/xml xml; text/plain txt py rst;
    }}
    default_type application/octet-stream;
    log_format bench '{LOG_FORMAT}';
    access_log {prefix}/access.log bench;{conn_log}
    client_body_temp_path {prefix}/tmp/body;
    proxy_temp_path {prefix}/tmp/proxy;
    fastcgi_temp_path {prefix}/tmp/fastcgi;
    uwsgi_temp_path {prefix}/tmp/uwsgi;
    scgi_temp_path {prefix}/tmp/scgi;
    sendfile on;
    tcp_nopush on;
    keepalive_timeout 65;
    keepalive_requests {keepalive_requests};
    open_file_cache max=2000 inactive=20s;
    gzip off;
    server_tokens off;{servers}
}}
"""


class NginxServer:
    """Owns one nginx process; ``start()`` returns when every port accepts connections."""

    def __init__(
        self,
        prefix: Path,
        sites: dict[int, Path],
        workers: int = 1,
        tls: tuple[Path, Path] | None = None,
        tls_ports: frozenset[int] = frozenset(),
        keepalive_requests: int = 1_000_000,
    ) -> None:
        self.prefix = prefix.resolve()
        self.sites = sites
        self.workers = workers
        self.tls = tls
        self.tls_ports = tls_ports
        self.keepalive_requests = keepalive_requests
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def connections_log(self) -> Path:
        return self.prefix / "connections.log"

    @property
    def access_log(self) -> Path:
        return self.prefix / "access.log"

    def start(self) -> None:
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        (self.prefix / "tmp").mkdir(parents=True, exist_ok=True)
        conf = self.prefix / "nginx.conf"
        conf.write_text(
            render_config(
                self.prefix,
                self.sites,
                self.workers,
                self.tls,
                self.tls_ports,
                self.keepalive_requests,
            )
        )
        self.access_log.write_bytes(b"")
        self.connections_log.write_bytes(b"")
        self.proc = subprocess.Popen(
            [binary, "-p", str(self.prefix), "-c", str(conf), "-e", str(self.prefix / "error.log")],
            stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        for port in self.sites:
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"nginx exited: see {self.prefix / 'error.log'}")
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"nginx does not listen on {port}") from None
                    time.sleep(0.05)

    def stop(self) -> None:
        """SIGQUIT (graceful), then SIGKILL after 5 s; also reaps the process."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(3)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def log_offset(self) -> int:
        return self.access_log.stat().st_size

    def read_log(self, start: int, end: int | None = None) -> list[LogEntry]:
        """Entries logged between byte offsets ``start`` and ``end`` (default: the end)."""
        with self.access_log.open("rb") as fh:
            fh.seek(start)
            data = fh.read() if end is None else fh.read(end - start)
        return parse_log(data.decode("utf-8", "replace"))


@dataclass(frozen=True)
class ConnectionCounts:
    """Requests, distinct connections and resumed TLS sessions in a slice of connections.log."""

    requests: int
    connections: int
    resumed: int


def read_connections(path: Path, start: int, end: int | None = None) -> ConnectionCounts:
    """Counts of the ``CONNECTION_FORMAT`` lines between byte offsets ``start`` and ``end``.

    A connection is counted once (its serial); one whose first request fell before ``start``
    is counted too, as it served requests of this slice.
    """
    with path.open("rb") as fh:
        fh.seek(start)
        data = fh.read() if end is None else fh.read(end - start)
    serials: set[str] = set()
    resumed: set[str] = set()
    requests = 0
    for line in data.decode("ascii", "replace").splitlines():
        fields = line.split()
        if len(fields) != 4:
            continue
        requests += 1
        serials.add(fields[0])
        if fields[3] == "r":
            resumed.add(fields[0])
    return ConnectionCounts(requests, len(serials), len(resumed))


def parse_log(text: str) -> list[LogEntry]:
    """Parse ``LOG_FORMAT`` lines; malformed lines are skipped."""
    entries = []
    for line in text.splitlines():
        try:
            ts, rest = line.split(' "', 1)
            request, tail = rest.rsplit('" ', 1)
            status, size, hostport = tail.split(" ")
            method, target = request.split(" ", 2)[:2]
        except ValueError:
            continue
        entries.append(
            LogEntry(float(ts), method, f"http://{hostport}{target}", int(status), int(size))
        )
    return entries
