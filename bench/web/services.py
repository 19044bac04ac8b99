"""The synthetic web's servers: a CA and ``*.web.test`` certificate, nginx over TLS, dnsmasq.

* ``make_certificates(dir)`` — openssl CLI: a CA, then a ``*.web.test`` leaf it signs (RSA 2048).
* ``Nginx(prefix, out, port)`` — one nginx (2 workers, its own prefix directory) listening on
  ``127.0.0.1:port`` with TLS 1.2/1.3, a shared session cache and tickets, HTTP/1.1 keep-alive
  (100,000 requests a connection), gzip level 1 for HTML and CSS, SSI for the page templates and
  ``gen_web``'s maps. Logs one line per request to ``access.log`` (buffered), with the
  connection serial and whether the TLS session was resumed.
* ``Dnsmasq(prefix, port)`` — dnsmasq in the foreground on ``127.0.0.1:port``: ``web.test`` and
  every name under it -> 127.0.0.1, anything else refused (no upstream); /etc/resolv.conf and
  /etc/hosts are not read.
* ``Redis(prefix)`` — a redis-server on a free loopback port, no persistence, for the shared
  frontier of ``run_web.py --workers N``; ``used_memory()`` for the bytes it holds.

Each class's ``cpu_s()`` is the CPU its processes ran (for CPU per page on the server side).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

ACCESS_FORMAT = (
    "$msec $status $body_bytes_sent $connection $connection_requests "
    '"$ssl_session_reused" $host "$request"'
)


def make_certificates(directory: Path) -> tuple[Path, Path]:
    """A CA and a ``*.web.test`` certificate it signed: (chain, key); kept between runs."""
    chain, key = directory / "web-chain.pem", directory / "web.key"
    if chain.exists() and key.exists():
        return chain, key
    directory.mkdir(parents=True, exist_ok=True)
    ca, ca_key, csr, leaf = (directory / n for n in ("ca.pem", "ca.key", "web.csr", "leaf.pem"))
    ext = directory / "leaf.ext"
    ext.write_text("subjectAltName=DNS:*.web.test,DNS:web.test\nextendedKeyUsage=serverAuth\n")

    def openssl(*args: object) -> None:
        subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-keyout", ca_key,
            "-out", ca, "-subj", "/CN=web.test bench CA")  # fmt: skip
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr,
            "-subj", "/CN=*.web.test")  # fmt: skip
    openssl("x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
            "-days", "30", "-out", leaf, "-extfile", ext)  # fmt: skip
    chain.write_bytes(leaf.read_bytes() + ca.read_bytes())
    return chain, key


def _tree_cpu_s(pid: int) -> float:
    """CPU seconds of ``pid`` and its children (schedstat, ns)."""
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    total = 0.0
    for p in pids:
        try:
            total += int(Path(f"/proc/{p}/schedstat").read_text().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            continue
    return total


def _wait_port(proc: subprocess.Popen[bytes], port: int, kind: int, what: str) -> None:
    deadline = time.monotonic() + 15
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        try:
            if kind == socket.SOCK_STREAM:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            import dns.message
            import dns.query

            dns.query.udp(dns.message.make_query("h00000.web.test", "A"), "127.0.0.1", 1, port)
            return
        except Exception:  # noqa: BLE001 (any failure: not up yet)
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} does not answer on port {port}") from None
            time.sleep(0.1)


class _Service:
    proc: subprocess.Popen[bytes] | None = None

    def cpu_s(self) -> float:
        return _tree_cpu_s(self.proc.pid) if self.proc is not None else 0.0

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Nginx(_Service):
    def __init__(
        self, prefix: Path, web: Path, port: int, certs: tuple[Path, Path], workers: int = 2
    ) -> None:
        self.prefix, self.web, self.port, self.workers = (
            prefix.resolve(),
            web.resolve(),
            port,
            workers,
        )
        self.certs = (certs[0].resolve(), certs[1].resolve())

    @property
    def access_log(self) -> Path:
        return self.prefix / "access.log"

    def config(self) -> str:
        user = "user root root;\n" if os.geteuid() == 0 else ""
        p = self.prefix
        return f"""{user}worker_processes {self.workers};
daemon off;
pid {p}/nginx.pid;
error_log {p}/error.log warn;
worker_rlimit_nofile 65536;
events {{ worker_connections 16384; }}
http {{
    types {{ text/html html; text/css css; image/png png; text/plain txt; }}
    default_type application/octet-stream;
    log_format web '{ACCESS_FORMAT}';
    access_log {p}/access.log web buffer=256k flush=2s;
    client_body_temp_path {p}/tmp/body;
    proxy_temp_path {p}/tmp/proxy;
    fastcgi_temp_path {p}/tmp/fastcgi;
    uwsgi_temp_path {p}/tmp/uwsgi;
    scgi_temp_path {p}/tmp/scgi;
    sendfile on;
    keepalive_timeout 75;
    keepalive_requests 100000;
    open_file_cache max=1000 inactive=60s;
    gzip on;
    gzip_comp_level 1;
    gzip_min_length 1000;
    gzip_types text/css;
    server_tokens off;
    include {self.web}/nginx-maps.conf;
    server {{
        listen 127.0.0.1:{self.port} ssl reuseport;
        server_name *.web.test;
        ssl_certificate {self.certs[0]};
        ssl_certificate_key {self.certs[1]};
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_session_cache shared:WEB:50m;
        ssl_session_tickets on;
        root {self.web}/site;
        location = / {{ rewrite ^ /t/t0.html last; }}
        location ~ ^/p(\\d+)\\.html$ {{ rewrite ^/p(\\d+)\\.html$ /t/t$1.html last; }}
        location /t/ {{ internal; ssi on; }}
        location /old/ {{ rewrite ^/old/(.*)$ /$1 permanent; }}
        location /err/ {{ return 500; }}
        location = /robots.txt {{ }}
        location /img/ {{ }}
        location /css/ {{ }}
        location / {{ return 404; }}
    }}
}}
"""

    def start(self) -> None:
        (self.prefix / "tmp").mkdir(parents=True, exist_ok=True)
        conf = self.prefix / "nginx.conf"
        conf.write_text(self.config())
        self.access_log.write_bytes(b"")
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        self.proc = subprocess.Popen(
            [binary, "-p", str(self.prefix), "-c", str(conf), "-e", str(self.prefix / "error.log")],
            stdin=subprocess.DEVNULL,
        )
        _wait_port(self.proc, self.port, socket.SOCK_STREAM, f"nginx (see {self.prefix}/error.log)")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(3)  # SIGQUIT: graceful, flushes the buffered log
        super().stop()


def connection_counts(access_log: Path) -> dict[str, int]:
    """Requests, distinct connections and TLS-resumed connections in nginx's access log."""
    requests = 0
    connections: set[str] = set()
    resumed: set[str] = set()
    with access_log.open("rb") as fh:
        for line in fh:
            fields = line.split(b" ", 6)
            if len(fields) < 7:
                continue
            requests += 1
            connections.add(fields[3].decode())
            if fields[5] == b'"r"':
                resumed.add(fields[3].decode())
    return {"requests": requests, "connections": len(connections), "resumed": len(resumed)}


class Dnsmasq(_Service):
    def __init__(self, prefix: Path, port: int) -> None:
        self.prefix, self.port = prefix.resolve(), port

    def start(self) -> None:
        self.prefix.mkdir(parents=True, exist_ok=True)
        binary = shutil.which("dnsmasq") or "/usr/sbin/dnsmasq"
        argv = [
            binary, "--keep-in-foreground", "--conf-file=/dev/null", f"--port={self.port}",
            "--listen-address=127.0.0.1", "--bind-interfaces", "--no-resolv", "--no-hosts",
            "--no-poll", "--address=/web.test/127.0.0.1", "--local-ttl=3600",
            "--cache-size=10000", f"--pid-file={self.prefix}/dnsmasq.pid",
        ]  # fmt: skip
        if os.geteuid() == 0:
            argv.append("--user=root")
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stderr=(self.prefix / "dnsmasq.log").open("wb")
        )
        _wait_port(
            self.proc, self.port, socket.SOCK_DGRAM, f"dnsmasq (see {self.prefix}/dnsmasq.log)"
        )


def free_port() -> int:
    """A TCP port on 127.0.0.1 free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


class Redis(_Service):
    """A throw-away redis-server on 127.0.0.1 (no persistence) for ``--workers`` runs; with
    ``unix``, its clients are given a Unix socket's URL instead of the TCP port's."""

    def __init__(self, prefix: Path, port: int = 0, unix: bool = False) -> None:
        self.prefix, self.port = prefix.resolve(), port or free_port()
        self.socket = self.prefix / "redis.sock" if unix else None

    @property
    def url(self) -> str:
        if self.socket is not None:
            return f"unix://{self.socket}?db=0"
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.prefix.mkdir(parents=True, exist_ok=True)
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        argv = [
            binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.prefix),
            "--save", "", "--appendonly", "no", "--protected-mode", "no",
            "--logfile", str(self.prefix / "redis.log"),
        ]  # fmt: skip
        if self.socket is not None:
            argv += ["--unixsocket", str(self.socket), "--unixsocketperm", "700"]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        _wait_port(self.proc, self.port, socket.SOCK_STREAM, f"redis (see {self.prefix}/redis.log)")

    def used_memory(self) -> int:
        """Bytes Redis holds for data (``INFO memory`` used_memory), 0 if it cannot say."""
        try:
            import redis

            client = redis.Redis(port=self.port, socket_timeout=5)
            try:
                return int(client.info("memory")["used_memory"])
            finally:
                client.close()
        except Exception:  # noqa: BLE001 (a figure for the report, not a failure)
            return 0
