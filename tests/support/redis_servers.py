"""Real redis-server processes for the Redis tests: one standalone server (AOF on, so a restart
keeps the data) or a 3-master Redis Cluster, each on free loopback ports in a temporary directory.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import redis

REDIS_SERVER = shutil.which("redis-server")
REDIS_CLI = shutil.which("redis-cli")
START_TIMEOUT_S = 30.0


def free_port(*, with_bus: bool = False) -> int:
    """A free TCP port on 127.0.0.1 (and, ``with_bus``, port + 10000 free too: the cluster bus)."""
    for _ in range(200):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port: int = sock.getsockname()[1]
        if not with_bus:
            return port
        if port + 10000 > 65535:
            continue
        with socket.socket() as bus:
            try:
                bus.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port pair found")


class RedisServer:
    """One redis-server child process; :meth:`restart` keeps the same port and data directory."""

    def __init__(self, workdir: Path, *, cluster: bool = False, port: int | None = None) -> None:
        if REDIS_SERVER is None:
            raise RuntimeError("redis-server is not installed (apt-get install redis-server)")
        self.workdir = workdir
        self.cluster = cluster
        self.port = port if port is not None else free_port(with_bus=cluster)
        self.proc: subprocess.Popen[bytes] | None = None
        workdir.mkdir(parents=True, exist_ok=True)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        assert REDIS_SERVER is not None
        args = [
            REDIS_SERVER,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.workdir),
            "--save", "",
            "--appendonly", "yes",
            "--appendfsync", "always",
            "--protected-mode", "no",
            "--maxmemory-policy", "noeviction",
            "--logfile", str(self.workdir / "redis.log"),
        ]  # fmt: skip
        if self.cluster:
            args += [
                "--cluster-enabled", "yes",
                "--cluster-config-file", str(self.workdir / "nodes.conf"),
                # no failover is tested: a node starved for a while on a loaded machine is not
                # to be declared failed
                "--cluster-node-timeout", "30000",
            ]  # fmt: skip
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + START_TIMEOUT_S
        client = redis.Redis(port=self.port, socket_connect_timeout=0.5)
        while True:
            try:
                if client.ping():
                    break
            except redis.exceptions.BusyLoadingError:
                pass
            except redis.exceptions.ConnectionError:
                if self.proc.poll() is not None:
                    log = (self.workdir / "redis.log").read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"redis-server exited: {log}") from None
            if time.monotonic() > deadline:
                raise RuntimeError(f"redis-server on port {self.port} did not start")
            time.sleep(0.02)
        client.close()
        return self

    def stop(self) -> None:
        """SIGTERM and wait (AOF is fsynced on every write, so nothing is lost)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()


class RedisClusterServers:
    """Three masters, no replicas, joined with ``redis-cli --cluster create``."""

    def __init__(self, workdir: Path, masters: int = 3) -> None:
        self.nodes = [RedisServer(workdir / f"node{i}", cluster=True) for i in range(masters)]
        self.urls = [node.url for node in self.nodes]

    @property
    def url(self) -> str:
        return self.nodes[0].url

    def start(self) -> RedisClusterServers:
        if REDIS_CLI is None:
            raise RuntimeError("redis-cli is not installed")
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        for node in self.nodes:
            node.start()
        addrs = [f"127.0.0.1:{node.port}" for node in self.nodes]
        subprocess.run(
            [REDIS_CLI, "--cluster", "create", *addrs, "--cluster-yes"],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=60,
        )
        deadline = time.monotonic() + 30
        for node in self.nodes:
            client = redis.Redis(port=node.port)
            while client.cluster("info").get("cluster_state") != "ok":
                if time.monotonic() > deadline:
                    raise RuntimeError("the Redis Cluster did not reach state ok")
                time.sleep(0.05)
            client.close()

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
